"""Generated files (stubs, public vectors, sample submissions) match the references."""

import pytest

from rnngrade.authoring.generate import stale_files
from rnngrade.labs import available_labs, get_lab
from tests.shared_public_fixtures import share_public_fixtures


@pytest.mark.parametrize("lab", available_labs(), ids=lambda lab: lab.name)
def test_generated_files_are_up_to_date(lab, tmp_path_factory):
    # the release build (tests/release/conftest.py) computes the same vectors, maybe in another
    # worker: the first of the two computes them, the other reads them
    share_public_fixtures(lab, tmp_path_factory.getbasetemp().parent / "public-fixtures")
    problems = stale_files(lab)
    assert not problems, "stale generated files (run `rnngrade generate`):\n" + "\n".join(problems)


def test_a_changed_reference_makes_the_stub_stale(course_copy):
    lab = get_lab("lab1")
    path = lab.solution_path(course_copy)
    path.write_text(path.read_text().replace("Softmax over axis 0", "Softmax along axis 0"))
    problems = stale_files(lab, course_copy)
    assert any("assignments/lab1/rnn.py" in p for p in problems)


def test_an_edited_reference_makes_its_vectors_stale_in_the_same_process(course_copy):
    """The vectors are computed once per process for the same inputs: an edit of the reference
    after a first check is seen by the next."""
    lab = get_lab("lab1")
    assert not [p for p in stale_files(lab, course_copy) if "fixtures/public" in p]
    path = lab.solution_path(course_copy)
    path.write_text(path.read_text().replace("a_next = np.tanh(pre_activation)",
                                             "a_next = np.tanh(2 * pre_activation)"))
    problems = stale_files(lab, course_copy)
    assert any("fixtures/public/lab1.npz differs" in p for p in problems), problems
