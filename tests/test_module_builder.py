"""Building a module from submission source the way a careful TA would read it."""

import ast

import numpy as np
import pytest

from rnngrade.harness.runner.base import EXCEPTION, LOAD_ERROR, MISSING_FUNCTION, StudentError
from rnngrade.harness.runner.inprocess import InProcessRunner
from rnngrade.harness.source.module_builder import build_module, salvage
from rnngrade.lab_helpers import lab_helpers

# The platform modules of a lab that grades neither softmax nor sigmoid (the classic rnn_utils
# whole), and lab 1's, which grades softmax.
LAB2 = lab_helpers("lab2").registry
LAB1 = lab_helpers("lab1").registry


def test_np_is_available_without_import():
    built = build_module("def f(x):\n    return np.sum(x)\n", "rnn.py")
    assert built.module.f(np.ones(3)) == 3.0


def test_platform_helper_modules_resolve_to_platform_modules():
    source = ("from rnn_utils import *\nfrom public_tests import *\n"
              "from test_utils import comparator, summary\n"
              "rnn_cell_forward_tests(None)\nsummary([1, 2])\n"
              "def f(x):\n    return softmax(x), sigmoid(0.0)\n")
    built = build_module(source, "rnn.py", lab_modules=LAB2.modules)
    probabilities, half = built.module.f(np.array([[1.0], [1.0]]))
    assert np.allclose(probabilities, 0.5) and half == 0.5
    # the stand-in's functions are not the student's: the grader no longer finds them, the
    # student's own code still calls them, and one note says where they came from
    assert "softmax" not in vars(built.module) and "sigmoid" not in vars(built.module)
    assert built.notes == ["`softmax` and `sigmoid` come from `rnn_utils` (the course platform's "
                           "helper module, which the grader provides), not from your file: if "
                           "the lab asks for one of them, its tests score as missing; your own "
                           "functions still call them"]


def test_a_function_of_ones_own_named_like_a_platform_function_is_kept():
    source = ("from rnn_utils import *\n"
              "def softmax(x):\n    return np.exp(x) / np.exp(x).sum(axis=0)\n")
    built = build_module(source, "rnn.py", lab_modules=LAB2.modules)
    assert callable(vars(built.module)["softmax"])
    assert [note.split(" (")[0] for note in built.notes] == ["`sigmoid` comes from `rnn_utils`"]


def test_a_syntax_error_is_named_with_its_line_and_the_rest_still_graded():
    source = ('def good(x):\n    return x + 1\n\n'
              'def broken(x)\n    return x\n\n'
              'def after(x):\n    s = """\ntext at column 0\n"""\n    return s\n')
    built = build_module(source, "rnn.py")
    assert built.notes == ["lines 4-5 do not parse as Python and were skipped (line 4: "
                           "SyntaxError: expected ':' in `def broken(x)`) — they define "
                           "`broken`, which cannot be graded; the rest of the file is graded"]
    assert built.module.good(1) == 2 and "text" in built.module.after(0)
    with pytest.raises(SyntaxError, match=r"`broken` cannot be graded: line 4: expected ':'"):
        built.module.broken(1)


def test_pasted_output_is_skipped_and_defs_that_parse_are_kept():
    source = ("import numpy as np\n\ndef good(x):\n    return x + 1\n\n"
              "a_next[4] = [-0.42 0.13]\nOut[3]: (5, 10)\n\n"
              "def also_good(x):\n    return 2 * x\n")
    kept = salvage(source)
    salvaged, notes = kept.source, kept.notes
    assert "def good" in salvaged and "def also_good" in salvaged
    assert notes == ["line 6 does not parse as Python and was skipped (line 6: SyntaxError: "
                     "invalid syntax. Perhaps you forgot a comma? in `a_next[4] = [-0.42 0.13]`)"]
    built = build_module(source, "rnn.py")
    assert built.module.good(1) == 2 and built.module.also_good(2) == 4
    # `Out[3]: (5, 10)` parses (an annotation) but fails when run: noted, and the rest still runs
    assert any(n.startswith("line 7: top-level code raised NameError") for n in built.notes)


def test_a_top_level_error_keeps_every_function_and_is_noted():
    built = build_module("def f():\n    return 1\n\nraise ValueError('oops')\n\n"
                         "def g():\n    return 2\n", "rnn.py")
    assert built.module.f() == 1 and built.module.g() == 2
    assert "ValueError: oops" in built.notes[0] and built.notes[0].startswith("line 4")


def test_runner_reports_missing_functions_removed_aliases_and_load_errors():
    runner = InProcessRunner.from_source("def f(x):\n    return np.float(x)\n", "rnn.py")
    with pytest.raises(StudentError) as missing:
        runner.call("g")
    assert missing.value.kind == MISSING_FUNCTION and "`g`" in missing.value.message
    with pytest.raises(StudentError) as alias:
        runner.call("f", (1,))
    assert alias.value.kind == EXCEPTION
    assert "removed from NumPy in 1.24" in alias.value.message and "`float`" in alias.value.message
    null = InProcessRunner.from_source("x = 1\x00\n", "rnn.py")
    with pytest.raises(StudentError) as load:
        null.call("f")
    assert load.value.kind == LOAD_ERROR and "NUL bytes" in load.value.message


def test_a_crash_on_a_none_placeholder_reads_as_unfinished():
    runner = InProcessRunner.from_source("def f(x):\n    g = None\n    return g['dx']\n",
                                         "bptt.py")
    with pytest.raises(StudentError) as crash:
        runner.call("f", (1,))
    assert "looks unfinished" in crash.value.message


def test_runner_calls_on_copies_and_reports_the_arguments_after_the_call():
    runner = InProcessRunner.from_source("def f(a):\n    a[0] = 9\n    return a.sum()\n", "m.py")
    original = np.zeros(3)
    result = runner.call("f", (original,))
    assert original[0] == 0 and result.args_after[0][0] == 9 and result.value == 9


def test_a_function_that_timed_out_is_not_run_again():
    from rnngrade.harness.runner.base import TIMEOUT, CallResult
    from rnngrade.harness.runner.proxy import ModuleProxy

    class SlowRunner:
        calls = 0

        def call(self, function, args=(), kwargs=None, *, timeout=None):
            SlowRunner.calls += 1
            if function == "loop":
                raise StudentError(TIMEOUT, "timed out after 10 s", function=function)
            return CallResult(1)

    proxy = ModuleProxy(SlowRunner())
    for _ in range(3):
        with pytest.raises(StudentError) as error:
            proxy.loop()
        assert error.value.kind == TIMEOUT and "timed out after 10 s" in error.value.message
    assert "earlier case" in error.value.message
    assert proxy.fine() == 1
    assert SlowRunner.calls == 2  # one real timeout, then no more calls of `loop`


@pytest.mark.parametrize("body, kind", [("    return x['a'] + 1\n", EXCEPTION),
                                        ("    raise NotImplementedError\n", "not_implemented")])
def test_pdb_post_mortem_stops_in_the_students_frame(body, kind):
    """`pytest --pdb` opens the debugger at the last frame of the failure's traceback: for an
    error in student code that frame is the student's function, not the harness."""
    runner = InProcessRunner.from_source("def f(x):\n" + body, "/course/rnn.py", capture=False)
    with pytest.raises(StudentError) as failure:
        runner.call("f", (np.zeros(3),))
    assert failure.value.kind == kind
    tb = failure.value.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert (tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_name) == ("/course/rnn.py", "f")


def test_a_function_only_a_platform_module_defines_scores_as_missing_and_says_where_it_came_from():
    """Every place that reports a missing function (a direct call, a helper's lookup) names the
    helper module the only definition came from."""
    runner = InProcessRunner.from_source("from rnn_utils import *\n", "rnn.py", helpers=LAB1)
    for call in (lambda: runner.call("softmax", (np.zeros((2, 3)),)),
                 lambda: runner.call_helper("call_each", ("softmax", [(np.zeros((2, 3)),)]))):
        with pytest.raises(StudentError) as failure:
            call()
        assert failure.value.kind == MISSING_FUNCTION
        assert failure.value.message.startswith("the submission does not define `softmax`: the "
                                                "`softmax` your file uses comes from `rnn_utils`")
    with pytest.raises(StudentError) as failure:
        runner.call("rnn_forward", ())
    assert failure.value.message == "the submission does not define `rnn_forward`"


def test_the_salvaged_tree_is_the_kept_source_parsed_and_building_from_it_changes_nothing():
    source = ("def good(x):\n    return x + 1\n\ndef broken(x)\n    return x\n\n"
              "def after(x):\n    return 3 * x\n")
    kept = salvage(source)
    assert kept.tree is not None
    assert ast.dump(kept.tree) == ast.dump(ast.parse(kept.source))
    assert [f.name for f in kept.tree.body] == ["good", "after"]
    given, own = build_module(source, "rnn.py", salvaged=kept), build_module(source, "rnn.py")
    assert given.notes == own.notes and given.fatal == own.fatal is None
    assert given.module.good(1) == own.module.good(1) == 2
    assert given.module.after(1) == own.module.after(1) == 3
    with pytest.raises(SyntaxError, match="`broken` cannot be graded"):
        given.module.broken(1)
    whole = salvage("def f():\n    return 1\n")
    assert whole.notes == [] and [f.name for f in whole.tree.body] == ["f"]


def test_a_docstring_s_text_at_column_0_is_not_read_as_code():
    """A module docstring of many paragraphs (more than salvage merges) and one broken def: the
    note names the def alone, and every other function is kept."""
    paragraphs = "\n\n".join(f"Part {i}: shapes → (n_a, m), as in the README's figure {i}."
                             for i in range(20))
    source = (f'"""Lab 1 — my solution.\n\n{paragraphs}\n"""\n\nimport numpy as np\n\n\n'
              "def good(x):\n    return x + 1\n\n\ndef broken(x)\n    return x\n\n\n"
              "def after(x):\n    return 2 * x\n")
    kept = salvage(source)
    assert len(kept.notes) == 1
    line = source.splitlines().index("def broken(x)") + 1
    assert kept.notes[0].startswith(f"lines {line}-{line + 1} do not parse as Python and were "
                                    f"skipped (line {line}: SyntaxError: expected ':'")
    assert [d.name for d in kept.definitions] == ["broken"]
    built = build_module(source, "rnn.py")
    assert built.module.good(1) == 2 and built.module.after(1) == 2
    assert built.module.__doc__ is None or "Part 19" in built.module.__doc__


def test_rnn_utils_gives_no_softmax_in_a_lab_that_grades_it():
    """Lab 1 grades softmax: a wrapper of rnn_utils' softmax answers nothing, and a function of
    the student's that calls softmax from rnn_utils raises until the grader stands in for it;
    sigmoid still works."""
    source = ("import rnn_utils\nfrom rnn_utils import *\n"
              "def softmax_of_theirs(x):\n    return rnn_utils.softmax(x)\n"
              "def cell(x):\n    return softmax(x)\n"
              "def gate(x):\n    return sigmoid(x)\n")
    built = build_module(source, "rnn.py", lab_modules=LAB1.modules)
    for call in (built.module.softmax_of_theirs, built.module.cell):
        with pytest.raises(NameError, match="`rnn_utils` gives no `softmax` in a lab that "
                                            "grades it"):
            call(np.zeros((2, 1)))
    assert built.module.gate(0.0) == 0.5
    assert [note.split(" (")[0] for note in built.notes] == [
        "`softmax` and `sigmoid` come from `rnn_utils`"]
