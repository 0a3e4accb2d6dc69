"""Golden files: a corpus's verdicts kept in the repository, reviewed like code, compared exactly.

Each corpus test stores, per case, what the grade said (``verdicts``: the score, each task's score, and the mistakes
named in each task) in ``tests/golden/<corpus>.json``. A test compares the grading with its case's record exactly, so
that a change in any verdict fails with the difference, and the change lands only as a reviewed diff of that file:

    GRADEKIT_UPDATE_GOLDEN=1 scripts/test tests/corpus/test_diagnosis_blind.py   # rewrite the records, read the diff

The properties the corpus must keep (no false pass, no wrong name) are still asserted beside it: a record
shows what changed, the property says whether the change may land. The bench scripts that report on a corpus
(``bench/bench_diagnosis.py``, ``bench/bench_lm_blind.py``) read these records, the grading the tests compared, and
grade again only when asked (``--regrade``).
"""

import difflib
import json
import os
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("GRADEKIT_UPDATE_GOLDEN") == "1"


def verdicts(result):
    """What a grade said, as plain data: the score, each task's score, and the catalogued mistakes each task names
    (in the order its checks name them)."""
    named = {}
    for task in result.tasks:
        ids = [d.id for c in task.checks for d in c.diagnoses if d.kind == "bug"]
        if ids:
            named[task.id] = list(dict.fromkeys(ids))
    return {
        "score": [round(result.score, 4), round(result.max_score, 4)],
        "tasks": {t.id: round(t.score, 4) for t in result.tasks},
        "named": named,
    }


def _path(corpus):
    return FOLDER / f"{corpus}.json"


def _load(corpus):
    path = _path(corpus)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _text(record):
    return json.dumps(record, indent=1, sort_keys=True).splitlines()


def check(corpus, key, record):
    """Compare ``record`` with the golden record of ``key`` in ``corpus``; with ``GRADEKIT_UPDATE_GOLDEN=1``, write it
    there instead."""
    records = _load(corpus)
    if UPDATE:
        records[key] = record
        FOLDER.mkdir(exist_ok=True)
        text = json.dumps(dict(sorted(records.items())), indent=1, sort_keys=True, ensure_ascii=False)
        _path(corpus).write_text(text + "\n", encoding="utf-8")
        return
    if key not in records:
        pytest.fail(
            f"no golden record for {key!r} in tests/golden/{corpus}.json: grade it with GRADEKIT_UPDATE_GOLDEN=1 and "
            "review the new record"
        )
    if records[key] != record:
        diff = "\n".join(difflib.unified_diff(_text(records[key]), _text(record), "golden", "now", lineterm=""))
        pytest.fail(
            f"{key}: the grade differs from tests/golden/{corpus}.json:\n{diff}\n"
            "If the change is right, rewrite the records with GRADEKIT_UPDATE_GOLDEN=1 and review the diff."
        )


def keys(corpus):
    """The keys a corpus's golden file holds (a test checks that no case is missing or left over)."""
    return set(_load(corpus))


def records(corpus):
    """A corpus's golden records, ``{key: verdicts}``: the grading its test compares exactly, which the bench scripts
    read for their figures instead of grading the corpus again."""
    return _load(corpus)


def named_ids(record):
    """The catalogued mistakes a record names, each once (in the file's order of tasks)."""
    return list(dict.fromkeys(i for ids in record["named"].values() for i in ids))
