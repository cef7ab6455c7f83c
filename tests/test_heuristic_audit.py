"""Every structural and heuristic diagnosis, run over every known mistake of every lab with the
known mistakes themselves switched off: what fires must describe that mistake (its name or one of
its declared ``patterns``), or stay silent; a localisation (where inside a function the values go
wrong) and an edit of the reference's formula that gives the wrong value may only speak of the
mistake's own function. A misleading hint is a defect."""

import dataclasses

import pytest

from rnngrade.diagnosis.mutants import load_mutant_table
from rnngrade.grading import plugin as grading_plugin
from rnngrade.grading.engine import grade
from rnngrade.labs import available_labs

LABS = [lab for lab in available_labs() if (lab.mutants_path()).exists()]


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.name)
def test_what_fires_without_known_mistakes_agrees_with_the_mistake(lab, tmp_path, monkeypatch):
    assets = grading_plugin._assets
    monkeypatch.setattr(grading_plugin, "_assets",
                        lambda item: dataclasses.replace(assets(item), mutants=()))
    source = lab.solution_path().read_text()
    wrong = []
    for mutant in load_mutant_table(lab.mutants_path()).mutants:
        folder = tmp_path / mutant.name
        folder.mkdir()
        (folder / lab.filename).write_text(mutant.apply(source))
        result = grade(folder, lab.name, inprocess=True, device="cpu")
        allowed = {mutant.name, *mutant.patterns}
        wrong += [f"{mutant.name}: {t.name} says {d.name} ({d.evidence})"
                  for t in result.tests if t.outcome not in ("passed", "skipped")
                  for d in t.diagnosis if d.name not in allowed
                  and not (d.source in ("localised", "edit") and d.function == mutant.function)]
    assert not wrong, "\n".join(wrong)
