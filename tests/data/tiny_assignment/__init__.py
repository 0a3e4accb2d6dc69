"""A tiny two-task assignment built from docs/ASSIGNMENTS.md alone: a stable softmax and a one-layer attention."""

from pathlib import Path

from grader.assignment import Assignment, Task

HERE = Path(__file__).resolve().parent

ASSIGNMENT = Assignment(
    name="tiny_assignment",
    title={"en": "Tiny attention homework", "zh": "小型注意力作业"},
    tasks=(
        Task("softmax", "ops.py", ("stable_softmax",)),
        Task("attend", "ops.py", ("Attend",), ("softmax",)),
    ),
    reference=HERE / "reference",
    skeleton=HERE / "skeleton",
    checks=(f"{__name__}.checks",),
    messages=f"{__name__}.messages",
    bugs=f"{__name__}.bugs",
    banned=("torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax"),
)
