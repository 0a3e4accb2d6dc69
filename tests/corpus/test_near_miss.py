"""Near-miss mistakes (tests/near_miss, written from the contracts alone by someone who had not read the checks or
the catalogue): each behaves like a common mistake on small inputs and differs from it on larger or more varied
ones. Each loses points, and none is given the name of the mistake it only resembles: a name is confirmed on
fresh examples before it is shown (``grader.bugs.diagnose``). Where a case *is* a catalogued mistake, the label
below says which name is right."""

import json
import shutil
from pathlib import Path

import pytest

from grader import api
from grader.assignment import load
from tests.reach import reached_tasks

HERE = Path(__file__).resolve().parents[1]
CASES = json.loads((HERE / "near_miss" / "cases.json").read_text(encoding="utf-8"))
BASES = {"transformer": HERE / "blind" / "correct", "decoder_lm": HERE / "blind_lm" / "correct"}

RIGHT = {
    # returns the weights from before dropout: exactly the catalogued mistake
    "tr_sdpa_returns_weights_before_dropout": {"sdpa.dropout_not_returned"},
    # the table kept as a (frozen) nn.Parameter instead of a buffer: exactly the catalogued mistake
    "tr_pe_frozen_parameter": {"positional.table_as_parameter"},
}
"""Case id -> the catalogued names that are right for it; every other case may be named nothing."""


def test_every_label_names_a_case():
    assert set(RIGHT) <= {c["id"] for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_near_miss_loses_points_and_is_not_misnamed(tmp_path, case):
    dest = tmp_path / "sub"
    shutil.copytree(BASES[case["assignment"]] / case["base"], dest)
    edits = case.get("edits") or [{"file": case["file"], "old": case["old"], "new": case["new"]}]
    for edit in edits:
        path = dest / edit["file"]
        text = path.read_text(encoding="utf-8")
        assert text.count(edit["old"]) == 1
        path.write_text(text.replace(edit["old"], edit["new"]), encoding="utf-8")
    # Graded on the tasks the edited files can reach (tests/reach.py): a name can only come from a check that fails,
    # and the base keeps full marks on every task (the blind corpus tests).
    tasks = reached_tasks(load(case["assignment"]), dest, {e["file"] for e in edits})
    result = api.check(path=dest, assignment=case["assignment"], profile="quick", tasks=tasks)
    assert result.score < result.max_score, f"false pass: {case['does']}"
    named = {d.id for t in result.tasks for c in t.checks for d in c.diagnoses if d.kind == "bug"}
    assert named <= RIGHT.get(case["id"], set()), (case["does"], case["coincides_with"], sorted(named))
