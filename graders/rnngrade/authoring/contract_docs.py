"""docs/AUTHORING.md's tables of the lab contract, rendered from ``rnngrade.lab_contract``.

The document marks each table ``<!-- contract:NAME -->`` … ``<!-- /contract -->``;
``rnngrade generate`` writes them (``write_contract_tables``) and ``tests/test_lab_contract.py``
fails when one differs from its rendering (``stale_contract_tables``).
"""

from __future__ import annotations

from pathlib import Path

from rnngrade.lab_contract import render_tables, tables_in, with_tables
from rnngrade.paths import course_root

AUTHORING = Path("docs") / "AUTHORING.md"


def stale_contract_tables(root: Path | None = None) -> list[str]:
    """What differs between the document's contract tables and their rendering, one line each."""
    path = (root or course_root()) / AUTHORING
    if not path.is_file():
        return []
    written, rendered = tables_in(path.read_text(encoding="utf-8")), render_tables()
    return ([f"{path}: the table {name!r} differs from lab_contract's declaration"
             for name in rendered if name in written and written[name] != rendered[name]]
            + [f"{path}: the table {name!r} is missing (mark it <!-- contract:{name} -->)"
               for name in rendered if name not in written]
            + [f"{path}: the table {name!r} is not declared in lab_contract"
               for name in written if name not in rendered])


def write_contract_tables(root: Path | None = None) -> list[Path]:
    """Write the document's contract tables from the declaration (the path when it changed)."""
    path = (root or course_root()) / AUTHORING
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    new = with_tables(text, render_tables())
    if new == text:
        return []
    path.write_text(new, encoding="utf-8")
    return [path]
