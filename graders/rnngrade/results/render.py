"""Rendering a GradeResult with the Jinja2 templates in ``templates/``.

Every report goes through ``prepared``: the result is cleaned (``sanitize.clean_result``: the
one boundary for text the submission controls), unless it comes marked as cleaned already
(``sanitize.Cleaned``: made where a result crosses from the worker into the gradebook), and for
the reports a student reads reduced to what the rubric's visibility lets them see
(``visibility.student_view``). The templates then escape for their format: HTML and XML by
Jinja2's autoescape, Markdown with the ``md_inline`` and ``md_code`` filters (``escape``), JSON
by ``tojson``.
"""

from __future__ import annotations

import json
from enum import Enum
from functools import cache
from pathlib import Path

import jinja2

from rnngrade.diagnosis.feedback import fix_sections
from rnngrade.files import write_atomic
from rnngrade.harness.formatting import format_points
from rnngrade.paths import templates_dir
from rnngrade.results.escape import md_code, md_inline
from rnngrade.results.gradescope import overall_output, results_json, test_output
from rnngrade.results.model import GradeResult
from rnngrade.results.plots import outcome_figure, svg_figure, svg_histogram
from rnngrade.results.sanitize import Cleaned, clean_result
from rnngrade.results.visibility import student_view

MARKDOWN_LIMIT = 60 * 1024  # GitHub comments take 65,536 characters; keep room for a wrapper
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "results.schema.json"


class Audience(Enum):
    STUDENT = "student"  # feedback.html, feedback.md, junit.xml, the pull-request comment
    INSTRUCTOR = "instructor"  # results.json (Gradescope applies its visibility field)


def prepared(result: GradeResult | Cleaned, audience: Audience) -> GradeResult:
    """``result`` cleaned (unless it is ``Cleaned`` already), and for a student reduced to what
    they may see."""
    cleaned = result.result if isinstance(result, Cleaned) else clean_result(result)
    return student_view(cleaned) if audience is Audience.STUDENT else cleaned


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
    env.filters["md_inline"] = md_inline
    env.filters["md_code"] = md_code
    env.globals["test_output"] = test_output
    env.globals["fix_sections"] = fix_sections
    env.globals["outcome_figure"] = outcome_figure
    env.globals["svg_figure"] = svg_figure
    env.globals["svg_histogram"] = svg_histogram
    return env


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)


def render_results_json(result: GradeResult | Cleaned) -> str:
    return results_json(prepared(result, Audience.INSTRUCTOR))


def render_feedback_html(result: GradeResult | Cleaned) -> str:
    return _feedback_html(prepared(result, Audience.STUDENT))


def render_feedback_md(result: GradeResult | Cleaned, limit: int = MARKDOWN_LIMIT) -> str:
    return _feedback_md(prepared(result, Audience.STUDENT), limit)


def render_junit(result: GradeResult | Cleaned) -> str:
    return _junit(prepared(result, Audience.STUDENT))


def _feedback_html(shown: GradeResult) -> str:
    return render("feedback.html.j2", r=shown, summary=overall_output(shown))


def _feedback_md(shown: GradeResult, limit: int = MARKDOWN_LIMIT) -> str:
    text = render("feedback.md.j2", r=shown, detail=True)
    if len(text.encode()) > limit:
        text = render("feedback.md.j2", r=shown, detail=False)
    if len(text.encode()) > limit:
        text = text.encode()[: limit - 200].decode(errors="ignore") + \
            "\n\n… (feedback truncated; see feedback.html for every test)\n"
    return text


def _junit(shown: GradeResult) -> str:
    return render("junit.xml.j2", r=shown)


def write_reports(result: GradeResult | Cleaned, out: Path) -> dict[str, Path]:
    """Write results.json, feedback.html, feedback.md and junit.xml into ``out`` (atomically)."""
    out.mkdir(parents=True, exist_ok=True)
    everything = prepared(result, Audience.INSTRUCTOR)
    shown = student_view(everything)
    files = {
        "results.json": results_json(everything),
        "feedback.html": _feedback_html(shown),
        "feedback.md": _feedback_md(shown),
        "junit.xml": _junit(shown),
    }
    return {name: write_atomic(out / name, text) for name, text in files.items()}


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
