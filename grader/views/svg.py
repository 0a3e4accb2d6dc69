"""A tiny inline-SVG writer for the HTML report: heat maps, line charts and score bars.

Every function takes numbers and labels and returns SVG markup as a string. Every label
goes through ``_esc`` (XML escaping), so the markup is safe to embed even when a label
came from elsewhere; only the numbers this module formats itself are written unescaped.
The drawings scale with their container (``width="100%"`` and a ``viewBox``) and never
grow beyond their natural size, which keeps them readable on a phone and on paper.
"""

import math
from html import escape

FONT = 11
"""Label size in viewBox units."""

# Colour stops (position, (r, g, b)), interpolated linearly.
SEQUENTIAL = ((0.0, (68, 1, 84)), (0.125, (71, 44, 122)), (0.25, (59, 81, 139)), (0.375, (44, 113, 142)),
              (0.5, (33, 144, 141)), (0.625, (39, 173, 129)), (0.75, (92, 200, 99)), (0.875, (170, 220, 50)),
              (1.0, (253, 231, 37)))
"""Dark violet to yellow, perceptually even (viridis-like): attention weights."""
DIVERGING = ((0.0, (33, 102, 172)), (0.25, (103, 169, 207)), (0.5, (247, 247, 247)), (0.75, (239, 138, 98)),
             (1.0, (178, 24, 43)))
"""Blue through white to red, for values around 0 (the positional table)."""
ERROR = ((0.0, (255, 247, 236)), (0.35, (253, 187, 132)), (0.7, (227, 74, 51)), (1.0, (127, 0, 0)))
"""Pale to dark red: how wrong an entry is (0 = right)."""
SCALES = {"sequential": SEQUENTIAL, "diverging": DIVERGING, "error": ERROR}
MISSING = "#9e9e9e"
"""Fill for NaN, inf or absent entries."""


def _esc(s):
    return escape(str(s), quote=True)


def _num(x):
    """A coordinate: short and locale-free."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def label_number(x):
    """A value as a short label (``0.25``, ``1.2e-05``)."""
    if x is None or not math.isfinite(x):
        return "—"
    if x == 0:
        return "0"
    return f"{x:.3g}"


def colour(t, stops):
    """The colour at ``t`` in [0, 1] along ``stops``, as ``#rrggbb``."""
    t = min(1.0, max(0.0, t))
    for (t0, c0), (t1, c1) in zip(stops, stops[1:]):
        if t <= t1:
            f = 0.0 if t1 == t0 else (t - t0) / (t1 - t0)
            rgb = [round(a + (b - a) * f) for a, b in zip(c0, c1)]
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#{:02x}{:02x}{:02x}".format(*stops[-1][1])


def _dark(hex_colour):
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b < 140


def _finite(values):
    return [v for row in values for v in row if v is not None and math.isfinite(v)]


def _text_width(label):
    # Wide (CJK) characters take about twice the room of Latin ones.
    return sum(FONT * (1.0 if ord(ch) > 0x2E80 else 0.62) for ch in str(label))


def _svg(width, height, body, *, label, css_class=""):
    cls = f' class="{_esc(css_class)}"' if css_class else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg"{cls} viewBox="0 0 {_num(width)} {_num(height)}" '
            f'width="100%" style="max-width:{_num(width)}px" role="img" aria-label="{_esc(label)}" '
            f'font-size="{FONT}" font-family="system-ui, sans-serif">{body}</svg>')


def _tick_every(n, room, label_room):
    """Label every k-th of ``n`` slots (k in 1, 2, 5, 10, ...) of ``room`` units so labels do not overlap."""
    for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        if room * k >= label_room or k >= n:
            return k
    return n


def heatmap(values, *, row_labels=None, col_labels=None, x_label="", y_label="", scale="sequential",
            vmin=None, vmax=None, legend="", label="", show_values=None, value_format=None, cell=None):
    """A grid of coloured cells with axis labels and a colour bar.

    Args:
        values: rows of numbers (``None``, NaN and inf are drawn grey).
        row_labels, col_labels: one label per row / column (default: the index).
        x_label, y_label: axis titles.
        scale: ``"sequential"``, ``"diverging"`` (symmetric around 0) or ``"error"``.
        vmin, vmax: the colour range (default: the data's range).
        legend: the colour bar's title.
        label: the accessible name of the picture.
        show_values: write each value in its cell (default: when the cells are large enough).
        value_format: how a value is written in its cell (default: ``label_number``).
        cell: the side of a cell in viewBox units (default: from the grid's size).
    """
    rows = [list(r) for r in values] or [[]]
    n_rows, n_cols = len(rows), max((len(r) for r in rows), default=0)
    row_labels = [str(x) for x in (row_labels if row_labels is not None else range(n_rows))]
    col_labels = [str(x) for x in (col_labels if col_labels is not None else range(n_cols))]
    finite = _finite(rows)
    lo = vmin if vmin is not None else (min(finite) if finite else 0.0)
    hi = vmax if vmax is not None else (max(finite) if finite else 1.0)
    if scale == "diverging" and vmin is None and vmax is None:
        bound = max(abs(lo), abs(hi)) or 1.0
        lo, hi = -bound, bound
    if hi <= lo:
        hi = lo + 1.0
    stops = SCALES[scale]

    if cell is None:
        cell = max(6.0, min(40.0, 400.0 / max(n_cols, 1), 320.0 / max(n_rows, 1)))
    if show_values is None:
        show_values = cell >= 30
    fmt = value_format or label_number
    row_room = max((_text_width(s) for s in row_labels), default=0)
    col_room = max((_text_width(s) for s in col_labels), default=0)
    # Words wider than their column are turned so that every column keeps its label; numbers are thinned.
    numeric = all(s.lstrip("-").isdigit() for s in col_labels)
    rotate = not numeric and col_room + 4 > cell
    grid_w, grid_h = cell * n_cols, cell * n_rows
    # The y-axis title runs up the left side when it fits beside the grid, else it sits above the grid.
    y_beside = bool(y_label) and _text_width(y_label) <= grid_h
    left = row_room + 8 + (FONT + 8 if y_beside else 0)
    top = 6 + (FONT + 8 if legend else 0) + (FONT + 8 if y_label and not y_beside else 0)
    col_label_h = (col_room * 0.72 + FONT if rotate else FONT + 4) + 4
    bottom = col_label_h + (FONT + 8 if x_label else 0)
    bar_x = left + grid_w + 14
    legend_room = max(_text_width(label_number(v)) for v in (lo, hi, (lo + hi) / 2)) + 8
    width = max(bar_x + 12 + legend_room + 4, bar_x + _text_width(legend) + 4,
                left + _text_width(x_label) / 2 + grid_w / 2 + 4,
                0 if y_beside else _text_width(y_label) + FONT * 2)
    height = top + grid_h + bottom

    parts = []
    for i, row in enumerate(rows):
        for j in range(n_cols):
            v = row[j] if j < len(row) else None
            ok = v is not None and math.isfinite(v)
            fill = colour((v - lo) / (hi - lo), stops) if ok else MISSING
            x, y = left + j * cell, top + i * cell
            tip = f"{row_labels[i]} / {col_labels[j]}: {label_number(v) if ok else v}"
            parts.append(f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(cell)}" height="{_num(cell)}" '
                         f'fill="{fill}"><title>{_esc(tip)}</title></rect>')
            if show_values:
                ink = "#fff" if ok and _dark(fill) else "#111"
                parts.append(f'<text x="{_num(x + cell / 2)}" y="{_num(y + cell / 2 + FONT * 0.35)}" '
                             f'text-anchor="middle" font-size="{_num(FONT * 0.85)}" fill="{ink}">'
                             f'{_esc(fmt(v) if ok else "?")}</text>')
    parts.append(f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(grid_w)}" height="{_num(grid_h)}" '
                 f'fill="none" stroke="#555" stroke-width="0.6"/>')
    # Row labels (every k-th when the cells are small).
    k = _tick_every(n_rows, cell, FONT + 4)
    for i in range(0, n_rows, k):
        y = top + i * cell + cell / 2 + FONT * 0.35
        parts.append(f'<text x="{_num(left - 5)}" y="{_num(y)}" text-anchor="end">{_esc(row_labels[i])}</text>')
    # Column labels, rotated when they do not fit under a cell.
    base = top + grid_h + 4
    if rotate:
        k = _tick_every(n_cols, cell, FONT + 4)
        for j in range(0, n_cols, k):
            x = left + j * cell + cell / 2 + FONT * 0.35
            parts.append(f'<text x="{_num(x)}" y="{_num(base)}" text-anchor="end" '
                         f'transform="rotate(-45 {_num(x)} {_num(base)})">{_esc(col_labels[j])}</text>')
    else:
        k = _tick_every(n_cols, cell, col_room + 4)
        for j in range(0, n_cols, k):
            x = left + j * cell + cell / 2
            parts.append(f'<text x="{_num(x)}" y="{_num(base + FONT)}" text-anchor="middle">'
                         f'{_esc(col_labels[j])}</text>')
    if x_label:
        cx = max(left + grid_w / 2, _text_width(x_label) / 2 + 2)
        parts.append(f'<text x="{_num(cx)}" y="{_num(height - 4)}" text-anchor="middle" '
                     f'font-weight="600">{_esc(x_label)}</text>')
    if y_beside:
        cy = top + grid_h / 2
        parts.append(f'<text x="{_num(FONT)}" y="{_num(cy)}" text-anchor="middle" font-weight="600" '
                     f'transform="rotate(-90 {_num(FONT)} {_num(cy)})">{_esc(y_label)}</text>')
    elif y_label:
        parts.append(f'<text x="2" y="{_num(6 + FONT)}" font-weight="600">↓ {_esc(y_label)}</text>')
    parts.append(_colour_bar(bar_x, top, grid_h, lo, hi, stops, legend))
    # Grids too fine to read when shrunk to a phone's width keep a minimum width (the page scrolls them).
    return _svg(width, height, "".join(parts), label=label or legend, css_class="dense" if cell < 16 else "")


def _colour_bar(x, top, height, lo, hi, stops, legend):
    steps = 24
    h = height / steps
    parts = []
    for s in range(steps):
        t = 1.0 - (s + 0.5) / steps
        parts.append(f'<rect x="{_num(x)}" y="{_num(top + s * h)}" width="12" height="{_num(h + 0.3)}" '
                     f'fill="{colour(t, stops)}"/>')
    parts.append(f'<rect x="{_num(x)}" y="{_num(top)}" width="12" height="{_num(height)}" fill="none" '
                 f'stroke="#555" stroke-width="0.6"/>')
    ticks = ((hi, top + FONT * 0.7), ((lo + hi) / 2, top + height / 2 + FONT * 0.35), (lo, top + height))
    for value, y in ticks if height >= 3 * FONT else ticks[::2]:
        parts.append(f'<text x="{_num(x + 16)}" y="{_num(y)}">{_esc(label_number(value))}</text>')
    if legend:
        parts.append(f'<text x="{_num(x)}" y="{_num(top - 6)}">{_esc(legend)}</text>')
    return "<g>" + "".join(parts) + "</g>"


def nice_ticks(lo, hi, count=5):
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    t = start
    while t <= hi + step * 1e-9:
        if t >= lo - step * 1e-9:
            ticks.append(round(t, 12))
        t += step
    return ticks


def line_chart(ys, *, xs=None, x_label="", y_label="", log_y=None, reference_line=None, reference_label="",
               label=""):
    """A line through ``(xs[i], ys[i])`` with axes, ticks and an optional horizontal reference line.

    Non-finite values break the line (and are left out). ``log_y``: logarithmic y axis (default: when
    the positive values span more than two decades).
    """
    xs = list(xs) if xs is not None else list(range(len(ys)))
    points = [(x, y) for x, y in zip(xs, ys) if y is not None and math.isfinite(y)]
    width, height = 440.0, 240.0
    left, right, top, bottom = 56.0, 14.0, 10.0, 44.0
    pw, ph = width - left - right, height - top - bottom
    if not points:
        points_y = [0.0, 1.0]
    else:
        points_y = [y for _, y in points]
    if reference_line is not None:
        points_y = points_y + [reference_line]
    if log_y is None:
        pos = [y for y in points_y if y > 0]
        log_y = len(pos) == len(points_y) and bool(pos) and max(pos) / min(pos) > 100
    if log_y:
        fy = math.log10
        lo_d, hi_d = math.floor(math.log10(min(points_y))), math.ceil(math.log10(max(points_y)))
        if hi_d == lo_d:
            hi_d += 1
        y_lo, y_hi = float(lo_d), float(hi_d)
        y_ticks = [10.0 ** d for d in range(lo_d, hi_d + 1)]
    else:
        fy = float
        y_lo, y_hi = min(points_y + [0.0]), max(points_y)
        y_ticks = nice_ticks(y_lo, y_hi)
        y_lo, y_hi = min(y_lo, y_ticks[0]), max(y_hi, y_ticks[-1])
        if y_hi <= y_lo:
            y_hi = y_lo + 1.0
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0, 1)
    if x_hi <= x_lo:
        x_hi = x_lo + 1

    def px(x):
        return left + (x - x_lo) / (x_hi - x_lo) * pw

    def py(y):
        return top + ph - (fy(y) - y_lo) / (y_hi - y_lo) * ph

    parts = [f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(pw)}" height="{_num(ph)}" fill="#fafafa" '
             f'stroke="#888" stroke-width="0.6"/>']
    for t in y_ticks:
        y = py(t)
        parts.append(f'<line x1="{_num(left)}" x2="{_num(left + pw)}" y1="{_num(y)}" y2="{_num(y)}" '
                     f'stroke="#ddd" stroke-width="0.6"/>')
        parts.append(f'<text x="{_num(left - 5)}" y="{_num(y + FONT * 0.35)}" text-anchor="end">'
                     f'{_esc(label_number(t))}</text>')
    for t in nice_ticks(x_lo, x_hi, 6):
        x = px(t)
        parts.append(f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{_num(top + ph)}" y2="{_num(top + ph + 4)}" '
                     f'stroke="#888"/>')
        parts.append(f'<text x="{_num(x)}" y="{_num(top + ph + 6 + FONT)}" text-anchor="middle">'
                     f'{_esc(label_number(t))}</text>')
    if reference_line is not None:
        y = py(reference_line)
        parts.append(f'<line x1="{_num(left)}" x2="{_num(left + pw)}" y1="{_num(y)}" y2="{_num(y)}" '
                     f'stroke="#c62828" stroke-width="1" stroke-dasharray="5 3"/>')
        if reference_label:
            parts.append(f'<text x="{_num(left + pw - 4)}" y="{_num(y - 4)}" text-anchor="end" fill="#c62828">'
                         f'{_esc(reference_label)}</text>')
    # One path, broken wherever a value is missing.
    segments, current = [], []
    for x, y in zip(xs, ys):
        if y is None or not math.isfinite(y):
            if current:
                segments.append(current)
            current = []
        else:
            current.append((px(x), py(y)))
    if current:
        segments.append(current)
    d = " ".join("M" + " L".join(f"{_num(a)} {_num(b)}" for a, b in seg) for seg in segments)
    if d:
        parts.append(f'<path d="{d}" fill="none" stroke="#1565c0" stroke-width="1.8" '
                     f'stroke-linejoin="round"/>')
    for seg in segments:
        if len(seg) == 1:
            parts.append(f'<circle cx="{_num(seg[0][0])}" cy="{_num(seg[0][1])}" r="2.5" fill="#1565c0"/>')
    if x_label:
        parts.append(f'<text x="{_num(left + pw / 2)}" y="{_num(height - 6)}" text-anchor="middle" '
                     f'font-weight="600">{_esc(x_label)}</text>')
    if y_label:
        cy = top + ph / 2
        parts.append(f'<text x="{_num(FONT)}" y="{_num(cy)}" text-anchor="middle" font-weight="600" '
                     f'transform="rotate(-90 {_num(FONT)} {_num(cy)})">{_esc(y_label)}</text>')
    return _svg(width, height, "".join(parts), label=label or y_label)


def bar(value, maximum, *, label=""):
    """A horizontal score bar: the filled part is ``value / maximum``; green when full, amber, red at 0."""
    frac = 0.0 if not maximum else max(0.0, min(1.0, value / maximum))
    fill = "#2e7d32" if frac >= 1.0 else ("#c62828" if frac == 0 else "#ef8f00")
    width = 100 * frac
    inner = f'<rect x="0" y="0" width="{_num(width)}" height="10" fill="{fill}"/>' if width > 0 else ""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" '
            f'width="100%" height="10" role="img" aria-label="{_esc(label)}">'
            f'<rect x="0" y="0" width="100" height="10" fill="#e6e6e6"/>{inner}</svg>')
