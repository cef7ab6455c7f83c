"""Small line charts for feedback.html, drawn as inline SVG from numbers only.

A hidden test attaches a figure to its result (``attach_figure(request, figure)``) as plain data:
a title and up to four panels, each with lines (``y`` values, optional shared ``x``), shaded
spans, horizontal limits and event marks. The data travels with the result like any other field
and is re-validated before drawing (``clean_figure``): every number goes through ``float``, every
text is escaped, and sizes are bounded, so a figure holds nothing but what this module draws —
whatever the values a submission returned. No plotting library is needed, and the page stays
self-contained.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np
from markupsafe import Markup

FIGURE_KEY = "rnngrade_figure"
MAX_FIGURES = 4  # per test
MAX_PANELS = 4
MAX_LINES = 8  # per panel
MAX_POINTS = 600  # per line, after downsampling
MAX_SPANS = 8
MAX_MARKS = 400
TEXT_LIMIT = 80
WIDTH, PANEL_HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 150, 56, 12, 24, 22
COLOURS = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#9a6700", "#57606a", "#bf3989",
           "#1b7c83")


def downsample(values: Sequence[float] | np.ndarray, limit: int = MAX_POINTS
               ) -> tuple[list[float], list[float | None]]:
    """``(x, y)`` with at most ``limit`` points: consecutive buckets replaced by their minimum
    and maximum (in order), so a one-sample spike survives; NaN and inf become None (a gap)."""
    y = np.asarray(values, dtype=np.float64).ravel()
    x = np.arange(len(y), dtype=np.float64)
    if len(y) > limit:
        size = math.ceil(len(y) / (limit // 2))
        xs: list[float] = []
        ys: list[float] = []
        for start in range(0, len(y), size):
            chunk = y[start : start + size]
            finite = np.flatnonzero(np.isfinite(chunk))
            if not finite.size:
                xs.append(float(start))
                ys.append(math.nan)
                continue
            low, high = finite[np.argmin(chunk[finite])], finite[np.argmax(chunk[finite])]
            for i in sorted({int(low), int(high)}):
                xs.append(float(start + i))
                ys.append(float(chunk[i]))
        x, y = np.array(xs), np.array(ys)
    return [float(v) for v in x], [float(v) if math.isfinite(v) else None for v in y]


def line(label: str, values: Sequence[float] | np.ndarray, *, x0: float = 0.0,
         x: Sequence[float] | None = None, dashed: bool = False, colour: int = 0) -> dict:
    """One line of a panel: ``values`` at ``x`` (default ``x0, x0 + 1, ...``), downsampled."""
    if x is None:
        xs, ys = downsample(values)
        xs = [x0 + v for v in xs]
    else:
        xs = [float(v) for v in x][:MAX_POINTS]
        ys = [float(v) if v is not None and math.isfinite(float(v)) else None
              for v in np.asarray(values, dtype=np.float64).ravel()[: len(xs)]]
    return {"label": label, "x": xs, "y": ys, "dashed": dashed, "colour": colour}


def marks(label: str, where: Sequence[int] | np.ndarray, *, x0: float = 0.0, row: int = 0,
          colour: int = 1) -> dict:
    """Event ticks (alarms) at the indices where ``where`` is True, drawn along the panel's foot
    (``row`` stacks several kinds)."""
    flags = np.asarray(where, dtype=bool).ravel()
    hits = np.flatnonzero(flags)
    if len(hits) > MAX_MARKS:
        hits = hits[np.linspace(0, len(hits) - 1, MAX_MARKS).astype(int)]
    return {"label": label, "x": [x0 + float(i) for i in hits], "row": row, "colour": colour}


def panel(title: str, lines: Sequence[dict] = (), *, spans: Sequence[tuple[float, float]] = (),
          limits: Sequence[float] = (), events: Sequence[dict] = (), x_label: str = "") -> dict:
    return {"title": title, "lines": list(lines), "spans": [list(s) for s in spans],
            "limits": list(limits), "marks": list(events), "x_label": x_label}


def figure(title: str, panels: Sequence[dict]) -> dict:
    return {"title": title, "panels": list(panels)}


def attach_figure(request: Any, data: dict) -> None:
    """Attach a figure to the running test's result (shown in feedback.html)."""
    request.node.user_properties.append((FIGURE_KEY, data))


# ------------------------------------------------------------------ validation

def _text(value: Any) -> str:
    return str(value)[:TEXT_LIMIT] if isinstance(value, str) else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _numbers(values: Any, limit: int) -> list[float | None]:
    if not isinstance(values, list | tuple):
        return []
    return [_number(v) for v in values[:limit]]


def clean_figure(data: Any) -> dict | None:
    """``data`` rebuilt from its numbers and short texts within the bounds above, or None when it
    is not a figure at all."""
    if not isinstance(data, dict) or not isinstance(data.get("panels"), list):
        return None
    panels = []
    for p in data["panels"][:MAX_PANELS]:
        if not isinstance(p, dict):
            continue
        lines = []
        for ln in (p.get("lines") or [])[:MAX_LINES]:
            if not isinstance(ln, dict):
                continue
            xs = [v for v in _numbers(ln.get("x"), MAX_POINTS)]
            ys = _numbers(ln.get("y"), len(xs))
            lines.append({"label": _text(ln.get("label")), "x": xs, "y": ys,
                          "dashed": ln.get("dashed") is True,
                          "colour": int(_number(ln.get("colour")) or 0) % len(COLOURS)})
        spans = [s for s in ([_number(a) for a in span[:2]] for span in
                             (p.get("spans") or [])[:MAX_SPANS] if isinstance(span, list | tuple))
                 if len(s) == 2 and None not in s]
        limits = [v for v in _numbers(p.get("limits"), 4) if v is not None]
        events = []
        for m in (p.get("marks") or [])[:4]:
            if isinstance(m, dict):
                events.append({"label": _text(m.get("label")),
                               "x": [v for v in _numbers(m.get("x"), MAX_MARKS) if v is not None],
                               "row": int(_number(m.get("row")) or 0) % 4,
                               "colour": int(_number(m.get("colour")) or 0) % len(COLOURS)})
        panels.append({"title": _text(p.get("title")), "lines": lines, "spans": spans,
                       "limits": limits, "marks": events, "x_label": _text(p.get("x_label"))})
    return {"title": _text(data.get("title")), "panels": panels} if panels else None


# ------------------------------------------------------------------ drawing

def _range(values: list[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    if high - low < 1e-12 * max(1.0, abs(high)):
        low, high = low - 0.5, high + 0.5
    return low, high


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _panel_svg(p: dict, top: float) -> str:
    xs = [x for ln in p["lines"] for x in ln["x"] if x is not None] + \
        [x for s in p["spans"] for x in s] + [x for m in p["marks"] for x in m["x"]]
    ys = [y for ln in p["lines"] for y in ln["y"] if y is not None] + p["limits"]
    x_lo, x_hi = _range([x for x in xs if x is not None])
    y_lo, y_hi = _range(ys)
    pad = 0.05 * (y_hi - y_lo)
    y_lo, y_hi = y_lo - pad, y_hi + pad
    plot_w, plot_h = WIDTH - LEFT - RIGHT, PANEL_HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (x - x_lo) / (x_hi - x_lo) * plot_w

    def py(y: float) -> float:
        return top + TOP + (y_hi - y) / (y_hi - y_lo) * plot_h

    parts = [f'<text x="{LEFT}" y="{top + 15:.1f}" class="pt">{escape(p["title"])}</text>',
             f'<rect x="{LEFT}" y="{top + TOP:.1f}" width="{plot_w}" height="{plot_h}" '
             'class="frame"/>']
    for a, b in p["spans"]:
        left, right = px(max(min(a, b), x_lo)), px(min(max(a, b), x_hi))
        parts.append(f'<rect x="{left:.1f}" y="{top + TOP:.1f}" width="{max(right - left, 2):.1f}"'
                     f' height="{plot_h}" class="span"/>')
    for value in p["limits"]:
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py(value):.1f}" '
                     f'y2="{py(value):.1f}" class="limit"/>')
    for ln in p["lines"]:
        segments: list[list[str]] = []
        current: list[str] = []
        for x, y in zip(ln["x"], ln["y"]):
            if x is None or y is None:
                if current:
                    segments.append(current)
                current = []
                continue
            current.append(f"{px(x):.1f},{py(y):.1f}")
        if current:
            segments.append(current)
        dash = ' stroke-dasharray="5 3"' if ln["dashed"] else ""
        for seg in segments:
            if len(seg) == 1:
                cx, cy = seg[0].split(",")
                parts.append(f'<circle cx="{cx}" cy="{cy}" r="2.5" '
                             f'fill="{COLOURS[ln["colour"]]}"/>')
            else:
                parts.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke-width="1.2"'
                             f' stroke="{COLOURS[ln["colour"]]}"{dash}/>')
    for m in p["marks"]:
        base = top + TOP + plot_h - 2 - 6 * m["row"]
        ticks = " ".join(f"M{px(x):.1f} {base:.1f}v-5" for x in m["x"] if x_lo <= x <= x_hi)
        if ticks:
            parts.append(f'<path d="{ticks}" stroke="{COLOURS[m["colour"]]}" stroke-width="1"/>')
    bottom = top + TOP + plot_h
    parts += [f'<text x="{LEFT - 4}" y="{top + TOP + 9:.1f}" class="ax" text-anchor="end">'
              f'{_fmt(y_hi)}</text>',
              f'<text x="{LEFT - 4}" y="{bottom:.1f}" class="ax" text-anchor="end">'
              f'{_fmt(y_lo)}</text>',
              f'<text x="{LEFT}" y="{bottom + 14:.1f}" class="ax">{_fmt(x_lo)}</text>',
              f'<text x="{LEFT + plot_w}" y="{bottom + 14:.1f}" class="ax" text-anchor="end">'
              f'{_fmt(x_hi)}</text>',
              f'<text x="{LEFT + plot_w / 2:.0f}" y="{bottom + 14:.1f}" class="ax" '
              f'text-anchor="middle">{escape(p["x_label"])}</text>']
    return "".join(parts)


def _legend(data: dict, top: float) -> tuple[str, float]:
    entries: dict[tuple[str, int, bool], None] = {}
    for p in data["panels"]:
        for ln in p["lines"]:
            entries.setdefault((ln["label"], ln["colour"], ln["dashed"]), None)
        for m in p["marks"]:
            entries.setdefault((m["label"] + " (ticks)", m["colour"], False), None)
    parts, x, y = [], float(LEFT), top + 12
    for label, colour, dashed in entries:
        if not label:
            continue
        width = 34 + 6.2 * len(label)
        if x + width > WIDTH:
            x, y = float(LEFT), y + 16
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        parts.append(f'<line x1="{x:.0f}" x2="{x + 22:.0f}" y1="{y - 4:.0f}" y2="{y - 4:.0f}" '
                     f'stroke="{COLOURS[colour]}" stroke-width="2"{dash}/>'
                     f'<text x="{x + 26:.0f}" y="{y:.0f}" class="ax">{escape(label)}</text>')
        x += width
    return "".join(parts), y + 8


def svg_figure(data: Any) -> Markup:
    """The figure as inline SVG (empty when ``data`` is not a figure)."""
    clean = clean_figure(data)
    if clean is None:
        return Markup("")
    body = [_panel_svg(p, i * PANEL_HEIGHT) for i, p in enumerate(clean["panels"])]
    legend, height = _legend(clean, len(clean["panels"]) * PANEL_HEIGHT)
    style = ("<style>.pt{font:600 12px sans-serif;fill:#1f2328}.ax{font:10px sans-serif;"
             "fill:#57606a}.frame{fill:none;stroke:#d0d7de}.span{fill:#f5a623;opacity:.25}"
             ".limit{stroke:#cf222e;stroke-dasharray:4 3;stroke-width:1}</style>")
    return Markup(f'<svg xmlns="http://www.w3.org/2000/svg" role="img" '
                  f'viewBox="0 0 {WIDTH} {height:.0f}" width="100%" '
                  f'aria-label="{escape(clean["title"])}">{style}{"".join(body)}{legend}</svg>')
