"""A student kit names the mistakes the full kit names, from the mutants' fingerprints recorded in its bank
(``grader.bugs.prints``), and never one the full kit would not name.

Both directions, at two levels. The fingerprint comparison: a result the full kit's ``diagnose.same`` calls equal
to a mutant's always matches its fingerprint (noise up to the tolerance, set against the fingerprint's own signs
included); one it calls different does not match, for the differences mistakes make (a factor, a transpose, a
shifted row, one element off by a little more than a block's tolerances). The diagnosis: over the catalogue's
mistakes of four tasks (``TASKS``, the quick profile: the whole catalogue takes about an hour, see
``bench/bench_kit_diagnosis.py``), the kit, from a bank recorded once for the session, names the full kit's first
mistake on at least 95% of them and names nothing the full kit does not name on the same check; the reference and
the skeleton get no name; and mistakes written from the contract alone (``tests/kit_mistakes``), which the bank
never saw, get no name the full kit does not give.
"""

import json
import math
import shutil
import zipfile
from pathlib import Path

import pytest
import torch

from grader import api, kit
from grader.assignment import load
from grader.bugs import prints
from grader.bugs.catalogue import Catalogue
from grader.bugs.diagnose import ATOL, RTOL, same, same_but_guarded_nan
from grader.bugs.prints import BLOCK, Undecided, fingerprint
from grader.errors import SubmissionError
from grader.kit import catalogue_folders, record
from grader.submission.bank import Bank, Prints
from tests.corpus.test_kit_build import _run

TRANSFORMER = load("transformer")
CATALOGUE = Catalogue(TRANSFORMER)
TASKS = ["sdpa", "mha", "layernorm", "masks"]
MISTAKES = Path(__file__).resolve().parents[1] / "kit_mistakes"


def _matches(mine, got, guarded=False):
    return prints.same(fingerprint(mine), got, guarded)


# -- the fingerprint decides "same" as the full kit does -----------------------------------------------------------


def _tensors():
    g = torch.Generator().manual_seed(7)
    out = [
        torch.randn(2, 4, 5, 8, generator=g, dtype=torch.float64),
        torch.randn(3, 7, generator=g) * 100,
        torch.randn(1000, generator=g).float(),
        torch.randn(2, 3, 9, generator=g).to(torch.float16),
        torch.rand(2, 5, 5, generator=g),  # attention weights: all positive
        torch.zeros(4, 4),
        torch.randn(70000, generator=g),  # more than MAX_SUMS blocks of BLOCK: longer blocks
    ]
    masked = torch.randn(2, 6, 6, generator=g)
    masked[0, :, 3] = float("-inf")
    masked[1, 2, :] = float("nan")
    masked[1, 0, 0] = float("inf")
    return out + [masked]


@pytest.mark.parametrize("k", range(8))
def test_a_tensor_within_the_tolerance_always_matches(k):
    mine = _tensors()[k]
    g = torch.Generator().manual_seed(k)
    flat = mine.double()
    finite = torch.isfinite(flat)
    # the worst the tolerance allows: every element moved by 99% of its room, in the direction the fingerprint's
    # signs add up (and against them), and by noise
    room = 0.99 * (ATOL + RTOL * flat.abs())
    signs = prints._weights(flat.numel()).sign().reshape(flat.shape)
    for push in (
        room * signs,
        -room * signs,
        room * (torch.rand(flat.shape, generator=g, dtype=torch.float64) * 2 - 1),
    ):
        got = torch.where(finite, flat + push, flat)
        got = got.to(mine.dtype) if mine.dtype == torch.float64 else got
        assert same(mine, got)
        assert _matches(mine, got)
        assert _matches(mine, got, guarded=True)
    assert _matches(mine, mine.clone()) and _matches(mine, mine.double())


def _square(t):
    return t.shape[-1] == t.shape[-2]


@pytest.mark.parametrize("k", range(8))
def test_a_tensor_the_full_kit_calls_different_does_not_match(k):
    mine = _tensors()[k].double()
    finite = torch.isfinite(mine)
    base = torch.where(finite, mine, torch.zeros(()))
    changes = {
        "factor": mine * 1.01,
        "sign": torch.where(finite, -mine, mine) if bool((base != 0).any()) else None,
        "shift": torch.where(finite, mine + 1e-3 * (1 + float(base.abs().max())), mine),
        "one element": None,
        "transposed": mine.transpose(-2, -1).contiguous() if mine.dim() >= 2 and _square(mine) else None,
        "rolled": torch.roll(mine, 1, -1) if mine.shape[-1] > 1 else None,
    }
    # one element off by more than its block's tolerances (a block is BLOCK elements here, more in a long tensor)
    at = int(torch.nonzero(finite.reshape(-1))[-1])
    one = mine.clone().reshape(-1)
    one[at] += 2 * 1.5 * prints._block(mine.numel()) * (ATOL + RTOL * float(base.abs().max())) / 0.5
    changes["one element"] = one.reshape(mine.shape)
    for name, got in changes.items():
        if got is None or same(mine, got):
            continue
        assert not _matches(mine, got), name
        assert not _matches(mine, got, guarded=True) or same_but_guarded_nan(mine, got), name


def test_one_element_ten_tolerances_off_in_a_small_table_does_not_match():
    """Two mistakes of the positional table give these on a table of 2 positions (a sine of 1e-4 against 0)."""
    mine = torch.tensor([[[0.0, 1.0, 0.0, 1.0], [0.8415, 0.5403, 0.0, 1.0]]], dtype=torch.float64)
    got = mine.clone()
    got[0, 1, 2] = 1e-4
    assert not same(mine, got) and not _matches(mine, got)


def test_nan_and_infinity_are_compared_as_the_full_kit_compares_them():
    mine = torch.tensor([[1.0, float("nan")], [float("-inf"), 2.0]])
    guarded = torch.tensor([[1.0, 0.5], [float("-inf"), 2.0]])  # a NaN the submission guarded against
    assert not same(mine, guarded) and same_but_guarded_nan(mine, guarded)
    assert not _matches(mine, guarded) and _matches(mine, guarded, guarded=True)
    for got in (
        torch.tensor([[1.0, float("nan")], [-1e30, 2.0]]),  # a finite fill where the mutant gave -inf
        torch.tensor([[float("nan"), float("nan")], [float("-inf"), 2.0]]),  # a NaN where the mutant has a number
        torch.tensor([[1.0, float("nan")], [float("inf"), 2.0]]),
    ):
        assert not same_but_guarded_nan(mine, got)
        assert not _matches(mine, got) and not _matches(mine, got, guarded=True)
    assert _matches(mine, mine.clone()) and _matches(mine, mine.clone(), guarded=True)
    ints = torch.tensor([[1, 7], [3, 2]])  # no NaN is guarded against in an integer tensor
    nan = torch.tensor([[1.0, float("nan")], [3.0, 2.0]])
    assert not same_but_guarded_nan(nan, ints) and not _matches(nan, ints, guarded=True)


def test_other_results_are_compared_as_the_full_kit_compares_them():
    ints = torch.tensor([[1, 2], [3, 4]])
    cases = [
        (ints, ints.clone(), True),
        (ints, ints.double(), True),  # torch.equal after the mutant's dtype
        (ints, torch.tensor([[1, 2], [3, 5]]), False),
        (ints.bool(), ints.bool().clone(), True),
        (ints.bool(), ints.ne(0).long(), False),  # bool against another dtype: never equal
        (torch.empty(2, 3, device="meta"), torch.empty(2, 3, device="meta"), True),
        (torch.empty(2, 3, device="meta"), torch.empty(2, 3), False),
        (torch.ones(2, 3), torch.ones(3, 2), False),
        (torch.ones(2, 3), [1.0, 1.0], False),
        ({"out": torch.ones(2), "n": 3}, {"out": torch.ones(2), "n": 3}, True),
        ({"out": torch.ones(2), "n": 3}, {"out": torch.ones(2), "n": 4}, False),
        ({"out": torch.ones(2)}, {"out": torch.ones(2), "extra": 1}, False),
        ([1.5, (2, "x")], (1.5, [2, "x"]), True),
        ([1.5, (2, "x")], [1.5, (2, "y")], False),
        (0.1, 0.1 + 1e-8, True),
        (0.1, 0.1 + 1e-4, False),
        (3.0, 3, True),
        (None, None, True),
        ("text", "text", True),
        ("text", "other", False),
        (torch.float32, torch.float32, True),
        (torch.float32, torch.float16, False),
    ]
    for mine, got, expected in cases:
        assert same(mine, got) is expected, (mine, got)
        assert _matches(mine, got) is expected, (mine, got)


def test_errors_are_compared_by_kind_and_meaning():
    err = SubmissionError(kind="exception", detail="RuntimeError: shapes (2x3 and 4x5) mismatch (attention.py:12)")
    moved = SubmissionError(kind="exception", detail="RuntimeError: shapes (2x3 and 4x5) mismatch (other.py:40)")
    other = SubmissionError(kind="exception", detail="RuntimeError: shapes (2x3 and 4x6) mismatch")
    contract = SubmissionError(kind="contract", detail="a", data={"missing": ["w_o"]})
    for mine, got in (
        (err, moved),
        (contract, SubmissionError(kind="contract", detail="b", data={"missing": ["w_o"]})),
    ):
        assert same(mine, got) and _matches(mine, got)
    for mine, got in ((err, other), (err, torch.ones(2)), (contract, err)):
        assert not same(mine, got) and not _matches(mine, got)
    assert not _matches(torch.ones(2), err)


def test_what_a_fingerprint_cannot_tell_is_undecided_and_the_fingerprint_is_smaller_than_the_answer():
    with pytest.raises(Undecided):
        prints.same(("?",), torch.ones(2))
    big = torch.randn(64, 128)
    fp = fingerprint(big)
    assert fp[4].numel() * fp[4].element_size() <= big.numel() * big.element_size() / BLOCK
    assert fingerprint(torch.randn(10**6))[4].numel() <= prints.MAX_SUMS


def test_the_fingerprints_survive_the_bank_file_and_a_bank_of_the_first_format_still_loads(tmp_path):
    p = Prints(
        entries={(b"k" * 32, "sdpa.no_scale#0"): (fingerprint({"out": torch.randn(3, 4)}), True)},
        broken={"mha.x#2"},
        outline=[["sdpa.no_scale", "sdpa", "attention.py", 1]],
    )
    bank = Bank({b"q" * 32: (b"N", 0.5)}, {"assignment": "transformer"}, p)
    back = Bank.load(bank.save(tmp_path / "a.bank"))
    assert back.answers == bank.answers and back.prints.broken == {"mha.x#2"} and back.prints.outline == p.outline
    ((key, (fp, differs)),) = back.prints.entries.items()
    assert key == (b"k" * 32, "sdpa.no_scale#0") and differs
    assert fp[2][0][4].numel() == 12 // BLOCK  # a [3, 4] answer: its block sums, not its 12 numbers
    old = Bank({b"q" * 32: (b"N", 0.5)}, {"assignment": "transformer"})
    assert Bank.load(old.save(tmp_path / "b.bank")).prints is None


def test_a_kit_reads_the_fingerprints_only_when_it_diagnoses_and_damaged_ones_as_none(tmp_path):
    """Decoding a whole assignment's fingerprints takes about a second: a kit grading code that fails nothing never
    pays it. Fingerprints that cannot be read name nothing (the kit says so where it would name)."""
    p = Prints(entries={(b"k" * 32, "sdpa.no_scale#0"): (fingerprint(torch.ones(2)), True)}, outline=[])
    back = Bank.load(Bank({}, {}, p).save(tmp_path / "a.bank"))
    assert back.prints._prints is None  # not read yet
    assert len(back.prints) == 1 and back.prints._prints is not None

    class Damaged(Prints):
        def encode(self):
            return b"not a fingerprint table"

    damaged = Bank.load(Bank({}, {}, Damaged()).save(tmp_path / "d.bank"))
    assert damaged.prints is not None and len(damaged.prints) == 0 and not damaged.prints.outline


# -- the kit's diagnoses against the full kit's --------------------------------------------------------------------


def _names(result):
    by_check = {c.id: [d.id for d in c.diagnoses if d.kind == "bug"] for t in result.tasks for c in t.checks}
    return by_check, next((n[0] for n in by_check.values() if n), None)


@pytest.fixture(scope="session")
def recorded(tmp_path_factory):
    """A bank with fingerprints, recorded once over the reference, the skeleton and the catalogued mistakes of
    ``TASKS``, and those folders."""
    work = tmp_path_factory.mktemp("kit-diag")
    folders = catalogue_folders(TRANSFORMER, work / "folders")
    folders = folders[:2] + [f for f in folders[2:] if f.name.split(".")[0] in TASKS]
    bank = record(TRANSFORMER, folders, profiles=("quick",), tasks=TASKS)
    return bank.save(work / "kit.bank"), folders


def _both(folder, bank_file):
    full = api.check(path=folder, assignment=TRANSFORMER, profile="quick", tasks=TASKS)
    kit = api.check(path=folder, assignment=TRANSFORMER, profile="quick", tasks=TASKS, bank=str(bank_file))
    return full, kit


def test_the_kit_names_what_the_full_kit_names_over_the_catalogue(recorded):
    bank_file, folders = recorded
    agree, wrong, rows = 0, [], []
    for folder in folders:
        full, kit = _both(folder, bank_file)
        (full_by, full_first), (kit_by, kit_first) = _names(full), _names(kit)
        agree += full_first == kit_first
        wrong += [(folder.name, c, n) for c, ns in kit_by.items() for n in ns if n not in full_by.get(c, [])]
        rows.append((folder.name, full_first, kit_first))
        if folder in folders[:2]:
            assert full_first is None and kit_first is None, folder
    print(f"\nkit diagnosis over {len(folders)} folders ({', '.join(TASKS)}, quick): first name agrees on {agree}")
    for row in rows:
        print(f"  {row[0]:40s} full {row[1]!s:40s} kit {row[2]}")
    assert not wrong
    assert agree >= 0.95 * len(folders), rows


@pytest.mark.parametrize("mistake", sorted(p.name for p in MISTAKES.iterdir() if p.is_dir()))
def test_mistakes_the_bank_never_saw_get_no_name_the_full_kit_does_not_give(recorded, mistake, tmp_path):
    bank_file, _ = recorded
    sub = tmp_path / mistake
    shutil.copytree(TRANSFORMER.reference, sub, ignore=shutil.ignore_patterns("__pycache__"))
    for file in (MISTAKES / mistake).iterdir():
        shutil.copy(file, sub / file.name)
    full, kit = _both(sub, bank_file)
    assert full.score < full.max_score  # a mistake, as written
    (full_by, full_first), (kit_by, kit_first) = _names(full), _names(kit)
    print(f"\n{mistake}: full {full_first}, kit {kit_first}")
    assert all(n in full_by.get(c, []) for c, ns in kit_by.items() for n in ns), (full_by, kit_by)
    undecided = [c.id for t in kit.tasks for c in t.checks if any(n.key == "note.undiagnosed_in_kit" for n in c.notes)]
    assert all(not kit_by[c] for c in undecided)


def _mutant(tmp_path, bug_id):
    return CATALOGUE.write_mutant(CATALOGUE.by_id[bug_id], tmp_path / bug_id)


def test_a_bank_without_fingerprints_names_nothing(tmp_path):
    bug = _mutant(tmp_path, "sdpa.no_scale")
    plain = record(TRANSFORMER, [TRANSFORMER.reference, bug], profiles=("quick",), tasks=["sdpa"], diagnoses=False)
    assert plain.prints is None
    kit = api.check(
        path=bug, assignment=TRANSFORMER, profile="quick", tasks=["sdpa"], bank=str(plain.save(tmp_path / "p.bank"))
    )
    assert kit.score < kit.max_score and _names(kit)[1] is None


def test_an_example_the_bank_never_saw_names_nothing_and_says_why(tmp_path):
    """Recorded over one mistake, the kit cannot tell another of the same task: it names nothing there and says so
    (where the full kit names the other)."""
    bank = record(
        TRANSFORMER, [TRANSFORMER.reference, _mutant(tmp_path, "sdpa.no_scale")], profiles=("quick",), tasks=["sdpa"]
    ).save(tmp_path / "one.bank")
    sub = _mutant(tmp_path, "sdpa.softmax_wrong_axis")
    full = api.check(path=sub, assignment=TRANSFORMER, profile="quick", tasks=["sdpa"])
    kit = api.check(path=sub, assignment=TRANSFORMER, profile="quick", tasks=["sdpa"], bank=str(bank))
    assert _names(full)[1] == "sdpa.softmax_wrong_axis"
    assert _names(kit)[1] is None
    notes = {n.key for t in kit.tasks for c in t.checks for n in c.notes}
    assert "note.undiagnosed_in_kit" in notes
    assert math.isclose(kit.score, full.score) or kit.score >= full.score


def test_the_unzipped_kit_names_the_mistake_it_was_built_over(tmp_path):
    """The student's path: a kit built over a mistake, unzipped, run as printed, names it in its report."""
    bug = _mutant(tmp_path, "sdpa.no_scale")
    built = kit.build(
        TRANSFORMER, tmp_path / "kit", profiles=("quick",), folders=[TRANSFORMER.reference, bug], tasks=("sdpa",)
    )
    assert built.bank.prints is not None and len(built.bank.prints)
    with zipfile.ZipFile(built.zip) as zf:
        zf.extractall(tmp_path / "unzipped")
    (folder,) = (tmp_path / "unzipped").iterdir()
    sub = shutil.copytree(bug, tmp_path / "mine")
    out = _run(folder, "check", sub, "--profile", "quick", "--json", tmp_path / "r.json")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stdout + out.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    named = {d["id"] for t in data["tasks"] for c in t["checks"] for d in c["diagnoses"] if d["kind"] == "bug"}
    assert data["banked"] is True and named == {"sdpa.no_scale"}


def test_a_bank_whose_gradings_asked_no_mutant_anything_still_loads(tmp_path):
    bank = Bank({b"q" * 32: (b"N", 0.5)}, {"assignment": "transformer"}, Prints())
    assert len(Bank.load(bank.save(tmp_path / "e.bank")).prints) == 0


def test_how_far_off_one_element_must_be_to_be_seen():
    """One element moved away from 0 over random tensors: by 99% of its own tolerance, always taken for the
    mutant's answer; by k times the largest tolerance of its block, from ``3 * BLOCK`` on (a weight is at least a
    third of the largest) never; below that, sometimes (printed)."""
    g = torch.Generator().manual_seed(11)
    rates = {}
    for k in (None, 1.5, 2.0, 3.0, 4.5, 3 * BLOCK + 0.01):
        seen = 0
        for _ in range(400):
            shape = [
                int(torch.randint(1, 6, (), generator=g)) for _ in range(int(torch.randint(1, 4, (), generator=g)))
            ]
            scale = float(10 ** torch.randint(-2, 3, (), generator=g))
            mine = torch.randn(shape, generator=g, dtype=torch.float64) * scale
            got = mine.clone().reshape(-1)
            at = int(torch.randint(0, got.numel(), (), generator=g))
            block = got[(at // BLOCK) * BLOCK : (at // BLOCK + 1) * BLOCK]
            room = ATOL + RTOL * float(block.abs().max() if k else got[at].abs())
            got[at] += (0.99 if k is None else k) * room * (1.0 if float(got[at]) >= 0 else -1.0)
            got = got.reshape(shape)
            assert same(mine, got) is (k is None)
            seen += not _matches(mine, got)
        rates[k] = seen / 400
    print("\nshare of one-element differences seen (None: within the tolerance; k: k block tolerances off):", rates)
    assert rates[None] == 0.0 and rates[3 * BLOCK + 0.01] == 1.0


@pytest.mark.parametrize("case", ["m001", "m083"])
def test_blind_mistakes_in_another_spelling_or_reaching_pairs_get_the_full_kits_name(recorded, case, tmp_path):
    """m001 writes a catalogued mistake as one of its other spellings (the causal mask expanded to the batch), and
    m083's diagnosis of one check reaches the pairs of mistakes: the bank holds what those diagnoses ask."""
    bank_file, _ = recorded
    blind = Path(__file__).parents[1] / "blind_bugs"
    label = next(c for c in json.loads((blind / "labels.json").read_text(encoding="utf-8")) if c["key"] == case)
    sub = tmp_path / case
    shutil.copytree(blind / "bases" / label["base"], sub, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(blind / "cases" / case / label["file"], sub / label["file"])
    full, kit = _both(sub, bank_file)
    (full_by, full_first), (kit_by, kit_first) = _names(full), _names(kit)
    assert full_first == label["label"]
    assert kit_first == full_first, (full_by, kit_by)
    assert all(n in full_by.get(c, []) for c, ns in kit_by.items() for n in ns)
