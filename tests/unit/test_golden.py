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


def _bench(name):
    import importlib
    import sys
    from pathlib import Path

    bench = str(Path(__file__).resolve().parents[2] / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    return importlib.import_module(name)


@pytest.mark.parametrize("script", ["bench_diagnosis", "bench_lm_blind"])
def test_the_corpus_benches_read_the_records_the_tests_compare(script, tmp_path, monkeypatch, capsys):
    """The benches' figures come from the golden records (no grading): as the records stand, no wrong name; a record
    changed to name another mistake, or to give full marks to a mistake, is counted against the diagnosis."""
    monkeypatch.setenv("GRADEKIT_SPEED_FILE", "")
    module = _bench(script)
    corpus = module.CORPUS
    records = golden.records(corpus)
    module.main([])
    out = capsys.readouterr().out
    assert "wrong names: 0/" in out or "wrong name 0," in out, out
    # One case's record made to name a mistake it is not labelled with; in the LM's corpus, another's to give full
    # marks (every task as in a correct submission's record).
    keys = sorted(k for k in records if "/" not in k)
    changed = json.loads(json.dumps(records))
    changed[keys[0]]["named"] = {"zzz": ["zzz.not_this_mistake"]}
    full = [records[k] for k in records if k.startswith("correct/")]
    if full:
        changed[keys[1]].update(score=full[0]["score"], tasks=full[0]["tasks"], named={})
    monkeypatch.setattr(golden, "FOLDER", tmp_path)
    (tmp_path / f"{corpus}.json").write_text(json.dumps(changed), encoding="utf-8")
    module.main([])
    out = capsys.readouterr().out
    assert "wrong names: 1/" in out or "wrong name 1," in out, out
    if full:
        assert f"{keys[1]} " in out and "FALSE PASS" in out
        assert f"cases: {len(keys) - 1}/{len(keys)} caught" in out, out
