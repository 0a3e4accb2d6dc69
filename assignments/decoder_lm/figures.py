"""The data behind the decoder-only LM's report pictures, gathered once by running a few probes on both runners.

``collect(sub=..., ref=...)`` returns plain data (lists of floats, strings and booleans, never tensors), stored
in ``GradeResult.figures`` and drawn by the HTML view: ``{"heatmaps": [attention, rope_scores, rope_angles]}``,
three figures of the kit's generic heat-map kind (``docs/ASSIGNMENTS.md``, *Pictures*):

- ``attention``: the weights of the submission's and the reference's ``causal_attention`` for one line of a
  poem (one character per token), the cells the contract's causal rule blocks hatched: a weight under a hatched
  cell is a leak from the future. The weights are read off the output by passing the identity as the values
  (``v = I``: output row ``i`` is weight row ``i``);
- two figures drawn from ``RotaryEmbedding``: ``rope_scores``, the score ``s[m, n] = <rope(q)[m], rope(k)[n]>``
  of one query vector ``q`` placed at every position ``m`` and one key vector ``k`` placed at every position
  ``n`` (a correct RoPE makes it constant along each diagonal: it depends on ``m - n`` only), the keys rotated in
  chunks with offsets, as a KV cache feeds them; and ``rope_angles``, the angle each pair ``(i, i + Dh/2)`` is
  turned by at each position, the cells where the rotated unit vector leaves its pair's plane hatched (a wrong
  pairing).

The submission's own code is drawn; where it raises (or returns something unusable) the figure records the
reason as its ``error`` (a message key and its parameters) and the reference's panels stand alone. Nothing
here may fail the grading run. Every sentence is a message key (``messages/figures_<lang>.py``, or the kit's
``report.figure_*`` errors).
"""

import math

import torch

from assignments.decoder_lm.corpus import load_poems
from grader.author import SubmissionError, failure, returned, rows

D_ATTENTION = 16
"""Width of the made-up query and key vectors of the attention picture."""
ATTENTION_SCALE = 1.5
"""How much the query and key projections are stretched: weights neither uniform nor one-hot."""
ROPE_DIM = 16
"""The head size of the RoPE pictures (8 pairs)."""
ROPE_LEN = 24
"""Positions 0 ... 23 in the RoPE pictures."""
ROPE_CHUNK = 8
"""The keys are rotated 8 at a time, at offsets 0, 8 and 16: a RoPE that ignores ``offset`` repeats itself."""
ANGLE_RUN = 16
ANGLE_POSITIONS = tuple(range(ANGLE_RUN)) + tuple(2**k for k in range(5, 13))
"""The rows of the angle picture: positions 0 … 15, then 32, 64, … 4096, where the slow pairs have turned too
(and angles computed in half precision would be off)."""
SEED = 0


def collect(*, sub, ref):
    """The figures' data: ``{"heatmaps": [attention, scores, angles]}``; see the module docstring."""
    return {"heatmaps": [attention(sub=sub, ref=ref), rope_scores(sub=sub, ref=ref), rope_angles(sub=sub, ref=ref)]}


# -- attention -----------------------------------------------------------------------------------------------------
def poem_line(min_len=8, max_len=14):
    """The first line (up to the first full stop, punctuation included) of the first poem whose line has
    ``min_len`` to ``max_len`` characters: one token per character, as the model reads it."""
    poems = load_poems()
    for poem in poems:
        line = poem.text.split("。", 1)[0] + "。"
        if min_len <= len(line) <= max_len:
            return list(line)
    return list(poems[0].text[:max_len])


def attention_inputs(chars, d=D_ATTENTION, seed=SEED):
    """Query and key ``[1, 1, L, d]`` and the values ``[1, 1, L, L]`` (the identity), float64.

    The same character gets the same embedding; query and key are two seeded random projections of it, scaled so
    that the weights are neither uniform nor one-hot.
    """
    g = torch.Generator().manual_seed(seed)
    vocab = sorted(set(chars))
    table = torch.randn(len(vocab), d, generator=g, dtype=torch.float64)
    x = table[[vocab.index(c) for c in chars]]  # [L, d]
    w_q = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    w_k = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    q = (x @ w_q * ATTENTION_SCALE)[None, None]
    k = (x @ w_k * ATTENTION_SCALE)[None, None]
    v = torch.eye(len(chars), dtype=torch.float64)[None, None]
    return q, k, v


def causal(L):
    """The contract's keep-mask ``[L, L]``: query ``i`` sees keys ``0 … i``."""
    return torch.ones(L, L, dtype=torch.bool).tril()


def attention(*, sub, ref):
    """The ``attention`` heat-map figure: both runners' weights ``[L][L]`` for the line, labelled with its characters,
    the cells the causal rule blocks hatched, and what the comparison says. Besides the figure's fields, the data
    keeps ``characters``, ``max_abs_diff`` (``None`` when a side is missing or has NaN/inf where the other has a
    number), ``leaks`` (how many blocked cells of the submission's weights are not 0; a sentence says so) and
    ``reference_error``."""
    chars = poem_line()
    L = len(chars)
    q, k, v = attention_inputs(chars)
    blocked = (~causal(L)).tolist()
    ref_w, ref_error = _weights(ref, q, k, v, L)
    sub_w, sub_error = _weights(sub, q, k, v, L)
    diff = None
    if sub_w is not None and ref_w is not None:
        pairs = [(a, b) for ra, rb in zip(sub_w, ref_w) for a, b in zip(ra, rb)]
        if all((a is None) == (b is None) for a, b in pairs):
            diff = max((abs(a - b) for a, b in pairs if a is not None), default=0.0)
    panels, comparison = [], []
    for title, weights in (("lm.fig.attention_yours", sub_w), ("lm.fig.attention_reference", ref_w)):
        if weights is not None:
            panels.append(
                {
                    "title": title,
                    "values": weights,
                    "row_labels": chars,
                    "col_labels": chars,
                    "x_label": "lm.fig.axis_key",
                    "y_label": "lm.fig.axis_query",
                    "scale": "sequential",
                    "vmin": 0.0,
                    "vmax": 1.0,
                    "legend": "lm.fig.attention_legend",
                    "decimals": 2,
                    "blocked": blocked,
                    "blocked_label": "lm.fig.attention_blocked",
                }
            )
    leaks = 0
    if sub_w is not None:
        leaks = sum(1 for i, row in enumerate(sub_w) for j, w in enumerate(row) if j > i and (w is None or w != 0))
        if leaks:
            comparison.append({"key": "lm.fig.attention_leaks", "params": {"count": leaks, "total": L * (L - 1) // 2}})
    if diff is not None:
        comparison.append(
            {"key": "lm.fig.attention_same"}
            if diff <= 1e-6
            else {"key": "lm.fig.attention_differs", "params": {"diff": diff}}
        )
    return {
        "id": "attention",
        "title": "lm.fig.attention_title",
        "note": "lm.fig.attention_note",
        "quote": [{"text": "".join(chars), "lang": "zh-CN"}],
        "error": sub_error,
        "panels": panels,
        "comparison": comparison,
        "characters": chars,
        "max_abs_diff": diff,
        "leaks": leaks,
        "reference_error": ref_error,
    }


def _weights(runner, q, k, v, L):
    """``(weights as rows, None)`` or ``(None, error)``: ``causal_attention(q, k, I)``, which is the weights."""
    try:
        got = runner.run("call", "integrated", name="causal_attention", args=[q, k, v])
        out = got.get("out")
        if out is None:
            return None, {"key": "lm.fig.not_tensor", "params": {"what": "causal_attention", "got": returned(got)}}
        if list(out.shape) != [1, 1, L, L]:
            return None, {
                "key": "report.figure_shape",
                "params": {"what": "causal_attention(q, k, v)", "got": list(out.shape), "expected": [1, 1, L, L]},
            }
        return rows(out.reshape(L, L)), None
    except SubmissionError as err:
        return None, failure(err)
    except Exception as exc:  # noqa: BLE001 - a picture must never sink the report
        return None, {"key": "report.figure_failed", "params": {"detail": f"{type(exc).__name__}: {exc}"}}


# -- RoPE ----------------------------------------------------------------------------------------------------------
def rope_vectors(d=ROPE_DIM, seed=SEED):
    """The query and key vectors ``[d]`` of the score picture: seeded, unit length (so a correct RoPE's scores
    lie in [-1, 1])."""
    g = torch.Generator().manual_seed(seed + 1)
    q, k = torch.randn(2, d, generator=g, dtype=torch.float64)
    return q / q.norm(), k / k.norm()


def _rotate(runner, x, offset=None):
    """``RotaryEmbedding(ROPE_DIM)(x, offset)`` on ``runner`` (``offset`` left out when ``None``): a tensor, or a
    ``SubmissionError`` / any exception raised through."""
    inputs = [x] if offset is None else [x, offset]
    got = runner.run(
        "forward", "integrated", name="RotaryEmbedding", kwargs={"head_dim": ROPE_DIM}, state={}, inputs=inputs
    )
    out = got["out"]
    if list(out.shape) != list(x.shape):
        raise _Unusable(
            {
                "key": "report.figure_shape",
                "params": {
                    "what": f"RotaryEmbedding(head_dim={ROPE_DIM})({', '.join(('x', 'offset')[: len(inputs)])})",
                    "got": list(out.shape),
                    "expected": list(x.shape),
                },
            }
        )
    return out.to(dtype=torch.float64, device="cpu")


class _Unusable(Exception):
    """The runner answered, but not with something a picture can be drawn from: ``args[0]`` is the figure error."""


def _guarded(compute, runner):
    """``(compute(runner), None)`` or ``(None, error)``: whatever the code raised, as a figure error."""
    try:
        return compute(runner), None
    except _Unusable as bad:
        return None, bad.args[0]
    except SubmissionError as err:
        return None, failure(err)
    except Exception as exc:  # noqa: BLE001 - a picture must never sink the report
        return None, {"key": "report.figure_failed", "params": {"detail": f"{type(exc).__name__}: {exc}"}}


def score_matrix(runner, L=ROPE_LEN, chunk=ROPE_CHUNK):
    """``s[m][n] = <rope(q)[m], rope(k)[n]>`` (float64, ``[L, L]``): the queries rotated in one call (positions
    0 … L-1, ``offset`` left out), the keys in chunks of ``chunk`` rows with ``offset`` 0, chunk, 2·chunk, …"""
    q, k = rope_vectors()
    queries = _rotate(runner, q.expand(1, 1, L, ROPE_DIM).clone())[0, 0]  # [L, Dh]
    keys = torch.cat(
        [
            _rotate(runner, k.expand(1, 1, min(chunk, L - start), ROPE_DIM).clone(), start)[0, 0]
            for start in range(0, L, chunk)
        ]
    )  # [L, Dh]
    return queries @ keys.T


def diagonal_spread(s):
    """The largest ``max - min`` along one diagonal of ``s`` (``[L, L]``; 0 for a Toeplitz matrix; ``inf``
    when some entry is not finite)."""
    if not torch.isfinite(s).all():
        return math.inf
    L = s.shape[0]
    return max(float(d.max() - d.min()) for d in (torch.diagonal(s, offset) for offset in range(-(L - 1), L)))


def rope_scores(*, sub, ref):
    """The ``rope_scores`` heat-map figure: the submission's and the reference's score matrices side by side on one
    colour scale, and what they say (constant diagonals or not, how far from the reference)."""
    ref_s, ref_error = _guarded(score_matrix, ref)
    sub_s, sub_error = _guarded(score_matrix, sub)
    L = ROPE_LEN
    labels = [str(p) for p in range(L)]
    # One colour scale for both panels, from the lowest to the highest score either has: the scores of two unit
    # vectors vary over a small range, which a fixed [-1, 1] scale would wash out.
    finite = torch.cat([s[torch.isfinite(s)] for s in (sub_s, ref_s) if s is not None] or [torch.zeros(1)])
    lo, hi = _round_out(float(finite.min()), float(finite.max())) if finite.numel() else (0.0, 1.0)
    bound = max(abs(lo), abs(hi)) or 1.0
    panels, comparison = [], []
    for title, s in (("lm.fig.rope_yours", sub_s), ("lm.fig.rope_reference", ref_s)):
        if s is not None:
            panels.append(
                {
                    "title": title,
                    "values": rows(s),
                    "row_labels": labels,
                    "col_labels": labels,
                    "x_label": "lm.fig.rope_axis_key",
                    "y_label": "lm.fig.rope_axis_query",
                    "scale": "sequential",
                    "vmin": lo,
                    "vmax": hi,
                    "legend": "lm.fig.rope_legend",
                    "show_values": False,
                }
            )
    spread = diff = None
    if sub_s is not None:
        spread = diagonal_spread(sub_s)
        if spread <= 1e-6 * bound:
            comparison.append({"key": "lm.fig.rope_diagonals_constant"})
        elif math.isfinite(spread):
            comparison.append({"key": "lm.fig.rope_diagonals_broken", "params": {"spread": float(f"{spread:.3g}")}})
        else:
            comparison.append({"key": "lm.fig.rope_nonfinite"})
        if ref_s is not None and math.isfinite(spread):
            diff = float((sub_s - ref_s).abs().max())
            comparison.append(
                {"key": "lm.fig.rope_same"}
                if diff <= 1e-6
                else {"key": "lm.fig.rope_differs", "params": {"diff": float(f"{diff:.3g}")}}
            )
        spread = spread if math.isfinite(spread) else None
    return {
        "id": "rope_scores",
        "title": "lm.fig.rope_scores_title",
        "note": {
            "key": "lm.fig.rope_scores_note",
            "params": {
                "head_dim": ROPE_DIM,
                "last": L - 1,
                "chunk": ROPE_CHUNK,
                "offsets": ", ".join(str(start) for start in range(0, L, ROPE_CHUNK)),
            },
        },
        "error": sub_error,
        "reference_error": ref_error,
        "panels": panels,
        "comparison": comparison,
        "diagonal_spread": spread,
        "max_abs_diff": diff,
    }


def pair_angles(runner, positions=ANGLE_POSITIONS):
    """``(angles, off_plane)``, both ``[len(positions), Dh/2]``: the angle (degrees, in (-180, 180]) by which the
    unit vector ``e_i`` is turned within the plane of coordinates ``i`` and ``i + Dh/2`` at each position (``None``
    where not finite), and whether the turned vector left that plane (less than 99% of its length in it).

    The first run of consecutive positions from 0 is rotated in one call (offset left out), each later position
    on its own with ``offset`` = that position."""
    half = ROPE_DIM // 2
    units = torch.eye(ROPE_DIM, dtype=torch.float64)[:half, None, :]  # [Dh/2, 1, Dh]: e_i
    run = next((n for n, p in enumerate(positions) if p != n), len(positions))
    parts = [_rotate(runner, units.expand(half, run, ROPE_DIM).clone())] if run else []
    parts += [_rotate(runner, units.clone(), p) for p in positions[run:]]
    y = torch.cat(parts, dim=1)  # [Dh/2, positions, Dh]
    idx = torch.arange(half)
    a = y[idx, :, idx].T  # [positions, Dh/2]: coordinate i of the turned e_i
    b = y[idx, :, idx + half].T  # coordinate i + Dh/2
    angles = torch.rad2deg(torch.atan2(b, a))
    total = y.norm(dim=-1).T
    off = ~(torch.sqrt(a**2 + b**2) >= 0.99 * total) | (total < 1e-9)
    return rows(angles), [[bool(v) for v in row] for row in off.tolist()]


def rope_angles(*, sub, ref):
    """The ``rope_angles`` heat-map figure: the submission's and the reference's angles by position and pair, the
    cells whose vector left its pair's plane hatched."""
    ref_a, ref_error = _guarded(pair_angles, ref)
    sub_a, sub_error = _guarded(pair_angles, sub)
    half = ROPE_DIM // 2
    rows, cols = [str(p) for p in ANGLE_POSITIONS], [str(i) for i in range(half)]
    panels, comparison = [], []
    for title, got in (("lm.fig.rope_yours", sub_a), ("lm.fig.rope_reference", ref_a)):
        if got is not None:
            panels.append(
                {
                    "title": title,
                    "values": got[0],
                    "row_labels": rows,
                    "col_labels": cols,
                    "x_label": {"key": "lm.fig.rope_axis_pair", "params": {"half": half}},
                    "y_label": "lm.fig.axis_position",
                    "scale": "cyclic",
                    "vmin": -180.0,
                    "vmax": 180.0,
                    "legend": "lm.fig.rope_angle_legend",
                    "blocked": got[1] if any(any(row) for row in got[1]) else None,
                    "blocked_label": {"key": "lm.fig.rope_off_plane", "params": {"half": half}},
                    "show_values": False,
                }
            )
    off = diff = None
    if sub_a is not None:
        off = sum(v for row in sub_a[1] for v in row)
        if off:
            comparison.append(
                {
                    "key": "lm.fig.rope_angles_off_plane",
                    "params": {"count": off, "total": len(rows) * half, "half": half},
                }
            )
        if ref_a is not None:
            gaps = [
                abs((a - b + 180.0) % 360.0 - 180.0)
                for ra, rb in zip(sub_a[0], ref_a[0])
                for a, b in zip(ra, rb)
                if a is not None and b is not None
            ]
            missing = any((a is None) != (b is None) for ra, rb in zip(sub_a[0], ref_a[0]) for a, b in zip(ra, rb))
            if not missing:
                diff = max(gaps, default=0.0)
                if not off:
                    comparison.append(
                        {"key": "lm.fig.rope_angles_same"}
                        if diff <= 1e-4
                        else {"key": "lm.fig.rope_angles_differ", "params": {"diff": float(f"{diff:.3g}")}}
                    )
    return {
        "id": "rope_angles",
        "title": "lm.fig.rope_angles_title",
        "note": {
            "key": "lm.fig.rope_angles_note",
            "params": {
                "head_dim": ROPE_DIM,
                "half": half,
                "run": ANGLE_RUN - 1,
                "far": ", ".join(str(p) for p in ANGLE_POSITIONS[ANGLE_RUN:]),
            },
        },
        "error": sub_error,
        "reference_error": ref_error,
        "panels": panels,
        "comparison": comparison,
        "off_plane": off,
        "max_angle_diff": diff,
    }


def _round_out(lo, hi):
    """``[lo, hi]`` widened to multiples of a round step (a twentieth of a power of ten at least): short labels
    on the colour bar (``-0.05 … 0.2``, not ``-0.0154 … 0.19``)."""
    if hi <= lo:
        return lo - 0.5, lo + 0.5
    step = 10.0 ** math.floor(math.log10(hi - lo)) / 2
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


# -- helpers -------------------------------------------------------------------------------------------------------
