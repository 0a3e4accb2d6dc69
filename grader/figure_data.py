"""Helpers for an assignment's ``figures`` module: probe results turned into the plain data a report draws."""

import math

import torch

from grader.errors import SAY, sentence
from grader.messages import is_phrase, phrase


def failure(err):
    """A ``SubmissionError`` as a figure's error: what was raised and where. The student's exception text as it
    came; the kit's own words (``errors.SAY``: an output of the wrong type, a worker that ended) and a time limit
    of the runner's as a phrase, said in the reader's language as the figure's sentence is."""
    key = "report.figure_not_implemented" if err.kind == "not_implemented" else "report.figure_failed"
    say = err.data.get(SAY) if isinstance(err.data, dict) else None
    said, params = sentence(err)
    if is_phrase(say):
        detail = phrase("report.figure_where", detail=say, file=err.file, line=err.line) if err.file else say
    elif said.startswith("error.timeout_"):  # the sentence says where the code was, when it is known
        detail = phrase(said, **params)
    else:
        detail = err.detail + (f" ({err.file}:{err.line})" if err.file else "")
    return {"key": key, "params": {"detail": detail}, "kind": err.kind}


def rows(t):
    """A 2-D tensor as rows of floats (``None`` for NaN and inf), 5 significant digits."""
    out = []
    for row in t.detach().to(device="cpu", dtype=torch.float64).tolist():
        out.append([float(f"{v:.5g}") if math.isfinite(v) else None for v in row])
    return out
