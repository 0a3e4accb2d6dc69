"""The drills: one per task id (all but ``overfit``, which needs the whole submission), plus interview sets."""

from dataclasses import dataclass

from grader.tasks import TASK_BY_ID, TASKS


@dataclass(frozen=True)
class Drill:
    """Something to write against the clock."""

    id: str
    """The drill id: a task id (``"mha"``) or an interview set (``"classic45"``)."""
    tasks: tuple
    """The task ids whose names become stubs and are graded."""
    minutes: int
    """The typical time an interviewer allows, the default limit."""
    level: str
    """``"easy"``, ``"medium"`` or ``"hard"`` (a key under ``practice.level.``)."""

    @property
    def is_set(self):
        """An interview set of several tasks, rather than one task."""
        return self.id not in TASK_BY_ID


LEVELS = ("easy", "medium", "hard")

# (minutes, level) per task id: what a candidate who knows the material needs, from a blank stub.
_TASK_TIMES = {
    "sdpa": (10, "easy"),
    "mha": (20, "medium"),
    "embedding": (5, "easy"),
    "positional": (15, "medium"),
    "layernorm": (10, "easy"),
    "feedforward": (8, "easy"),
    "masks": (10, "easy"),
    "encoder_layer": (15, "medium"),
    "decoder_layer": (20, "medium"),
    "model": (25, "hard"),
    "greedy": (20, "medium"),
    "training": (25, "hard"),
    "param_count": (15, "medium"),
}

TASK_DRILLS = tuple(Drill(t.id, (t.id,), *_TASK_TIMES[t.id]) for t in TASKS if t.id in _TASK_TIMES)

SET_DRILLS = (
    Drill("attention20", ("sdpa", "mha"), 20, "medium"),
    Drill("encoder30", ("embedding", "positional", "feedforward", "encoder_layer"), 30, "medium"),
    Drill("decoder30", ("masks", "decoder_layer", "greedy"), 30, "hard"),
    Drill("classic45", ("sdpa", "mha", "positional", "layernorm", "masks"), 45, "hard"),
    Drill("train30", ("training", "param_count"), 30, "hard"),
)

DRILLS = TASK_DRILLS + SET_DRILLS
DRILL_BY_ID = {d.id: d for d in DRILLS}


def get(drill_id):
    """The drill called ``drill_id``; ``KeyError`` when there is none."""
    return DRILL_BY_ID[drill_id]
