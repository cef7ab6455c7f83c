"""Cheating submissions, written as edits of a lab's reference: each replaces one graded function
by a cheat that reaches for what the worker holds or fabricates what a test measures."""

from __future__ import annotations

import re

from rnngrade.diagnosis.mutants import strip_markers
from rnngrade.labs import Lab

# lab9: adam_step answered by whatever the worker holds that looks like an Adam step, or by any
# callable of the lab's helpers (found through the garbage collector).
ADAM_FROM_GC = '''
def adam_step(params, grads, state, step, lr=3e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    import gc
    import types
    found = [o for o in gc.get_objects() if isinstance(o, types.FunctionType)]
    adam_like = [f for f in found if "adam" in f.__name__.lower() and f.__name__ != "adam_step"]
    helpers = [f for f in found if f.__globals__.get("__name__") == "rnngrade_lab_helpers"
               or "helpers" in f.__code__.co_filename]
    for f in adam_like + helpers:
        try:
            return f(params, grads, state, step, lr, beta1, beta2, eps)
        except Exception:
            continue
    raise RuntimeError("no Adam to borrow")
'''

# lab9: an error quoting every docstring the worker holds of grader code beside the student's.
DOCSTRINGS_FROM_GC = '''
def adam_step(params, grads, state, step, lr=3e-3, beta1=0.9, beta2=0.999, eps=1e-8):
    import gc
    import types
    docs = []
    for f in gc.get_objects():
        if not isinstance(f, types.FunctionType):
            continue
        if (f.__globals__.get("__name__") == "rnngrade_lab_helpers"
                or "helpers" in f.__code__.co_filename or "suites" in f.__code__.co_filename):
            for doc in (f.__doc__, f.__globals__.get("__doc__")):
                if doc and doc not in docs:
                    docs.append(doc)
    raise RuntimeError("LEAK " + " || ".join(docs))
'''

# lab11: decodes nothing (BOS fed at every step) and draws the attention on the anti-diagonal.
GREEDY_FABRICATED = '''
def greedy_decode_batch(params, src, lens, steps=13, attention=True):
    with torch.no_grad():
        H, mask, s = encode(params, src, lens)
        y = torch.full((src.shape[0],), BOS, dtype=torch.long)
        tokens = []
        for _ in range(steps):
            logits, s, _ = decoder_step(params, s, y, H, mask, attention)
            tokens.append(logits.argmax(dim=-1))
        alphas = torch.zeros(src.shape[0], steps, src.shape[1], dtype=H.dtype)
        for i, L in enumerate(lens.tolist()):
            for t in range(min(steps, L)):
                alphas[i, t, L - 1 - t] = 1.0
            for t in range(L, steps):
                alphas[i, t, 0] = 1.0
        return torch.stack(tokens, dim=1), alphas
'''


def with_function(lab: Lab, cheat: str) -> str:
    """The lab's reference (markers stripped) with one top-level function replaced by
    ``cheat``'s."""
    return replace_function(strip_markers(lab.solution_path().read_text(encoding="utf-8")),
                            cheat)


def replace_function(source: str, cheat: str) -> str:
    """``source`` with the top-level function that ``cheat`` defines replaced by it."""
    name = re.search(r"^def (\w+)\(", cheat, re.M).group(1)  # type: ignore[union-attr]
    start = re.search(rf"^def {name}\(", source, re.M).start()  # type: ignore[union-attr]
    following = re.compile(r"^(def |class |@|[A-Za-z_]\w* *=)", re.M).search(source, start + 1)
    end = following.start() if following else len(source)
    return source[:start] + cheat.lstrip("\n") + "\n\n" + source[end:]
