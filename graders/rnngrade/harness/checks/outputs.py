"""Which outputs of a function are wrong and which are right, in one sentence.

"`dc_prev` is wrong; `da_prev`, `dxt` and every weight gradient are right": the grader's
localisation (``rnngrade.diagnosis.localise``) and the public tests (``assert_outputs``) both say
it, from comparisons made at the check's own tolerance, so an output is called right only when
the check passes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

MAX_LISTED = 4  # names listed in one sentence before "and N more"
_GROUPS = (("dW", "weight gradient"), ("db", "bias gradient"))


def output_name(label: str, names: tuple[str, ...] | None) -> str:
    """``['dxt']`` → ``dxt``; ``[1]`` → the check's name for it, or "output 2"."""
    keyed = re.fullmatch(r"\['(.+)'\]", label)
    if keyed:
        return keyed.group(1)
    indexed = re.fullmatch(r"\[(\d+)\]", label)
    if indexed:
        i = int(indexed.group(1))
        return names[i] if names and i < len(names) else f"output {i + 1}"
    return "the result"


def listed(items: list[str], words: list[str] | None = None) -> str:
    """```a```, ```a`` and ``b```, ```a``, ``b``, ``c``, ``d`` and 2 more`` (``words``: phrases
    such as "every weight gradient" that end the list)."""
    quoted = [f"`{i}`" for i in items[:MAX_LISTED]]
    if len(items) > MAX_LISTED:
        quoted.append(f"{len(items) - MAX_LISTED} more")
    quoted += words or []
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def grouped(items: list[str], others: list[str]) -> str:
    """``items`` listed, a family of gradients all of which are here as "every weight
    gradient"."""
    words, rest = [], list(items)
    for prefix, word in _GROUPS:
        family = [i for i in rest if i.startswith(prefix)]
        if len(family) >= 2 and not any(o.startswith(prefix) for o in others):
            words.append(f"every {word}")
            rest = [i for i in rest if i not in family]
    return listed(rest, words)


def outputs_sentence(status: Mapping[str, bool], names: tuple[str, ...] | None) -> str:
    """"`dc_prev` is wrong; `da_prev`, `dxt` and every weight gradient are right" ("" when
    the function has one output or none is right). ``status``: {output label: right}, labels
    as ``output_name`` reads them."""
    wrong = [output_name(k, names) for k, ok in status.items() if not ok]
    right = [output_name(k, names) for k, ok in status.items() if ok]
    if not wrong or not right:
        return ""
    verb = "is" if len(wrong) == 1 else "are"
    return (f"{grouped(wrong, right)} {verb} wrong; {grouped(right, wrong)} "
            f"{'is' if len(right) == 1 else 'are'} right")
