"""Every picture of the reports, drawn as inline SVG from numbers only: the figures of
feedback.html and the score histogram of a lab's summary.html (``svg_histogram``).

A hidden test attaches a figure to its result (``attach_figure(request, figure)``) as plain data:
a title and up to four panels. A panel of lines holds ``y`` values (optional shared ``x``),
shaded spans, horizontal limits and event marks, on a linear or a log10 ``y`` axis; a heatmap
panel holds a grid of values in [0, 1] (attention weights, say). The curves of a test graded by
outcome (a ``Measurement``: the student's beside the reference solution's) are drawn the same way
(``outcome_figure``). The data travels with the result like any other field and is re-validated
before drawing (``clean_figure``): every number goes through ``float`` and is bounded, every text
is escaped, and sizes are capped, so a figure holds nothing but what this module draws — whatever
the values a submission returned. No plotting library is needed, and the page stays
self-contained.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

import numpy as np
from markupsafe import Markup

from rnngrade.results.model import Measurement
from rnngrade.results.text import clean_name

FIGURE_KEY = "rnngrade_figure"
MAX_FIGURES = 4  # per test
MAX_PANELS = 4
MAX_LINES = 8  # per panel
MAX_POINTS = 600  # per line, after downsampling
MAX_SPANS = 8
MAX_MARKS = 400
MAX_SIDE = 40  # rows and columns of a heatmap; a larger grid is averaged down in blocks
MAX_CELLS = MAX_SIDE * MAX_SIDE
TEXT_LIMIT = 80
LABEL_LIMIT = 12  # characters of a heatmap's row or column label
VALUE_LIMIT = 1e100  # a number's magnitude in a figure; beyond it, it is drawn at this bound
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
          limits: Sequence[float] = (), events: Sequence[dict] = (), x_label: str = "",
          log_y: bool = False) -> dict:
    """A panel of lines. ``log_y``: a log10 ``y`` axis with ticks at powers of ten, on which a
    value that is not positive is a gap in its line (and a limit that is not positive is left
    out)."""
    return {"kind": "lines", "title": title, "lines": list(lines),
            "spans": [list(s) for s in spans], "limits": list(limits), "marks": list(events),
            "x_label": x_label, "log_y": log_y}


def heatmap(title: str, values: Sequence[Sequence[float]] | np.ndarray, *,
            row_labels: Sequence[str] = (), col_labels: Sequence[str] = ()) -> dict:
    """A panel shading ``values`` (rows, cols), meant to lie in [0, 1] (attention weights: row
    ``i`` the weights of query ``i``), as a grid of cells: 0 white, 1 the darkest shade.

    Values are clamped to [0, 1]; NaN and inf are empty cells. A side longer than ``MAX_SIDE``
    is averaged down in consecutive blocks (the finite values of each) to at most ``MAX_SIDE``,
    and that side's labels are dropped, since they would name blocks, not rows or columns.
    Labels are cut to ``LABEL_LIMIT`` characters. Raises ``ValueError`` unless ``values`` is 2-D.
    """
    grid = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0)
    if grid.ndim != 2:
        raise ValueError(f"a heatmap needs a 2-D array (rows, cols), not shape {grid.shape}")
    rows, cols = list(row_labels), list(col_labels)
    if grid.shape[0] > MAX_SIDE:
        grid, rows = _block_mean(grid, 0), []
    if grid.shape[1] > MAX_SIDE:
        grid, cols = _block_mean(grid, 1), []
    return {"kind": "heatmap", "title": title,
            "values": [[float(v) if math.isfinite(v) else None for v in row] for row in grid],
            "row_labels": [str(v)[:LABEL_LIMIT] for v in rows],
            "col_labels": [str(v)[:LABEL_LIMIT] for v in cols]}


def _block_mean(grid: np.ndarray, axis: int) -> np.ndarray:
    """``grid`` with ``axis`` cut into consecutive blocks, at most ``MAX_SIDE`` of them, each the
    mean of its finite values (NaN where it has none)."""
    size = math.ceil(grid.shape[axis] / MAX_SIDE)
    moved = np.moveaxis(grid, axis, 0)
    blocks = []
    for start in range(0, moved.shape[0], size):
        chunk = moved[start : start + size]
        finite = np.isfinite(chunk)
        count = finite.sum(axis=0)
        total = np.where(finite, chunk, 0.0).sum(axis=0)
        blocks.append(np.where(count > 0, total / np.maximum(count, 1), np.nan))
    return np.moveaxis(np.stack(blocks), 0, axis)


def figure(title: str, panels: Sequence[dict]) -> dict:
    return {"title": title, "panels": list(panels)}


def attach_figure(request: Any, data: dict) -> None:
    """Attach a figure to the running test's result (shown in feedback.html)."""
    request.node.user_properties.append((FIGURE_KEY, data))


def outcome_figure(m: Measurement) -> dict | None:
    """The picture of a test graded by outcome: ``m``'s curve (yours) beside the reference
    solution's, the band's edge a dashed limit; None when neither curve has a finite value.

    ``x`` is the share of the run: point ``i`` of ``n`` sits at ``(i + 0.5) / n``, the middle of
    the stretch of the run it stands for (a report keeps a long curve as averages of equal
    stretches), so curves of different lengths span the same width.
    """
    lines = []
    for label, values, dashed, colour in (("yours", m.curve, False, 0),
                                          ("the reference solution", m.reference_curve, True,
                                           5)):
        ys = _curve_values(values)
        if not any(math.isfinite(v) for v in ys):
            continue
        drawn = line(label, ys, dashed=dashed, colour=colour)
        drawn["x"] = [(x + 0.5) / len(ys) for x in drawn["x"]]
        lines.append(drawn)
    if not lines:
        return None
    threshold = _number(m.threshold)
    title = str(m.curve_label or m.name)
    if threshold is not None:
        title = f"{title} — band: {m.bound} {m.band()}"
    return figure(str(m.curve_label or m.name), [panel(
        title, lines, limits=[threshold] if threshold is not None else [],
        x_label="share of the run")])


def _curve_values(values: Any) -> list[float]:
    """A curve as floats, whatever it holds: anything not a finite number becomes NaN (a gap)."""
    try:
        items = list(values)[: MAX_POINTS * 1000]
    except TypeError:
        return []
    return [math.nan if (v := _number(item)) is None else v for item in items]


# ------------------------------------------------------------------ validation

def _text(value: Any, limit: int = TEXT_LIMIT) -> str:
    return clean_name(value, limit) if isinstance(value, str) else ""


def _number(value: Any) -> float | None:
    """A finite float within ``VALUE_LIMIT``; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):  # any size: a JSON integer can be too large for a float
        return float(max(-VALUE_LIMIT, min(VALUE_LIMIT, value)))
    number = float(value)
    return max(-VALUE_LIMIT, min(VALUE_LIMIT, number)) if math.isfinite(number) else None


def _numbers(values: Any, limit: int) -> list[float | None]:
    if not isinstance(values, list | tuple):
        return []
    return [_number(v) for v in values[:limit]]


def _items(values: Any, limit: int) -> list:
    return list(values[:limit]) if isinstance(values, list | tuple) else []


def _colour(value: Any) -> int:
    return int(_number(value) or 0) % len(COLOURS)


def clean_figure(data: Any) -> dict | None:
    """``data`` rebuilt from its numbers and short texts within the bounds above, or None when it
    is not a figure at all (or has no panel left)."""
    if not isinstance(data, dict) or not isinstance(data.get("panels"), list):
        return None
    panels = []
    for p in data["panels"][:MAX_PANELS]:
        if not isinstance(p, dict):
            continue
        clean = _clean_heatmap(p) if p.get("kind") == "heatmap" else _clean_lines(p)
        if clean is not None:
            panels.append(clean)
    return {"title": _text(data.get("title")), "panels": panels} if panels else None


def _clean_lines(p: dict) -> dict:
    lines = []
    for ln in _items(p.get("lines"), MAX_LINES):
        if not isinstance(ln, dict):
            continue
        xs = _numbers(ln.get("x"), MAX_POINTS)
        ys = _numbers(ln.get("y"), len(xs))
        lines.append({"label": _text(ln.get("label")), "x": xs, "y": ys,
                      "dashed": ln.get("dashed") is True, "colour": _colour(ln.get("colour"))})
    spans = [s for s in ([_number(a) for a in span[:2]] for span in _items(p.get("spans"),
                                                                         MAX_SPANS)
                         if isinstance(span, list | tuple))
             if len(s) == 2 and None not in s]
    limits = [v for v in _numbers(p.get("limits"), 4) if v is not None]
    events = []
    for m in _items(p.get("marks"), 4):
        if isinstance(m, dict):
            events.append({"label": _text(m.get("label")),
                           "x": [v for v in _numbers(m.get("x"), MAX_MARKS) if v is not None],
                           "row": int(_number(m.get("row")) or 0) % 4,
                           "colour": _colour(m.get("colour"))})
    return {"kind": "lines", "title": _text(p.get("title")), "lines": lines, "spans": spans,
            "limits": limits, "marks": events, "x_label": _text(p.get("x_label")),
            "log_y": p.get("log_y") is True}


def _clean_heatmap(p: dict) -> dict | None:
    """A heatmap panel: at most ``MAX_SIDE`` rows of ``MAX_SIDE`` cells (``MAX_CELLS`` in all),
    each a value in [0, 1] or None (empty); short rows padded with empty cells; None when no
    cell is left."""
    rows = [r if isinstance(r, list | tuple) else [] for r in _items(p.get("values"), MAX_SIDE)]
    cols = min(MAX_SIDE, max((len(r) for r in rows), default=0))
    if not cols:
        return None
    values = []
    for r in rows:
        cells = [None if (v := _number(c)) is None else max(0.0, min(1.0, v)) for c in r[:cols]]
        values.append(cells + [None] * (cols - len(cells)))
    return {"kind": "heatmap", "title": _text(p.get("title")), "values": values,
            "row_labels": [_text(v, LABEL_LIMIT) for v in _items(p.get("row_labels"),
                                                                 len(values))],
            "col_labels": [_text(v, LABEL_LIMIT) for v in _items(p.get("col_labels"), cols)]}


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


def _log10(value: float | None) -> float | None:
    return math.log10(value) if value is not None and value > 0 else None


def _line_svg(ln: dict, values: list[float | None], px: Callable[[float], float],
              py: Callable[[float], float]) -> list[str]:
    """One line: a polyline per run of points between gaps, a dot for a point on its own."""
    segments: list[list[str]] = []
    current: list[str] = []
    for x, y in zip(ln["x"], values):
        if x is None or y is None:
            if current:
                segments.append(current)
            current = []
            continue
        current.append(f"{px(x):.1f},{py(y):.1f}")
    if current:
        segments.append(current)
    colour, dash = COLOURS[ln["colour"]], ' stroke-dasharray="5 3"' if ln["dashed"] else ""
    parts = []
    for seg in segments:
        if len(seg) == 1:  # a point on its own is a dot, not an invisible line
            cx, cy = seg[0].split(",")
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="2.5" fill="{colour}"/>')
        else:
            parts.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke-width="1.2"'
                         f' stroke="{colour}"{dash}/>')
    return parts


def _lines_svg(p: dict, top: float) -> tuple[str, float]:
    """A panel of lines drawn at ``top``, and its height."""
    log = p["log_y"]
    lines = [(ln, [_log10(y) for y in ln["y"]] if log else ln["y"]) for ln in p["lines"]]
    limits = [v for v in map(_log10, p["limits"]) if v is not None] if log else p["limits"]
    xs = [x for ln in p["lines"] for x in ln["x"] if x is not None] + \
        [x for s in p["spans"] for x in s] + [x for m in p["marks"] for x in m["x"]]
    ys = [y for _, values in lines for y in values if y is not None] + limits
    x_lo, x_hi = _range(xs)
    if log:  # whole decades, so the frame's edges are ticks
        y_lo = math.floor(min(ys, default=0.0))
        y_hi = max(math.ceil(max(ys, default=1.0)), y_lo + 1)
    else:
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
    for value in limits:
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py(value):.1f}" '
                     f'y2="{py(value):.1f}" class="limit"/>')
    for ln, values in lines:
        parts += _line_svg(ln, values, px, py)
    for m in p["marks"]:
        base = top + TOP + plot_h - 2 - 6 * m["row"]
        ticks = " ".join(f"M{px(x):.1f} {base:.1f}v-5" for x in m["x"] if x_lo <= x <= x_hi)
        if ticks:
            parts.append(f'<path d="{ticks}" stroke="{COLOURS[m["colour"]]}" stroke-width="1"/>')
    bottom = top + TOP + plot_h
    if log:
        step = max(1, math.ceil((y_hi - y_lo) / 5))  # at most six labelled decades
        for k in range(-(-int(y_lo) // step) * step, int(y_hi) + 1, step):
            parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py(k):.1f}" '
                         f'y2="{py(k):.1f}" class="grid"/><text x="{LEFT - 4}" '
                         f'y="{py(k) + 3:.1f}" class="ax" text-anchor="end">1e{k}</text>')
    else:
        parts += [f'<text x="{LEFT - 4}" y="{top + TOP + 9:.1f}" class="ax" text-anchor="end">'
                  f'{_fmt(y_hi)}</text>',
                  f'<text x="{LEFT - 4}" y="{bottom:.1f}" class="ax" text-anchor="end">'
                  f'{_fmt(y_lo)}</text>']
    parts += [f'<text x="{LEFT}" y="{bottom + 14:.1f}" class="ax">{_fmt(x_lo)}</text>',
              f'<text x="{LEFT + plot_w}" y="{bottom + 14:.1f}" class="ax" text-anchor="end">'
              f'{_fmt(x_hi)}</text>',
              f'<text x="{LEFT + plot_w / 2:.0f}" y="{bottom + 14:.1f}" class="ax" '
              f'text-anchor="middle">{escape(p["x_label"])}</text>']
    return "".join(parts), PANEL_HEIGHT


HEATMAP_COLOUR, HEATMAP_HEIGHT, CELL = COLOURS[0], 320, 18  # grid at most 320 px tall


def _heatmap_svg(p: dict, top: float) -> tuple[str, float]:
    """A heatmap panel drawn at ``top``, and its height: each cell shaded by its value, an empty
    cell (no value) crossed out, labels beside the rows and under the columns."""
    values, rows_l, cols_l = p["values"], p["row_labels"], p["col_labels"]
    rows, cols = len(values), len(values[0])
    left = max(LEFT, 8 + 6 * max((len(t) for t in rows_l), default=0))
    cell = min(CELL, (WIDTH - left - RIGHT) / cols, HEATMAP_HEIGHT / rows)
    font = max(5.0, min(10.0, cell - 1))
    y0, width, height = top + TOP, cols * cell, rows * cell
    shaded, empty = [], []
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            x, y = left + j * cell, y0 + i * cell
            if v is None:
                empty.append(f"M{x:.1f} {y:.1f}l{cell:.1f} {cell:.1f}")
            elif v >= 0.005:  # lighter than that rounds to white
                shaded.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" '
                              f'height="{cell:.1f}" fill-opacity="{v:.2f}"/>')
    parts = [f'<text x="{LEFT}" y="{top + 15:.1f}" class="pt">{escape(p["title"])}</text>',
             f'<g fill="{HEATMAP_COLOUR}">{"".join(shaded)}</g>']
    if empty:
        parts.append(f'<path d="{"".join(empty)}" class="empty"/>')
    parts.append(f'<rect x="{left}" y="{y0:.1f}" width="{width:.1f}" height="{height:.1f}" '
                 'class="frame"/>')
    for i, label in enumerate(rows_l):
        parts.append(f'<text x="{left - 4}" y="{y0 + (i + 0.5) * cell + font / 3:.1f}" '
                     f'class="ax" font-size="{font:.1f}" text-anchor="end">{escape(label)}</text>')
    for j, label in enumerate(cols_l):
        x = left + (j + 0.5) * cell + font / 3
        parts.append(f'<text transform="translate({x:.1f} {y0 + height + 4:.1f}) rotate(-90)" '
                     f'class="ax" font-size="{font:.1f}" text-anchor="end">{escape(label)}</text>')
    below = y0 + height + (6 * max((len(t) for t in cols_l), default=0) + 6 if cols_l else 0)
    key = [f'<text x="{left}" y="{below + 12:.1f}" class="ax">0</text>']
    for k, shade in enumerate((0.0, 0.25, 0.5, 0.75, 1.0)):
        key.append(f'<rect x="{left + 10 + 12 * k}" y="{below + 3:.1f}" width="12" height="10" '
                   f'fill="{HEATMAP_COLOUR}" fill-opacity="{shade}" class="key"/>')
    key.append(f'<text x="{left + 74}" y="{below + 12:.1f}" class="ax">1; a crossed-out cell '
               'has no value</text>')
    return "".join(parts + key), below + 22 - top


def _panel_svg(p: dict, top: float) -> tuple[str, float]:
    return _heatmap_svg(p, top) if p["kind"] == "heatmap" else _lines_svg(p, top)


def _legend(data: dict, top: float) -> tuple[str, float]:
    entries: dict[tuple[str, int, bool], None] = {}
    for p in data["panels"]:
        for ln in p.get("lines", ()):
            entries.setdefault((ln["label"], ln["colour"], ln["dashed"]), None)
        for m in p.get("marks", ()):
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
    body, top = [], 0.0
    for p in clean["panels"]:
        drawn, height = _panel_svg(p, top)
        body.append(drawn)
        top += height
    legend, height = _legend(clean, top)
    style = ("<style>.pt{font:600 12px sans-serif;fill:#1f2328}.ax{font:10px sans-serif;"
             "fill:#57606a}.frame{fill:none;stroke:#d0d7de}.span{fill:#f5a623;opacity:.25}"
             ".limit{stroke:#cf222e;stroke-dasharray:4 3;stroke-width:1}"
             ".grid{stroke:#eaeef2;stroke-width:1}.empty{fill:none;stroke:#afb8c1}"
             ".key{stroke:#d0d7de}</style>")
    return Markup(f'<svg xmlns="http://www.w3.org/2000/svg" role="img" '
                  f'viewBox="0 0 {WIDTH} {height:.0f}" width="100%" '
                  f'aria-label="{escape(clean["title"])}">{style}{"".join(body)}{legend}</svg>')


# ------------------------------------------------------------------ histogram (summary.html)

HIST_W, HIST_H, HIST_LEFT, HIST_RIGHT, HIST_BOTTOM, HIST_TOP = 520, 250, 40, 8, 30, 20
TICK_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000)


def histogram_scale(counts: Sequence[int]) -> list[int]:
    """The labelled values of a histogram's count axis: 0 up to the first multiple of a round
    step at or above the largest count, at most six of them."""
    top = max([*counts, 1])
    step = next((s for s in TICK_STEPS if top / s <= 5), -(-top // 5))
    return list(range(0, step * -(-top // step) + 1, step))


def _bar_colour(index: int, count: int) -> str:
    hue = round(4 + 128 * index / max(count - 1, 1))  # red → green
    return f"hsl({hue}, 58%, 47%)"


def svg_histogram(bins: Sequence[tuple[str, int]], label: str, element_id: str = "") -> Markup:
    """Bars of ``(label, count)`` from left to right, shaded red to green, each with its count
    above it and its label below, over a count axis with gridlines (``histogram_scale``);
    ``label`` names the chart for screen readers, ``element_id`` its id in the page."""
    ticks = histogram_scale([count for _, count in bins])
    plot_w, plot_h = HIST_W - HIST_LEFT - HIST_RIGHT, HIST_H - HIST_BOTTOM - HIST_TOP
    base, slot = HIST_TOP + plot_h, plot_w / max(len(bins), 1)
    ident = f' id="{escape(element_id)}"' if element_id else ""
    parts = [f'<svg{ident} viewBox="0 0 {HIST_W} {HIST_H}" width="100%" role="img" '
             f'aria-label="{escape(label)}">']
    for value in ticks:
        y = base - plot_h * value / ticks[-1]
        parts.append(f'<line x1="{HIST_LEFT}" x2="{HIST_W - HIST_RIGHT}" y1="{y:.2f}" '
                     f'y2="{y:.2f}" stroke="{"#8c959f" if value == 0 else "#eaeef2"}" '
                     f'stroke-width="1"/><text x="{HIST_LEFT - 8}" y="{y + 4:.2f}" '
                     f'text-anchor="end">{value}</text>')
    for i, (name, count) in enumerate(bins):
        height = plot_h * count / ticks[-1]
        x, y, width = HIST_LEFT + i * slot + slot * 0.1, base - height, slot * 0.8
        parts.append(f'<rect x="{x:.2f}" y="{y:.2f}" width="{width:.2f}" height="{height:.2f}" '
                     f'rx="3" fill="{_bar_colour(i, len(bins))}"><title>{escape(name)}%: '
                     f'{count} student(s)</title></rect>')
        if count:
            parts.append(f'<text class="count" x="{x + width / 2:.2f}" y="{y - 5:.2f}" '
                         f'text-anchor="middle">{count}</text>')
        parts.append(f'<text x="{x + width / 2:.2f}" y="{HIST_H - 10}" '
                     f'text-anchor="middle">{escape(name)}</text>')
    return Markup("".join(parts) + "</svg>")
