"""The tiny assignment's known mistakes, as edits of reference/ops.py."""

from grader.bugs.catalogue import bug

BUGS = (
    bug("softmax.no_max_shift", "ops.py", ("x - x.max(dim=-1, keepdim=True).values", "x")),
    bug("softmax.sum_all", "ops.py", ("e.sum(dim=-1, keepdim=True)", "e.sum()")),
    bug("attend.no_proj", "ops.py", ("stable_softmax(self.proj(x) @", "stable_softmax(x @")),
)
