"""Rendering a GradeResult with the Jinja2 templates in ``templates/``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jinja2

from rnngrade.diagnosis.feedback import fix_sections
from rnngrade.formatting import format_points
from rnngrade.paths import templates_dir
from rnngrade.results.gradescope import overall_output, test_output, to_gradescope
from rnngrade.results.model import GradeResult

MARKDOWN_LIMIT = 60 * 1024  # GitHub comments take 65,536 characters; keep room for a wrapper
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "results.schema.json"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=jinja2.select_autoescape(["html", "xml", "html.j2", "xml.j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["num"] = format_points
    env.filters["md_escape"] = lambda s: str(s).replace("|", "\\|").replace("\n", "<br>")
    env.globals["test_output"] = test_output
    env.globals["fix_sections"] = fix_sections
    return env


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)


def render_results_json(result: GradeResult) -> str:
    return render("results.json.j2", data=to_gradescope(result))


def render_feedback_html(result: GradeResult) -> str:
    return render("feedback.html.j2", r=result, summary=overall_output(result))


def render_feedback_md(result: GradeResult, limit: int = MARKDOWN_LIMIT) -> str:
    text = render("feedback.md.j2", r=result, detail=True)
    if len(text.encode()) > limit:
        text = render("feedback.md.j2", r=result, detail=False)
    if len(text.encode()) > limit:
        text = text.encode()[: limit - 200].decode(errors="ignore") + \
            "\n\n… (feedback truncated; see feedback.html for every test)\n"
    return text


def render_junit(result: GradeResult) -> str:
    return render("junit.xml.j2", r=result)


def write_reports(result: GradeResult, out: Path) -> dict[str, Path]:
    """Write results.json, feedback.html, feedback.md and junit.xml into ``out`` (atomically)."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "results.json": render_results_json(result),
        "feedback.html": render_feedback_html(result),
        "feedback.md": render_feedback_md(result),
        "junit.xml": render_junit(result),
    }
    written = {}
    for name, text in files.items():
        path = out / name
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written[name] = path
    return written


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
