"""The overrides file edited for one student (``grader.server.reviewfile``), as the gradebook page's review form
saves: only the student's table or row changes, every other byte stays; a bad entry, a file that cannot be used and
a layout the edit cannot handle leave the file as it was; two saves at once both land."""

import os
import stat
import threading

import pytest

from grader.batch import overrides
from grader.server import reviewfile

HAND = """\ufeff# Reviews by hand.\r
\r
# bob, first\r
[students.bob]  # his own table\r
note = '''looked again;\r
[students.alice]\r
# a line of the note, not a comment'''\r
\r
# about "Wang Fang", below\r
[students."Wang Fang (王芳)"]\r
points = 2\r
by = "Prof. Li"\r
why = "task 3 by hand"\r
"""
"""A file as a Windows editor saves it (BOM, CRLF), with a note whose lines look like a table and a comment."""


def _write(path, text):
    path.write_bytes(text.encode("utf-8"))
    return path


def test_a_table_is_added_replaced_and_taken_out_alone(tmp_path):
    path = _write(tmp_path / "overrides.toml", HAND)
    saved = reviewfile.save(path, "alice", {"points": "-1.25", "by": "TA", "why": 'said "no"'})
    assert saved.written and not saved.created and saved.entry.points == -1.25
    added = '\r\n[students.alice]\r\npoints = -1.25\r\nby = "TA"\r\nwhy = "said \\"no\\""\r\n'
    assert path.read_bytes().decode("utf-8") == HAND + added
    reviewfile.save(path, "bob", {"copy": "Cleared", "by": "TA", "why": "no copy", "note": "a\tb"})
    bob = '[students.bob]  # his own table\r\ncopy = "cleared"\r\nnote = "a\\tb"\r\nby = "TA"\r\nwhy = "no copy"\r\n'
    start = HAND.index("[students.bob]")
    end = HAND.index("\r\n\r\n# about")
    assert path.read_bytes().decode("utf-8") == HAND[:start] + bob + HAND[end + 2 :] + added
    reviewfile.save(path, "alice", {})
    reviewfile.save(path, "bob", {"note": "looked again;\n[students.alice]\n# a line of the note, not a comment"})
    found = overrides.load(path)
    assert (
        sorted(found) == ["Wang Fang (王芳)", "bob"]
        and found["bob"] == overrides.load(_write(tmp_path / "h.toml", HAND))["bob"]
    )
    reviewfile.save(path, "Wang Fang (王芳)", {})
    text = path.read_bytes().decode("utf-8")
    assert text.startswith("\ufeff# Reviews by hand.\r\n") and text.endswith('\r\n\r\n# about "Wang Fang", below\r\n')
    assert 'Wang Fang (王芳)"]' not in text


def test_adding_then_taking_out_gives_the_file_back_byte_for_byte(tmp_path):
    for text, back in (
        (HAND, HAND),
        ("", ""),
        ("# only a comment\n", "# only a comment\n"),
        ("[students.bob]\nnote = 'x'", "[students.bob]\nnote = 'x'\n"),  # the line ending its last line lacked
    ):
        path = _write(tmp_path / "overrides.toml", text)
        reviewfile.save(path, "li.lei+1@x", {"late_percent": "12.5", "by": "TA", "why": "late"})
        assert overrides.load(path).for_student("li.lei+1@x").late_percent == 12.5
        assert '[students."li.lei+1@x"]' in path.read_text(encoding="utf-8-sig")
        reviewfile.save(path, "li.lei+1@x", {})
        assert path.read_bytes().decode("utf-8") == back


def test_numbers_and_text_come_back_as_they_were_given(tmp_path):
    path = tmp_path / "overrides.toml"
    note = 'a "quote", a \\ backslash, a tab\t, a\nline, \x7f and \x01, 王芳, =1+1'
    reviewfile.save(path, "alice", {"points": "0.1", "late_penalty": "1e3", "note": note, "by": "x", "why": "y"})
    entry = overrides.load(path)["alice"]
    assert (entry.points, entry.late_penalty, entry.note) == (0.1, 1000.0, note.strip())
    assert reviewfile.form_values(entry) == {
        "points": "0.1",
        "late_penalty": "1000",
        "note": note.strip(),
        "by": "x",
        "why": "y",
    }
    assert (
        reviewfile.save(path, "alice", reviewfile.form_values(entry)).written is False
    )  # the form sent back as it came


def test_a_bad_entry_raises_the_batchs_message_and_writes_nothing(tmp_path):
    path = _write(tmp_path / "overrides.toml", HAND)
    before = path.stat().st_mtime_ns
    cases = (
        ({"points": "2"}, "must say who reviewed it and why; missing 'by', 'why'"),
        ({"points": "2", "by": "x"}, "missing 'why'"),
        ({"copy": "maybe", "by": "x", "why": "y"}, 'copy must be "cleared" or "confirmed", got \'maybe\''),
        ({"late_percent": "120", "by": "x", "why": "y"}, "late_percent must be between 0 and 100"),
        ({"late_penalty": "-1", "by": "x", "why": "y"}, "late_penalty must be 0 or more, got '-1'"),
        ({"points": "nan", "by": "x", "why": "y"}, "points must be a number of points, got 'nan'"),
    )
    for fields, said in cases:
        with pytest.raises(overrides.OverrideError) as caught:
            reviewfile.save(path, "alice", fields)
        assert str(caught.value).startswith(f"{path}, table [students.alice]: ") and said in str(caught.value)
    with pytest.raises(overrides.OverrideError, match="必须写明复核人"):
        reviewfile.save(path, "alice", {"points": "2"}, lang="zh")
    assert path.read_bytes().decode("utf-8") == HAND and path.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["overrides.toml"]


def test_a_file_that_cannot_be_used_or_edited_is_left_as_it_was(tmp_path):
    review = {"points": "1", "by": "x", "why": "y"}
    layouts = (
        'students.alice.points = 1\nstudents.alice.by = "x"\nstudents.alice.why = "y"\n',  # dotted keys
        '[students]\nalice = { note = "inline" }\n',  # an inline table
        '[students]\nalice.note = "dotted"\n',
    )
    for text in layouts:
        path = _write(tmp_path / "overrides.toml", text)
        with pytest.raises(reviewfile.ByHand) as caught:
            reviewfile.save(path, "alice", review)
        assert caught.value.key == "server.review.why.layout" and path.read_text() == text
        assert reviewfile.save(path, "bob", review).written  # another student's table is added all the same
    path = _write(tmp_path / "overrides.toml", '[students.alice]\npoints = "two"\n')
    with pytest.raises(reviewfile.Unusable, match="points must be a number"):
        reviewfile.save(path, "bob", review)
    assert path.read_text() == '[students.alice]\npoints = "two"\n'


def test_a_text_that_does_not_read_back_is_never_written(tmp_path, monkeypatch):
    """The new text is read back before it replaces the file: an edit that gives anything else (here: bob's note
    changed too) raises ``ByHand`` and leaves the file, and no temporary file, behind."""
    path = _write(tmp_path / "overrides.toml", HAND)
    real = reviewfile._Toml.edit
    monkeypatch.setattr(reviewfile._Toml, "edit", lambda self, entry: real(self, entry).replace("looked", "LOOKED"))
    with pytest.raises(reviewfile.ByHand) as caught:
        reviewfile.save(path, "alice", {"note": "x"})
    assert caught.value.key == "server.review.why.check"
    monkeypatch.setattr(reviewfile._Toml, "edit", lambda self, entry: real(self, entry) + "[students.bob]\n")
    with pytest.raises(reviewfile.ByHand):
        reviewfile.save(path, "alice", {"note": "x"})
    assert path.read_bytes().decode("utf-8") == HAND
    assert sorted(p.name for p in tmp_path.iterdir()) == ["overrides.toml"]


def test_the_files_permissions_are_kept_and_a_new_file_gets_the_ones_asked(tmp_path):
    path = _write(tmp_path / "overrides.toml", HAND)
    os.chmod(path, 0o600)
    reviewfile.save(path, "alice", {"note": "x"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    new = tmp_path / "new" / "overrides.toml"
    new.parent.mkdir()
    saved = reviewfile.save(new, "alice", {"note": "x"}, mode=0o640)
    assert saved.created and stat.S_IMODE(new.stat().st_mode) == 0o640
    assert new.read_text() == '[students.alice]\nnote = "x"\n'
    assert not reviewfile.save(tmp_path / "none.toml", "alice", {}).written  # nothing to say: no file made
    assert not (tmp_path / "none.toml").exists()


CSV = '\ufeffStudent,points,note,by,why\r\nbob,,"two\r\nlines, one cell",,\r\nalice,-1,old,TA,late\r\n"zed",,x,,\r\n'


def test_a_csv_row_is_rewritten_added_and_taken_out_alone(tmp_path):
    path = _write(tmp_path / "overrides.csv", CSV)
    reviewfile.save(path, "alice", {"points": "2", "note": 'a, "b"\nc', "by": "TA", "why": "regraded"})
    alice = 'alice,2,"a, ""b""\nc",TA,regraded\r\n'
    assert path.read_bytes().decode("utf-8") == CSV.replace("alice,-1,old,TA,late\r\n", alice)
    # a CSV a spreadsheet opens: text cells are written defused, as the gradebook writes them, and read back so
    reviewfile.save(path, "carol", {"note": "=1+1", "by": "x;@y"})
    carol = "carol,,'=1+1,x;'@y,\r\n"
    assert path.read_bytes().decode("utf-8") == CSV.replace("alice,-1,old,TA,late\r\n", alice) + carol
    assert overrides.load(path)["carol"].note == "'=1+1"
    # a name with a formula sign: its row is written defused, and the next save finds it (the names compare defused)
    reviewfile.save(path, "=eve", {"note": "first"})
    reviewfile.save(path, "=eve", {"note": "second"})
    text = path.read_bytes().decode("utf-8")
    assert text.endswith(carol + "'=eve,,second,,\r\n") and text.count("eve") == 1
    assert overrides.load(path).for_student("=eve").note == "second"
    reviewfile.save(path, "=eve", {})
    reviewfile.save(path, "alice", {})
    reviewfile.save(path, "carol", {})
    assert path.read_bytes().decode("utf-8") == CSV.replace("alice,-1,old,TA,late\r\n", "")
    with pytest.raises(reviewfile.ByHand) as caught:
        reviewfile.save(path, "bob", {"late_percent": "5", "by": "TA", "why": "late"})
    assert caught.value.key == "server.review.why.columns" and caught.value.params == {"columns": "late_percent"}
    assert path.read_bytes().decode("utf-8") == CSV.replace("alice,-1,old,TA,late\r\n", "")
    with pytest.raises(overrides.OverrideError) as caught:
        reviewfile.save(path, "bob", {"points": "1"})
    assert str(caught.value).startswith(f"{path}, line 2: ")  # bob's row, where the entry is written


def test_two_saves_at_once_both_land(tmp_path, monkeypatch):
    """Each save reads the file, then waits (up to two seconds) for the other to have read it too: without the
    lock around the reading and the writing both read the same file, and the second write loses the first's
    entry; with it the second waits for the first to be written, and both entries are in the file."""
    path = _write(tmp_path / "overrides.toml", HAND)
    both_read = threading.Barrier(2)
    real = reviewfile.current

    def read_then_wait(path, lang="en"):
        found = real(path, lang)
        try:
            both_read.wait(timeout=2)
        except threading.BrokenBarrierError:
            pass
        return found

    monkeypatch.setattr(reviewfile, "current", read_then_wait)
    errors = []

    def save(student):
        try:
            reviewfile.save(path, student, {"note": f"for {student}"})
        except Exception as exc:  # noqa: BLE001 - said below
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(s,)) for s in ("alice", "carol")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    found = overrides.load(path)
    assert (found["alice"].note, found["carol"].note) == ("for alice", "for carol")
