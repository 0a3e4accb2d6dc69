"""Helpers for an assignment's ``figures`` module: probe results turned into the plain data a report draws."""

import math

import torch


def failure(err):
    """A ``SubmissionError`` as a figure's error: what was raised and where."""
    detail = err.detail + (f" ({err.file}:{err.line})" if err.file else "")
    key = "report.figure_not_implemented" if err.kind == "not_implemented" else "report.figure_failed"
    return {"key": key, "params": {"detail": detail}, "kind": err.kind}


def rows(t):
    """A 2-D tensor as rows of floats (``None`` for NaN and inf), 5 significant digits."""
    out = []
    for row in t.detach().to(device="cpu", dtype=torch.float64).tolist():
        out.append([float(f"{v:.5g}") if math.isfinite(v) else None for v in row])
    return out
