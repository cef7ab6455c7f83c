"""Lab 10's optional log model (ungraded): the reference's data layout, closing-tag measure and
training set-up (fast), and the comparison of the course document, a vanilla RNN against an LSTM
with forget bias 1 over 2,500 updates (slow, about 45 CPU-seconds on one thread)."""

import math
import re
import time

import numpy as np
import pytest
import torch

from rnngrade.diagnosis.mutants import load_source_as_module, strip_markers
from rnngrade.labs import get_lab

LAB = get_lab("lab10")


@pytest.fixture(scope="module")
def m():
    source = strip_markers(LAB.solution_path().read_text(encoding="utf-8"))
    return load_source_as_module(source, "_lab10_reference_log_model")


pytestmark = pytest.mark.usefixtures("one_thread")  # the figures were measured on one thread


def test_the_log_and_its_streams(m):
    text = m.make_log(1500, 0)
    assert len(text) == 46_196 and text.endswith("\n")  # the course document's count
    lines = text.split("\n")[:-1]
    assert len(lines) == 1500
    parsed = [m.LINE.match(line) for line in lines]
    assert all(parsed)
    assert all(p.group(1) == p.group(6) for p in parsed)  # every opened tag is closed
    assert {p.group(1) for p in parsed} == set(m.TAGS)

    chars, streams_x, streams_y, val = m.log_streams(text, 32)
    assert len(chars) == 37 and chars == sorted(set(text)) and chars[0] == "\n"
    # 41,577 training and 4,619 validation characters; 32 streams of (41,577 − 1) // 32 tokens
    assert streams_x.shape == streams_y.shape == (32, 1299)
    assert val.shape == (4619,)
    assert streams_x.dtype == streams_y.dtype == val.dtype == torch.int64
    decode = "".join
    assert decode(chars[i] for i in val.tolist()) == text[-4619:]
    for b in (0, 1, 31):  # row b is the b-th consecutive window; the targets one token later
        start = b * 1299
        assert decode(chars[i] for i in streams_x[b].tolist()) == text[start: start + 1299]
        assert decode(chars[i] for i in streams_y[b].tolist()) == text[start + 1: start + 1300]


def test_closing_tag_accuracy_drops_the_cut_lines_and_ignores_malformed_ones(m):
    good, wrong = "P1 temp 80.7 C high /P1", "F2 pres 4.0 bar night shift ok /C1"
    assert m.closing_tag_accuracy(f"cut\n{good}\n{wrong}\n{good}\nP1 te") == pytest.approx(2 / 3)
    # the first and the last line may be cut off, so they never count, even when well-formed
    assert m.closing_tag_accuracy(f"{wrong}\n{good}\n{wrong}") == 1.0
    malformed = ["P1 vib 1.0 mm/s ok", "P9 temp 41.0 C ok /P9", "P1 temp 41 C ok /P1"]
    assert math.isnan(m.closing_tag_accuracy("\n".join([good, *malformed, good])))
    assert math.isnan(m.closing_tag_accuracy(""))


def test_the_first_updates_follow_the_documented_set_up(m):
    """42 updates: one pass over the 40 chunks, then the wrap-around, where the state restarts
    from zero. Sampling the 4,000 characters costs most of the second this takes."""
    history, accuracy = m.train_log_model("lstm", 1.0, 42)
    losses = history["losses"]
    assert len(losses) == 42 and history["checks"] == []
    assert all(isinstance(x, float) and math.isfinite(x) for x in losses)
    # At initialisation the head's logits are small, so the first loss is near ln V = 3.61.
    assert abs(losses[0] - math.log(37)) < 0.1
    assert losses[1] < losses[0] and max(losses[-5:]) < 0.5 * losses[0]
    # The reference's own figures (one thread). The first two pin the model's construction
    # order, the forget bias, the first chunk, the loss and one Adam step: 1e-5 allows for
    # float32 summation order on another machine. Updates 41 and 42 come after forty Adam steps,
    # which may amplify that rounding, hence 1e-4; a state carried over the wrap-around moves
    # update 41 by 9%, AdamW in place of Adam moves both by 1e-3.
    np.testing.assert_allclose(losses[:2], [3.6147683, 3.5292585], rtol=1e-5)
    np.testing.assert_allclose(losses[40:], [1.4061334, 1.1698043], rtol=1e-4)
    # A model this young writes few well-formed lines; their share of matching tags is not
    # pinned, since a sample amplifies any rounding into other characters.
    assert math.isnan(accuracy) or 0.0 <= accuracy <= 1.0


@pytest.mark.slow
def test_an_lstm_closes_its_tags_where_a_vanilla_rnn_does_not(m):
    """The course document's comparison (实验2 step 4): 2,500 updates each. The seed reports the
    RNN at 14–25% and LSTMs at 64–96%; another torch version gave the LSTM 54–61%, so the
    thresholds are loose. Which forget bias wins is not stable across seeds and is not tested."""
    results = {}
    for kind in ("rnn", "lstm"):
        wall, cpu = time.perf_counter(), time.process_time()
        history, accuracy = m.train_log_model(kind, 1.0, 2500)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        results[kind] = accuracy
        checks = ", ".join(f"{u}: val {v:.3f} tags {a:.1%}" for u, v, a in history["checks"])
        print(f"\n{kind}: closing-tag accuracy {accuracy:.1%}  ({checks})  "
              f"wall {wall:.1f} s, CPU {cpu:.1f} s")
        assert len(history["losses"]) == 2500 and len(history["checks"]) == 5
        assert history["checks"][-1][2] == accuracy or math.isnan(accuracy)
    rnn, lstm = results["rnn"], results["lstm"]
    assert lstm >= 0.40 and lstm >= 2 * rnn, (rnn, lstm)
    assert rnn <= 0.30, (rnn, lstm)


def test_the_readme_marks_the_log_model_optional():
    readme = (LAB.assignment_dir() / "README.md").read_text(encoding="utf-8")
    heading = next(line for line in readme.splitlines()
                   if line.startswith("## ") and "train_log_model" in line)
    assert re.search(r"optional", heading, re.IGNORECASE)
    assert "train_log_model" not in LAB.functions  # ungraded: a submission may leave it out
