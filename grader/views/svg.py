"""A tiny inline-SVG writer for the HTML report: heat maps, line charts and score bars.

Every function takes numbers and labels and returns SVG markup as a string. Every label
goes through ``_esc`` (XML escaping), so the markup is safe to embed even when a label
came from elsewhere; only the numbers this module formats itself are written unescaped.
The drawings scale with their container (``width="100%"`` and a ``viewBox``) and never
grow beyond their natural size, at most ``WIDTH`` units across: on a phone they shrink
little, so their labels stay legible, and nothing is drawn outside the screen.
"""

import math
from html import escape

FONT = 11
"""Label size in viewBox units."""

# Colour stops (position, (r, g, b)), interpolated linearly.
SEQUENTIAL = (
    (0.0, (68, 1, 84)),
    (0.125, (71, 44, 122)),
    (0.25, (59, 81, 139)),
    (0.375, (44, 113, 142)),
    (0.5, (33, 144, 141)),
    (0.625, (39, 173, 129)),
    (0.75, (92, 200, 99)),
    (0.875, (170, 220, 50)),
    (1.0, (253, 231, 37)),
)
"""Dark violet to yellow, perceptually even (viridis-like): magnitudes, such as weights in [0, 1]."""
DIVERGING = (
    (0.0, (33, 102, 172)),
    (0.25, (103, 169, 207)),
    (0.5, (247, 247, 247)),
    (0.75, (239, 138, 98)),
    (1.0, (178, 24, 43)),
)
"""Blue through white to red, for values around 0 (a table of sines and cosines)."""
ERROR = ((0.0, (255, 247, 236)), (0.35, (253, 187, 132)), (0.7, (227, 74, 51)), (1.0, (127, 0, 0)))
"""Pale to dark red: how wrong an entry is (0 = right)."""
CYCLIC = (
    (0.0, (64, 32, 72)),
    (0.25, (49, 111, 186)),
    (0.5, (247, 247, 247)),
    (0.75, (196, 78, 52)),
    (1.0, (64, 32, 72)),
)
"""Dark, blue, white, red and back to the same dark: angles from -180° to 180°, whose two ends are one angle."""
SCALES = {"sequential": SEQUENTIAL, "diverging": DIVERGING, "error": ERROR, "cyclic": CYCLIC}
MISSING = "#9e9e9e"
"""Fill for NaN, inf or absent entries."""
WIDTH = 360
"""The widest a picture is drawn, in viewBox units. Pictures shrink with their box: on a 390 px phone the
narrowest box (a failing check's) is about 330 px wide, which keeps 11-unit labels at about 10 px."""
GRID_HEIGHT = 480
"""The tallest a heat map's grid is drawn (a table of 50 positions, one row each, fits)."""
MIN_CELL, MAX_CELL = 6.0, 40.0
"""The smallest and largest side of a heat map's cell, in viewBox units."""
VALUE_FONT = FONT * 0.9
"""Size of the values written in cells."""
BAND_GAP = 10.0
"""Space between the bands of a heat map whose columns wrap."""
HATCH = 6.0
"""Spacing of the diagonal lines across a blocked cell."""


def _esc(s):
    return escape(str(s), quote=True)


def _num(x):
    """A coordinate: short and locale-free."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def _edge(x):
    """A coordinate as ``_num`` writes it (one decimal), as a number."""
    return float(f"{x:.1f}")


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
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b < 140


def _finite(values):
    return [v for row in values for v in row if v is not None and math.isfinite(v)]


def _text_width(label):
    # Wide (CJK) characters take about twice the room of Latin ones.
    return sum(FONT * (1.0 if ord(ch) > 0x2E80 else 0.62) for ch in str(label))


def _svg(width, height, body, *, label):
    # A picture shrinks with its box. One wider than WIDTH (a grid too wide for legible cells) keeps 90% of
    # its size and scrolls inside its box instead of shrinking its labels out of reach.
    style = f"max-width:{_num(width)}px" + (f";min-width:{_num(0.9 * width)}px" if width > WIDTH else "")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_num(width)} {_num(height)}" '
        f'width="100%" style="{style}" role="img" aria-label="{_esc(label)}" '
        f'font-size="{FONT}" font-family="system-ui, sans-serif">{body}</svg>'
    )


def _tick_every(n, room, label_room):
    """Label every k-th of ``n`` slots (k in 1, 2, 5, 10, ...) of ``room`` units so labels do not overlap."""
    for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        if room * k >= label_room or k >= n:
            return k
    return n


def _cells(n_rows, n_cols, room, value_room, show_values):
    """``(cell side, columns per band, values written)`` for a grid at most ``room`` units wide.

    The cells are as large as the room allows (``MIN_CELL`` to ``MAX_CELL``, the grid at most ``GRID_HEIGHT``
    tall). When the values do not fit in such cells, the columns wrap into bands of cells wide enough for
    them, as long as the bands together stay under ``GRID_HEIGHT``: a short, wide grid (2 x 12) then reads
    like a wrapped line of text. Otherwise values are written only when ``show_values`` insists.
    """
    n_rows, n_cols = max(n_rows, 1), max(n_cols, 1)
    cell = max(MIN_CELL, min(MAX_CELL, room / n_cols, GRID_HEIGHT / n_rows))
    if show_values is False:
        return cell, n_cols, False
    if cell >= value_room:
        return cell, n_cols, True
    per_band = max(1, int(room // value_room))
    bands = math.ceil(n_cols / per_band)
    per_band = math.ceil(n_cols / bands)
    wide = min(MAX_CELL, room / per_band)
    if bands > 1 and wide >= value_room and bands * n_rows * wide <= GRID_HEIGHT:
        return wide, per_band, True
    return cell, n_cols, bool(show_values)


def _hatch(x, y, side):
    """Diagonal segments filling the square at ``(x, y)``, each clipped to it (path data)."""
    out = []
    k = HATCH
    while k < 2 * side:
        if k <= side:
            out.append(f"M{_num(x)} {_num(y + k)}L{_num(x + k)} {_num(y)}")
        else:
            out.append(f"M{_num(x + k - side)} {_num(y + side)}L{_num(x + side)} {_num(y + k - side)}")
        k += HATCH
    return "".join(out)


def heatmap(
    values,
    *,
    row_labels=None,
    col_labels=None,
    x_label="",
    y_label="",
    scale="sequential",
    vmin=None,
    vmax=None,
    legend="",
    label="",
    show_values=None,
    value_format=None,
    binary=None,
    blocked=None,
    blocked_label="",
    missing_label="",
):
    """A grid of coloured cells with axis labels and, beneath it, a legend; at most ``WIDTH`` units wide.

    The cells are as large as that width allows; when their values do not fit, a short grid wraps its
    columns into bands, each with its own column labels (see ``_cells``), so that a phone shows every
    value without shrinking it. The legend sits under the grid, so it is never the part cut off.

    Args:
        values: rows of numbers (``None``, NaN and inf are drawn grey).
        row_labels, col_labels: one label per row / column (default: the index).
        x_label, y_label: axis titles.
        scale: ``"sequential"``, ``"diverging"`` (symmetric around 0), ``"error"`` or ``"cyclic"`` (angles: both
            ends one colour).
        vmin, vmax: the colour range (default: the data's range).
        legend: the colour bar's title.
        label: the accessible name of the picture.
        show_values: write each value in its cell (default: when the cells are large enough).
        value_format: how a value is written in its cell (default: ``label_number``).
        binary: ``(name of 1, name of 0)`` for a grid of 0s and 1s (differs / matches): its cells take the
            scale's two ends, and the legend is two named swatches instead of a colour bar.
        blocked: rows of booleans, ``True`` where a cell is blocked (by a mask): such cells are hatched,
            and the legend names the hatching ``blocked_label``.
        missing_label: the legend's name for the grey of NaN, inf and absent cells, shown when there are any.
    """
    rows = [list(r) for r in values] or [[]]
    n_rows, n_cols = len(rows), max((len(r) for r in rows), default=0)
    row_labels = [str(x) for x in (row_labels if row_labels is not None else range(n_rows))]
    col_labels = [str(x) for x in (col_labels if col_labels is not None else range(n_cols))]
    finite = _finite(rows)
    if binary:
        lo, hi = 0.0, 1.0
    else:
        lo = vmin if vmin is not None else (min(finite) if finite else 0.0)
        hi = vmax if vmax is not None else (max(finite) if finite else 1.0)
        if scale == "diverging" and vmin is None and vmax is None:
            bound = max(abs(lo), abs(hi)) or 1.0
            lo, hi = -bound, bound
        if hi <= lo:
            hi = lo + 1.0
    stops = SCALES[scale]
    fmt = value_format or label_number
    value_room = max((_text_width(fmt(v)) for v in finite), default=FONT) * VALUE_FONT / FONT + 6
    row_room = max((_text_width(s) for s in row_labels), default=0)
    col_room = max((_text_width(s) for s in col_labels), default=0)
    # Words wider than their column are turned so that every column keeps its label; numbers are thinned.
    numeric = all(s.lstrip("-").isdigit() for s in col_labels)

    # The y-axis title runs up the left side when it fits beside the grid, else it sits above the grid.
    for y_beside in (True, False) if y_label else (False,):
        left = row_room + 8 + (FONT + 8 if y_beside else 0)
        cell, per_band, written = _cells(n_rows, n_cols, WIDTH - left - 4, value_room, False if binary else show_values)
        bands = max(1, math.ceil(n_cols / per_band))
        rotate = not numeric and col_room + 4 > cell
        col_label_h = (col_room * 0.72 + FONT if rotate else FONT + 4) + 4
        band_h = n_rows * cell + col_label_h + BAND_GAP
        grid_area_h = bands * band_h - BAND_GAP - col_label_h
        if not y_beside or _text_width(y_label) <= grid_area_h:
            break
    top = 6 + (FONT + 8 if y_label and not y_beside else 0)
    grid_w = cell * min(per_band, n_cols)
    bottom_of_grids = top + bands * band_h - BAND_GAP

    parts, light_hatch, dark_hatch = [], [], []
    for b in range(bands):
        y0 = top + b * band_h
        columns = range(b * per_band, min((b + 1) * per_band, n_cols))
        for i, row in enumerate(rows):
            for j in columns:
                v = row[j] if j < len(row) else None
                ok = v is not None and math.isfinite(v)
                fill = colour((v - lo) / (hi - lo), stops) if ok else MISSING
                x, y = left + (j - columns.start) * cell, y0 + i * cell
                shown = (binary[0] if v >= 0.5 else binary[1]) if ok and binary else (label_number(v) if ok else v)
                tip = f"{row_labels[i]} / {col_labels[j]}: {shown}"
                # crispEdges: no hairline seams between cells whose sides fall between pixels. Each side is where
                # the next cell begins, both rounded as written: a width rounded on its own would leave a gap of
                # up to 0.1 unit now and then, a pixel-wide white line across the grid.
                w, h = _edge(x + cell) - _edge(x), _edge(y + cell) - _edge(y)
                parts.append(
                    f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" '
                    f'fill="{fill}" shape-rendering="crispEdges"><title>{_esc(tip)}</title></rect>'
                )
                if blocked is not None and i < len(blocked) and j < len(blocked[i]) and blocked[i][j]:
                    (light_hatch if _dark(fill) else dark_hatch).append(_hatch(x, y, cell))
                if written:
                    ink = "#fff" if ok and _dark(fill) else "#111"
                    parts.append(
                        f'<text x="{_num(x + cell / 2)}" y="{_num(y + cell / 2 + VALUE_FONT * 0.35)}" '
                        f'text-anchor="middle" font-size="{_num(VALUE_FONT)}" fill="{ink}">'
                        f"{_esc(fmt(v) if ok else '?')}</text>"
                    )
        width_b = cell * len(columns)
        parts.append(
            f'<rect x="{_num(left)}" y="{_num(y0)}" width="{_num(width_b)}" '
            f'height="{_num(n_rows * cell)}" fill="none" stroke="#555" stroke-width="0.6"/>'
        )
        # Row labels (every k-th when the cells are small), repeated beside each band.
        k = _tick_every(n_rows, cell, FONT + 4)
        for i in range(0, n_rows, k):
            y = y0 + i * cell + cell / 2 + FONT * 0.35
            parts.append(f'<text x="{_num(left - 5)}" y="{_num(y)}" text-anchor="end">{_esc(row_labels[i])}</text>')
        # Column labels under each band, rotated when they do not fit under a cell.
        base = y0 + n_rows * cell + 4
        k = _tick_every(n_cols, cell, FONT + 4 if rotate else col_room + 4)
        for j in (j for j in columns if j % k == 0):
            x = left + (j - columns.start) * cell + cell / 2
            if rotate:
                x += FONT * 0.35
                parts.append(
                    f'<text x="{_num(x)}" y="{_num(base)}" text-anchor="end" '
                    f'transform="rotate(-45 {_num(x)} {_num(base)})">{_esc(col_labels[j])}</text>'
                )
            else:
                parts.append(
                    f'<text x="{_num(x)}" y="{_num(base + FONT)}" text-anchor="middle">{_esc(col_labels[j])}</text>'
                )
    for strokes, ink in ((light_hatch, "#fff"), (dark_hatch, "#333")):
        if strokes:
            parts.append(
                f'<path d="{"".join(strokes)}" stroke="{ink}" stroke-opacity="0.45" stroke-width="1" fill="none"/>'
            )

    y = bottom_of_grids
    width = left + grid_w + 4
    if x_label:
        y += FONT + 6
        width = max(width, _text_width(x_label) + 4)
        cx = max(left + grid_w / 2, _text_width(x_label) / 2 + 2)
        parts.append(
            f'<text x="{_num(cx)}" y="{_num(y)}" text-anchor="middle" font-weight="600">{_esc(x_label)}</text>'
        )
    if y_beside:
        cy = top + grid_area_h / 2
        parts.append(
            f'<text x="{_num(FONT)}" y="{_num(cy)}" text-anchor="middle" font-weight="600" '
            f'transform="rotate(-90 {_num(FONT)} {_num(cy)})">{_esc(y_label)}</text>'
        )
    elif y_label:
        width = max(width, _text_width("↓ " + y_label) + 4)
        parts.append(f'<text x="2" y="{_num(6 + FONT)}" font-weight="600">↓ {_esc(y_label)}</text>')

    items = []
    if binary:
        items.append(_swatches([(binary[0], colour(1.0, stops)), (binary[1], colour(0.0, stops))]))
    else:
        items.append(_colour_bar(lo, hi, stops, legend))
    if blocked is not None and blocked_label:
        items.append(_hatch_swatch(colour(0.0, stops), blocked_label))
    if missing_label and len(finite) < n_rows * n_cols:
        items.append(_swatches([(missing_label, MISSING)]))
    legend_svg, width, y = _legend_rows(items, left, y + 10, width)
    parts.append(legend_svg)
    return _svg(width, y + 4, "".join(parts), label=label or legend)


def _legend_rows(items, left, top, width):
    """Place legend items (``(width, height, draw(x, y))``) in rows under the grid, starting at the grid's left
    edge when they fit there; returns ``(svg, picture width, bottom)``."""
    gap = 16.0
    total = sum(w for w, _, _ in items) + gap * (len(items) - 1)
    room = max(width, WIDTH)
    x0 = left if left + total <= room else 2.0
    parts, x, y, row_h = [], x0, top, 0.0
    for w, h, draw in items:
        if x > x0 and x + w > room:
            x, y, row_h = x0, y + row_h + 6, 0.0
        parts.append(draw(x, y))
        width = max(width, x + w + 2)
        x, row_h = x + w + gap, max(row_h, h)
    return '<g class="legend">' + "".join(parts) + "</g>", width, y + row_h


def _colour_bar(lo, hi, stops, title):
    """A horizontal colour bar with its title on the left and lo, middle and hi beneath."""
    title_w = _text_width(title) + 6 if title else 0.0
    bar_w, steps = 120.0, 24

    def draw(x, y):
        bx = x + title_w
        parts = [f'<text x="{_num(x)}" y="{_num(y + 9)}">{_esc(title)}</text>'] if title else []
        for s in range(steps):
            parts.append(
                f'<rect x="{_num(bx + s * bar_w / steps)}" y="{_num(y)}" width="{_num(bar_w / steps + 0.3)}" '
                f'height="10" fill="{colour((s + 0.5) / steps, stops)}"/>'
            )
        parts.append(
            f'<rect x="{_num(bx)}" y="{_num(y)}" width="{_num(bar_w)}" height="10" fill="none" '
            f'stroke="#555" stroke-width="0.6"/>'
        )
        ty = y + 10 + FONT + 1
        for value, tx, anchor in (
            (lo, bx, "start"),
            ((lo + hi) / 2, bx + bar_w / 2, "middle"),
            (hi, bx + bar_w, "end"),
        ):
            parts.append(
                f'<text x="{_num(tx)}" y="{_num(ty)}" text-anchor="{anchor}">{_esc(label_number(value))}</text>'
            )
        return "".join(parts)

    return title_w + bar_w, 10 + FONT + 4, draw


def _swatches(named):
    """Named colour squares side by side: the legend of a two-valued grid."""
    widths = [12 + 4 + _text_width(name) for name, _ in named]

    def draw(x, y):
        parts = []
        for (name, fill), w in zip(named, widths):
            parts.append(
                f'<rect x="{_num(x)}" y="{_num(y)}" width="12" height="12" fill="{fill}" stroke="#555" '
                f'stroke-width="0.6"/><text x="{_num(x + 16)}" y="{_num(y + 10)}">{_esc(name)}</text>'
            )
            x += w + 12
        return "".join(parts)

    return sum(widths) + 12 * (len(named) - 1), 12, draw


def _hatch_swatch(fill, name):
    """A hatched square and its name: what a blocked cell looks like."""

    def draw(x, y):
        ink = "#fff" if _dark(fill) else "#333"
        return (
            f'<rect x="{_num(x)}" y="{_num(y)}" width="12" height="12" fill="{fill}" stroke="#555" '
            f'stroke-width="0.6"/><path d="{_hatch(x, y, 12)}" stroke="{ink}" stroke-opacity="0.45" '
            f'stroke-width="1" fill="none"/><text x="{_num(x + 16)}" y="{_num(y + 10)}">{_esc(name)}</text>'
        )

    return 16 + _text_width(name), 12, draw


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


def line_chart(
    ys,
    *,
    xs=None,
    x_label="",
    y_label="",
    log_y=None,
    reference_line=None,
    reference_label="",
    label="",
    x_max=None,
    stop=None,
):
    """A line through ``(xs[i], ys[i])`` with axes, ticks and an optional horizontal reference line.

    Non-finite values break the line (and are left out). ``log_y``: logarithmic y axis (default: when
    the positive values span more than two decades). ``x_max``: where the x axis ends (default: the last
    x), so that a run that stopped early shows how far it got. ``stop``: ``(x, text)``, a red vertical line
    at ``x`` labelled ``text`` (where the values became NaN).
    """
    xs = list(xs) if xs is not None else list(range(len(ys)))
    points = [(x, y) for x, y in zip(xs, ys) if y is not None and math.isfinite(y)]
    width, height = WIDTH, 220.0
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
        y_ticks = [10.0**d for d in range(lo_d, hi_d + 1)]
    else:
        fy = float
        y_lo, y_hi = min(points_y + [0.0]), max(points_y)
        y_ticks = nice_ticks(y_lo, y_hi)
        y_lo, y_hi = min(y_lo, y_ticks[0]), max(y_hi, y_ticks[-1])
        if y_hi <= y_lo:
            y_hi = y_lo + 1.0
    x_lo, x_hi = (min(xs), max(xs + [x_max] if x_max is not None else xs)) if xs else (0, 1)
    if x_hi <= x_lo:
        x_hi = x_lo + 1

    def px(x):
        return left + (x - x_lo) / (x_hi - x_lo) * pw

    def py(y):
        return top + ph - (fy(y) - y_lo) / (y_hi - y_lo) * ph

    parts = [
        f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(pw)}" height="{_num(ph)}" fill="#fafafa" '
        f'stroke="#888" stroke-width="0.6"/>'
    ]
    for t in y_ticks:
        y = py(t)
        parts.append(
            f'<line x1="{_num(left)}" x2="{_num(left + pw)}" y1="{_num(y)}" y2="{_num(y)}" '
            f'stroke="#ddd" stroke-width="0.6"/>'
        )
        parts.append(
            f'<text x="{_num(left - 5)}" y="{_num(y + FONT * 0.35)}" text-anchor="end">{_esc(label_number(t))}</text>'
        )
    for t in nice_ticks(x_lo, x_hi, 6):
        x = px(t)
        parts.append(
            f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{_num(top + ph)}" y2="{_num(top + ph + 4)}" stroke="#888"/>'
        )
        parts.append(
            f'<text x="{_num(x)}" y="{_num(top + ph + 6 + FONT)}" text-anchor="middle">{_esc(label_number(t))}</text>'
        )
    if reference_line is not None:
        y = py(reference_line)
        parts.append(
            f'<line x1="{_num(left)}" x2="{_num(left + pw)}" y1="{_num(y)}" y2="{_num(y)}" '
            f'stroke="#c62828" stroke-width="1" stroke-dasharray="5 3"/>'
        )
        if reference_label:
            parts.append(
                f'<text x="{_num(left + pw - 4)}" y="{_num(y - 4)}" text-anchor="end" fill="#c62828">'
                f"{_esc(reference_label)}</text>"
            )
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
        parts.append(f'<path d="{d}" fill="none" stroke="#1565c0" stroke-width="1.8" stroke-linejoin="round"/>')
    for seg in segments:
        if len(seg) == 1:
            parts.append(f'<circle cx="{_num(seg[0][0])}" cy="{_num(seg[0][1])}" r="2.5" fill="#1565c0"/>')
    if stop is not None:
        x = px(stop[0])
        # The label reads leftwards from the line when the line is in the right half of the plot.
        anchor, dx = ("end", -4) if x > left + pw / 2 else ("start", 4)
        parts.append(
            f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{_num(top)}" y2="{_num(top + ph)}" '
            f'stroke="#c62828" stroke-width="1.5" stroke-dasharray="4 2"/>'
            f'<text x="{_num(x + dx)}" y="{_num(top + FONT + 4)}" text-anchor="{anchor}" fill="#c62828" '
            f'font-weight="600">{_esc(stop[1])}</text>'
        )
    if x_label:
        parts.append(
            f'<text x="{_num(left + pw / 2)}" y="{_num(height - 6)}" text-anchor="middle" '
            f'font-weight="600">{_esc(x_label)}</text>'
        )
    if y_label:
        cy = top + ph / 2
        parts.append(
            f'<text x="{_num(FONT)}" y="{_num(cy)}" text-anchor="middle" font-weight="600" '
            f'transform="rotate(-90 {_num(FONT)} {_num(cy)})">{_esc(y_label)}</text>'
        )
    return _svg(width, height, "".join(parts), label=label or y_label)


def bar(value, maximum, *, label=""):
    """A horizontal score bar: the filled part is ``value / maximum``; green when full, amber, red at 0."""
    frac = 0.0 if not maximum else max(0.0, min(1.0, value / maximum))
    fill = "#2e7d32" if frac >= 1.0 else ("#c62828" if frac == 0 else "#ef8f00")
    width = 100 * frac
    inner = f'<rect x="0" y="0" width="{_num(width)}" height="10" fill="{fill}"/>' if width > 0 else ""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" '
        f'width="100%" height="10" role="img" aria-label="{_esc(label)}">'
        f'<rect x="0" y="0" width="100" height="10" fill="#e6e6e6"/>{inner}</svg>'
    )
