"""The picture of a test graded by outcome: the student's curve beside the reference's, as a
small inline SVG for ``feedback.html``.

Built from numbers only: every coordinate is a float formatted here, every label goes through
``html.escape``, and a curve has at most ``CURVE_POINTS`` points (``sanitize.clean_curve``), so
the picture stays a few kilobytes whatever the submission returned.
"""

from __future__ import annotations

import html

from markupsafe import Markup

from rnngrade.results.model import Measurement
from rnngrade.results.sanitize import clean_curve, clean_number

WIDTH, HEIGHT = 480, 220
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 14, 40  # margins around the plotting area
STUDENT_COLOUR, REFERENCE_COLOUR, BAND_COLOUR = "#0969da", "#57606a", "#cf222e"


def _points(values: list[float], low: float, high: float) -> str:
    """The polyline of ``values`` spread over the plotting area's width."""
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = width / max(1, len(values) - 1)
    span = (high - low) or 1.0
    return " ".join(f"{LEFT + i * step:.1f},{TOP + height * (high - v) / span:.1f}"
                    for i, v in enumerate(values))


def _text(x: float, y: float, words: str, anchor: str = "start", colour: str = "#1f2328"
          ) -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="11" text-anchor="{anchor}" '
            f'fill="{colour}">{html.escape(words)}</text>')


def curve_svg(m: Measurement) -> Markup:
    """The SVG of ``m``'s curves and its band ("" when it has no curve)."""
    student, reference = clean_curve(m.curve), clean_curve(m.reference_curve)
    if not student and not reference:
        return Markup("")
    threshold = clean_number(m.threshold)
    values = student + reference + ([threshold] if threshold is not None else [])
    low, high = min(values), max(values)
    margin = 0.05 * ((high - low) or 1.0)
    low, high = low - margin, high + margin
    bottom = HEIGHT - BOTTOM
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-label="{html.escape(m.curve_label or m.name)}">',
             f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - RIGHT}" '
             f'height="{bottom - TOP}" fill="#fff" stroke="#d0d7de"/>',
             _text(LEFT - 4, TOP + 10, f"{high:.3g}", "end"),
             _text(LEFT - 4, bottom, f"{low:.3g}", "end")]
    if threshold is not None:
        y = TOP + (bottom - TOP) * (high - threshold) / (high - low)
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="{BAND_COLOUR}" stroke-dasharray="2 3"/>')
        parts.append(_text(WIDTH - RIGHT - 4, y - 4, f"band: {m.bound} {m.band()} "
                           f"({m.name})", "end", BAND_COLOUR))
    if reference:
        parts.append(f'<polyline fill="none" stroke="{REFERENCE_COLOUR}" stroke-width="1.5" '
                     f'stroke-dasharray="5 3" points="{_points(reference, low, high)}"/>')
    if student:
        parts.append(f'<polyline fill="none" stroke="{STUDENT_COLOUR}" stroke-width="2" '
                     f'points="{_points(student, low, high)}"/>')
    parts.append(_text(LEFT, HEIGHT - 22, m.curve_label or m.name))
    parts.append(_text(LEFT, HEIGHT - 6, "— yours", colour=STUDENT_COLOUR))
    parts.append(_text(LEFT + 70, HEIGHT - 6, "- - the reference solution",
                       colour=REFERENCE_COLOUR))
    parts.append("</svg>")
    return Markup("".join(parts))  # built from escaped labels and formatted numbers only
