"""The golden-file helper (tests/golden.py): a changed verdict fails with its difference; a missing record fails;
the update mode writes records instead."""

import json

import pytest

from tests import golden


def _record(score=3.0, named=None):
    return {"score": [score, 4.0], "tasks": {"sdpa": score}, "named": named or {}}


def test_a_changed_verdict_fails_with_its_difference(tmp_path, monkeypatch):
    monkeypatch.setattr(golden, "FOLDER", tmp_path)
    (tmp_path / "corpus.json").write_text(json.dumps({"case": _record()}), encoding="utf-8")
    golden.check("corpus", "case", _record())  # the same: passes
    with pytest.raises(pytest.fail.Exception) as failed:
        golden.check("corpus", "case", _record(named={"sdpa": ["sdpa.no_scale"]}))
    assert "sdpa.no_scale" in str(failed.value) and "GRADEKIT_UPDATE_GOLDEN=1" in str(failed.value)
    with pytest.raises(pytest.fail.Exception):
        golden.check("corpus", "case", _record(score=2.0))
    with pytest.raises(pytest.fail.Exception, match="no golden record"):
        golden.check("corpus", "other", _record())


def test_the_update_mode_writes_records_sorted(tmp_path, monkeypatch):
    monkeypatch.setattr(golden, "FOLDER", tmp_path)
    monkeypatch.setattr(golden, "UPDATE", True)
    golden.check("corpus", "b", _record())
    golden.check("corpus", "a", _record(score=1.0))
    data = json.loads((tmp_path / "corpus.json").read_text(encoding="utf-8"))
    assert list(data) == ["a", "b"] and data["a"]["score"] == [1.0, 4.0]
    assert golden.keys("corpus") == {"a", "b"}
