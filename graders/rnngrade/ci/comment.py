"""The pull-request comment (and job summary): every graded lab's feedback in one Markdown body."""

from __future__ import annotations

from rnngrade.ci.github import MARKER
from rnngrade.results.model import GradeResult
from rnngrade.results.render import Audience, prepared, render

COMMENT_LIMIT = 60 * 1024  # GitHub takes 65,536 characters; stay well below in bytes


def render_pr_comment(results: list[GradeResult], problems: list[tuple[str, str]] | None = None,
                      *, sha: str = "", source: str = "", limit: int = COMMENT_LIMIT) -> str:
    """The comment body: marker, score table, each lab's feedback as a student may see it
    (``render.prepared``); shortened to ``limit`` bytes (first without the failure details,
    then cut)."""
    context = dict(marker=MARKER, results=[prepared(r, Audience.STUDENT) for r in results],
                   problems=problems or [], sha=sha, source=source)
    text = render("pr_comment.md.j2", detail=True, truncated=False, **context)
    if len(text.encode()) > limit:
        text = render("pr_comment.md.j2", detail=False, truncated=True, **context)
    if len(text.encode()) > limit:
        cut = text.encode()[: limit - 300].decode(errors="ignore")
        text = cut + "\n\n… (feedback cut to fit a comment; the full reports are in the " \
                     "`feedback` artifact of the grading run)\n"
    return text
