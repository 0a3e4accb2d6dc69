"""Drills: what can be written against the clock. Each assignment lists its own (``DRILLS`` of the module its
``Assignment.practice`` names): one per task a candidate can write alone, plus interview sets of several."""

from dataclasses import dataclass

from grader.assignment import AssignmentError


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
        """An interview set of several tasks, rather than one task (a drill of one task is named after it)."""
        return self.tasks != (self.id,)


LEVELS = ("easy", "medium", "hard")


def of(assignment):
    """``assignment``'s drills, in the order the list shows them; ``AssignmentError`` when it has none or one
    names an unknown task or level."""
    module = assignment.practice_module()
    drills = tuple(getattr(module, "DRILLS", ()))
    if not drills:
        raise AssignmentError(
            f"assignment {assignment.name!r} has no drills; expected a practice module "
            f"(Assignment.practice) defining DRILLS"
        )
    for d in drills:
        unknown = [t for t in d.tasks if t not in assignment.task_by_id]
        if unknown:
            raise AssignmentError(
                f"assignment {assignment.name!r}: drill {d.id!r} names unknown task(s) "
                f"{', '.join(unknown)}; expected some of: {', '.join(assignment.task_ids)}"
            )
        if d.level not in LEVELS:
            raise AssignmentError(
                f"assignment {assignment.name!r}: drill {d.id!r} has level {d.level!r}; "
                f"expected one of: {', '.join(LEVELS)}"
            )
    return drills


def get(assignment, drill_id):
    """``assignment``'s drill called ``drill_id``; ``KeyError`` when there is none."""
    return {d.id: d for d in of(assignment)}[drill_id]
