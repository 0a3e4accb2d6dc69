"""The explicit cases a check adds to its drawn examples still show what they are there for: each is chosen for
what the reference does on it, and a change to the reference's weights or to the case would quietly drop it."""

from assignments.transformer.checks.greedy import EOS, PAD, ROWS_END_APART, model_args
from grader.assignment import load
from grader.engine import Grading, context, select_checks
from grader.submission.inprocess import InProcessRunner


def test_greedy_rows_end_apart_before_max_len():
    transformer = load("transformer")
    ref = InProcessRunner(transformer.reference, assignment=transformer, banned=())
    try:
        g = Grading(transformer, ref, ref, profile="quick", devices=["cpu"])
        (spec,) = [
            s for s in select_checks(transformer, tasks=["greedy"], profile="full") if s.id == "greedy.equivalence"
        ]
        ctx = context(g, spec, "integrated")
        args, _example = model_args(ctx, ROWS_END_APART)
        out = ctx.ref("greedy", **args)["out"].tolist()
    finally:
        ref.close()
    ends = [row.index(EOS) for row in out if EOS in row]
    assert len(ends) == len(out), f"a row never ends: {out}"
    assert len(set(ends)) >= 2, f"every row ends at the same step: {out}"
    assert len(out[0]) <= ROWS_END_APART.max_len, f"decoding ran to max_len: {out}"
    early = min(range(len(out)), key=lambda r: ends[r])
    assert set(out[early][ends[early] + 1 :]) == {PAD}, f"no PAD after the earliest EOS: {out}"
