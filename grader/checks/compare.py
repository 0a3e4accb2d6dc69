"""Comparing a submission's tensors with the reference's, and saying how they differ.

A failure reports shapes, the first differing position, the number of
differing entries and the max absolute and relative error, never the
reference's values.
"""

import torch

from grader.checks.fail import Fail

# float64 runs: absorbs constants born in float32 (~1e-6 relative) and nothing more.
TOL = {
    "float64": (1e-5, 1e-5),
    "float32": (1e-4, 1e-4),
}


def check_tensor(got, expected, *, what, dtype="float64", example=None, atol=None, rtol=None):
    """Raise ``Fail`` unless ``got`` matches ``expected`` in shape, dtype and values."""
    example = dict(example or {})
    if list(got.shape) != list(expected.shape):
        raise Fail("fail.shape", what=what, expected=list(expected.shape), got=list(got.shape), example=example)
    if got.dtype != expected.dtype:
        raise Fail("fail.dtype", what=what, expected=_dt(expected.dtype), got=_dt(got.dtype), example=example)
    if expected.dtype == torch.bool or not expected.is_floating_point():
        bad = got != expected
        if bad.any():
            index = [int(i) for i in bad.nonzero()[0]]
            raise Fail(
                "fail.values_exact",
                what=what,
                index=index,
                count=int(bad.sum()),
                total=bad.numel(),
                example=example,
                artifacts={"mismatch": mismatch_map(bad.float())},
            )
        return
    a_tol, r_tol = TOL.get(dtype, TOL["float32"])
    a_tol, r_tol = atol if atol is not None else a_tol, rtol if rtol is not None else r_tol
    exp = expected.to(torch.float64)
    g = got.to(torch.float64)
    finite = torch.isfinite(exp)
    if (~torch.isfinite(g) & finite).any():
        bad = ~torch.isfinite(g) & finite
        index = [int(i) for i in bad.nonzero()[0]]
        raise Fail("fail.nonfinite", what=what, index=index, count=int(bad.sum()), total=bad.numel(), example=example)
    diff = (g - exp).abs()
    diff = torch.where(finite, diff, torch.where(g == exp, 0.0, float("inf")))
    bad = diff > a_tol + r_tol * exp.abs()
    if bad.any():
        index = [int(i) for i in bad.nonzero()[0]]
        max_abs = float(diff[finite].max()) if finite.any() else float("inf")
        # The submission's own value where it first differs; never the reference's (the expected values are the
        # hidden examples' answers), except that an expected 0 is said (fail.mismatch_abs).
        values = {"got_at": _fmt(float(g[tuple(index)]))}
        # A relative error means something only against an expected value that is not 0 (against 0 it is the
        # absolute error over 1e-12): where every differing entry expects 0, the absolute error says it all.
        scaled = bad & finite & (exp != 0)
        max_rel = float((diff / exp.abs())[scaled].max()) if scaled.any() else None
        example.update(first_index=index, max_abs_error=max_abs, mismatched=int(bad.sum()), total=bad.numel())
        if max_rel is not None:
            example["max_rel_error"] = max_rel
        artifacts = {"mismatch": mismatch_map(diff)}
        if expected.dim() == 0:
            raise Fail(
                "fail.mismatch_value", what=what, max_abs=_fmt(max_abs), example=example, artifacts=artifacts, **values
            )
        if max_rel is None:
            raise Fail(
                "fail.mismatch_abs",
                what=what,
                index=index,
                count=int(bad.sum()),
                total=bad.numel(),
                max_abs=_fmt(max_abs),
                example=example,
                artifacts=artifacts,
                **values,
            )
        raise Fail(
            "fail.mismatch",
            what=what,
            index=index,
            count=int(bad.sum()),
            total=bad.numel(),
            max_abs=_fmt(max_abs),
            max_rel=_fmt(max_rel),
            example=example,
            artifacts=artifacts,
            **values,
        )


MISMATCH = ("fail.mismatch", "fail.mismatch_abs", "fail.mismatch_value")
"""The keys of a value mismatch within tolerance's reach (``check_tensor``): the shapes and dtypes agree."""


def mismatch_map(diff, limit=32):
    """The error folded onto its last two axes (max over the leading ones), as nested lists for a heat map."""
    d = diff.detach().to(torch.float64)
    if d.dim() == 0:
        d = d.reshape(1, 1)
    elif d.dim() == 1:
        d = d.unsqueeze(0)
    while d.dim() > 2:
        d = d.amax(dim=0)
    d = d[:limit, :limit]
    return [[float(x) for x in row] for row in d]


def _dt(dtype):
    return str(dtype).replace("torch.", "")


def _fmt(x):
    return f"{x:.3g}"
