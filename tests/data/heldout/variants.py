"""One-bug variants written for issue #36's held-out measurement (``variants.yaml``), in the
format of tests/data/unseen (its loader reads them: the same fields, the same meaning)."""

from __future__ import annotations

from pathlib import Path

import yaml

from ..unseen.variants import Unseen, _unseen

HELDOUT: list[Unseen] = [_unseen(entry) for entry in
                         yaml.safe_load(Path(__file__).with_suffix(".yaml").read_text(
                             encoding="utf-8"))]
