"""The decoder-only LM's toy task, demo, drills and quiz: ``assignments/decoder_lm/{corpus,demo,practice}.py``,
``data/poems.txt`` and ``messages/practice_<lang>.py``.

The quiz's numeric answers are computed from the reference; here each is compared with a closed form worked out
independently (or a count over a module built here), and a reference with a classic mistake is shown to give
answers the closed forms reject. The commands run as ``gradekit`` runs them (``practice``/``quiz`` registered
on a bare parser, ``demo`` through ``grader.cli.main``).
"""

import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from assignments.decoder_lm import corpus
from grader.assignment import load
from grader.messages import CATALOGUES, text
from grader.practice import drills, quiz, workspace
from grader.practice.render import width
from tests.practice_helpers import assert_chinese_task_texts_match, assert_quiz_texts_complete, fields, gradekit

pytestmark = pytest.mark.usefixtures("home")  # drills and quizzes are recorded: a fresh history per test

A = load("decoder_lm")
T = load("transformer")
DRILLS = drills.of(A)
QUESTIONS = quiz.questions(A)
BY_ID = {q.id: q for q in QUESTIONS}
ROOT = Path(__file__).resolve().parents[2]
SHARED_TASK_IDS = {"model", "param_count"}
"""Task ids both assignments have: the kit keys drill texts by task id alone, so these have no drill yet."""
WHOLE = "overfit"
"""The whole's check, in both assignments: no code of its own, so no drill in either."""


@pytest.fixture(scope="module")
def ref():
    return quiz.reference(A)


# -- the corpus ------------------------------------------------------------------------------------------------

POEMS = corpus.load_poems()
TASK = corpus.build_task()
PUNCTUATION = set("，。；：？！、")


def _is_cjk(ch):
    return 0x4E00 <= ord(ch) <= 0x9FFF


def test_poems_file_is_a_few_hundred_public_domain_poems():
    assert 150 <= len(POEMS) <= 300
    assert (corpus.DATA_FILE.parent / "README.md").read_text(encoding="utf-8").count("public domain") >= 1
    assert len({p.text for p in POEMS}) == len(POEMS), "a poem is listed twice"
    for p in POEMS:
        assert p.author and p.title and p.text, p
        assert set(p.text) <= PUNCTUATION | {ch for ch in p.text if _is_cjk(ch)}, p.title
        assert p.text[-1] in "。？！", p.title  # a whole poem, not a fragment cut mid-line
    authors = {p.author for p in POEMS}
    assert {"李白", "杜甫", "王维", "孟浩然", "白居易", "王之涣"} <= authors


def test_load_poems_skips_comments_and_names_a_bad_line(tmp_path):
    good = tmp_path / "p.txt"
    good.write_text("# comment\n\n李白\t静夜思\t床前明月光。\n", encoding="utf-8")
    assert corpus.load_poems(good) == [corpus.Poem("李白", "静夜思", "床前明月光。")]
    bad = tmp_path / "bad.txt"
    bad.write_text("李白\t静夜思\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.txt:1: expected 'author<TAB>title<TAB>text'"):
        corpus.load_poems(bad)


def test_vocabulary_specials_and_round_trip():
    vocab = TASK.vocab
    assert vocab.itos[corpus.PAD] == "<pad>" and vocab.itos[corpus.NEWLINE] == "\n"
    chars = {ch for p in POEMS for ch in p.text}
    assert len(vocab) == len(chars) + 2 and set(vocab.itos[2:]) == chars
    assert list(vocab.itos[2:]) == sorted(chars)
    for p in POEMS:
        ids = vocab.encode(p.text)
        assert len(ids) == len(p.text) and min(ids) >= 2
        assert vocab.decode(ids) == p.text
    assert vocab.decode([corpus.NEWLINE, *vocab.encode("明月"), corpus.PAD, corpus.PAD]) == "\n明月"
    assert vocab.decode(torch.tensor(vocab.encode("春风"))) == "春风"
    with pytest.raises(ValueError, match="'A' is not in the vocabulary"):
        vocab.encode("明A")
    with pytest.raises(ValueError, match=f"token id {len(vocab)} is outside"):
        vocab.decode([len(vocab)])


def test_make_batch_rows_are_poems_between_newlines_padded_at_the_end():
    texts = [POEMS[0].text, POEMS[5].text, "春眠。"]
    batch = corpus.make_batch(texts, TASK.vocab)
    assert batch.dtype == torch.long and batch.shape == (3, 2 + max(len(t) for t in texts))
    for row, t in zip(batch.tolist(), texts):
        n = len(t) + 2
        assert row[:n] == [corpus.NEWLINE, *TASK.vocab.encode(t), corpus.NEWLINE]
        assert row[n:] == [corpus.PAD] * (batch.shape[1] - n)
    with pytest.raises(ValueError, match="at least one poem"):
        corpus.make_batch([], TASK.vocab)


def test_batches_visit_every_poem_once_per_epoch_and_are_seeded():
    size = 32
    per_epoch = len(POEMS) // size
    it = corpus.batches(TASK, size, seed=3)
    epoch = [next(it) for _ in range(per_epoch)]
    rows = [TASK.vocab.decode(r).strip("\n") for b in epoch for r in b]
    assert all(b.shape[0] == size for b in epoch)
    assert len(rows) == len(set(rows)) == per_epoch * size and set(rows) <= {p.text for p in POEMS}
    # The same seed gives the same batches; another seed others.
    again = corpus.batches(TASK, size, seed=3)
    assert all(torch.equal(b, next(again)) for b in epoch)
    other = corpus.batches(TASK, size, seed=4)
    assert not all(torch.equal(b, next(other)) for b in epoch)
    # Poems of similar length share a batch: less padding than batches drawn at random.
    pad_sorted = sum(int((b == corpus.PAD).sum()) for b in epoch)
    rng = random.Random(0)
    shuffled = rng.sample(TASK.texts, per_epoch * size)
    pad_random = sum(
        int((corpus.make_batch(shuffled[i : i + size], TASK.vocab) == corpus.PAD).sum())
        for i in range(0, len(shuffled), size)
    )
    assert pad_sorted < pad_random / 2
    tiny = corpus.build_task(POEMS[:3])
    assert next(corpus.batches(tiny, 8)).shape[0] == 3
    with pytest.raises(ValueError, match="batch_size and pool must be at least 1"):
        next(corpus.batches(TASK, 0))


# -- the demo --------------------------------------------------------------------------------------------------


def test_short_demo_run_learns_and_samples_poem_characters():
    from assignments.decoder_lm.demo import STARTS, run_demo

    lines = []
    result = run_demo(steps=30, seed=0, log_every=10, log=lines.append)
    assert any("step   10" in line for line in lines) and any("step   30" in line for line in lines)
    assert abs(result.first_loss - math.log(result.vocab_size)) < 0.3  # an untrained model is near uniform
    assert result.final_loss < result.first_loss - 0.5
    assert result.vocab_size == len(TASK.vocab) and result.n_params > 0 and result.seconds > 0
    chars = {ch for p in POEMS for ch in p.text}
    assert len(result.samples) == len(STARTS)
    for start, sample in zip(STARTS, result.samples):
        assert sample.startswith(start) and len(sample) > 1
        assert set(sample) <= chars, sample  # no "<pad>", no newline: cut at the poem's end
        assert sample in "".join(lines)


def test_sampled_poems_end_at_the_first_newline(monkeypatch):
    """A sample is cut where the model writes its first newline (generation itself never stops early)."""
    from assignments.decoder_lm import demo

    vocab = TASK.vocab
    tail = [*vocab.encode("明月。"), corpus.NEWLINE, *vocab.encode("春风"), corpus.PAD]
    calls = []

    def fake_generate(model, prompt, max_new_tokens, **kwargs):
        calls.append((prompt.tolist(), max_new_tokens, kwargs))
        return torch.cat([prompt, torch.tensor([tail] * prompt.size(0))], dim=1)

    monkeypatch.setattr(demo, "generate", fake_generate)
    assert demo.sample_poems(None, TASK, "春山", max_chars=len(tail), seed=3) == ["春明月。", "山明月。"]
    [(prompt, n, kwargs)] = calls
    assert prompt == [[corpus.NEWLINE, *vocab.encode("春")], [corpus.NEWLINE, *vocab.encode("山")]]
    assert n == len(tail) and kwargs["temperature"] == 0.8 and kwargs["top_k"] == 20 and kwargs["top_p"] == 0.9
    assert torch.equal(kwargs["generator"].get_state(), torch.Generator().manual_seed(3).get_state())


def test_demo_is_seeded(capsys):
    from assignments.decoder_lm.demo import run_demo

    a = run_demo(steps=3, seed=1, log=None)
    b = run_demo(steps=3, seed=1, log=None)
    c = run_demo(steps=3, seed=2, log=None)
    assert a.samples == b.samples and a.final_loss == b.final_loss
    assert a.samples != c.samples


def test_gradekit_demo_for_this_assignment(capsys):
    from assignments.decoder_lm.demo import STARTS, main
    from grader.cli import main as gradekit_main

    assert gradekit_main(["demo", "--assignment", "decoder_lm", "--steps", "2", "--seed", "1", "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(STARTS) + 1 and out[-1].startswith("loss ")
    assert [line[0] for line in out[:-1]] == list(STARTS)
    with pytest.raises(SystemExit):
        main(["--steps", "0"])


def test_default_demo_learns_the_poems():
    """The defaults as ``gradekit demo`` runs them: the loss falls from ln V to below 1 and the samples are
    mostly the poems that begin with their characters (the docstring says so)."""
    from assignments.decoder_lm.demo import run_demo

    result = run_demo(log=None)
    assert result.final_loss < 1.0
    starts = {p.text[:6] for p in POEMS}
    assert sum(s[:6] in starts for s in result.samples) >= 3, result.samples


# -- drills --------------------------------------------------------------------------------------------------


def test_a_drill_per_task_but_the_ids_the_first_assignment_shares():
    assert set(A.task_ids) & set(T.task_ids) == SHARED_TASK_IDS | {WHOLE}
    assert {d.id for d in DRILLS if not d.is_set} == set(A.task_ids) - SHARED_TASK_IDS - {WHOLE}
    sets = [d for d in DRILLS if d.is_set]
    assert len(sets) >= 4 and all(len(d.tasks) > 1 for d in sets)
    assert {d.id for d in DRILLS}.isdisjoint({d.id for d in drills.of(T)})
    for d in DRILLS:
        assert d.level in drills.LEVELS and d.minutes > 0
        assert set(d.tasks) <= set(A.task_ids) - SHARED_TASK_IDS - {WHOLE}
    assert drills.get(A, "llama60").minutes == 60


@pytest.mark.parametrize("drill", [d.id for d in DRILLS])
def test_workspace_has_stubs_for_the_drill_only(tmp_path, drill):
    d = drills.get(A, drill)
    workspace.build(tmp_path, d.tasks, A)
    drilled = {name for t in d.tasks for name in A.task_by_id[t].names}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(A.contract_files)
    for file in A.contract_files:
        got = (tmp_path / file).read_text()
        compile(got, file, "exec")
        names = set(workspace._top_level(got))
        for name in names & drilled:
            assert "NotImplementedError" in got, (file, name)
        if not names & drilled:
            assert got == (A.reference / file).read_text(), file


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_drill_has_a_title_and_two_hint_levels(lang, capsys):
    for d in DRILLS:
        assert f"practice.title.{d.id}" in CATALOGUES[lang], d.id
        for task in d.tasks:
            for level in (1, 2):
                assert f"practice.hint.{task}.{level}" in CATALOGUES[lang], (task, level)
    code, out, _ = gradekit(capsys, "practice", "--assignment", "decoder_lm", "--lang", lang)
    assert code == 0
    for d in DRILLS:
        assert d.id in out and text(f"practice.title.{d.id}", lang) in out
    assert "rmsnorm + rope + swiglu + gqa + attention + block" in out


def test_practice_sentences_exist_in_both_languages_with_the_same_fields():
    from assignments.decoder_lm.messages import practice_en as en
    from assignments.decoder_lm.messages import practice_zh as zh

    assert set(en.MESSAGES) == set(zh.MESSAGES)
    assert all(k.startswith(("practice.", "quiz.")) for k in en.MESSAGES)
    for key, sentence in en.MESSAGES.items():
        assert fields(sentence) == fields(zh.MESSAGES[key]), key
        assert zh.MESSAGES[key] != sentence or key.startswith("practice.title."), key  # translated
    # The texts waiting for the kit to key drills per assignment are complete too.
    assert set(en.PENDING_TITLES) == set(zh.PENDING_TITLES) == SHARED_TASK_IDS
    assert set(en.PENDING_HINTS) == set(zh.PENDING_HINTS) == SHARED_TASK_IDS
    assert all(len(en.PENDING_HINTS[t]) == len(zh.PENDING_HINTS[t]) == 2 for t in SHARED_TASK_IDS)


def test_both_assignments_load_together_in_either_order():
    """One catalogue for all loaded assignments: a key this one shares with the first must have the same text
    (``MessageClash`` otherwise), whichever is loaded first."""
    for first, second in (("transformer", "decoder_lm"), ("decoder_lm", "transformer")):
        code = (
            f"from grader.assignment import load\nload({first!r}); load({second!r})\n"
            "from grader.messages import text\nprint(text('practice.title.rope', 'zh'))"
        )
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "旋转位置编码（前后半配对）"


def test_chinese_task_texts_name_everything_the_english_ones_do():
    from assignments.decoder_lm.practice import TASK_TEXTS

    assert_chinese_task_texts_match(A, DRILLS, TASK_TEXTS["zh"])


@pytest.mark.parametrize("drill", ["rope_attention40", "adamw"])
def test_drill_texts_come_in_chinese(tmp_path, capsys, drill):
    from assignments.decoder_lm.practice import TASK_TEXTS

    ws = tmp_path / drill
    code, out, _ = gradekit(capsys, "practice", drill, "--assignment", "decoder_lm", "--lang", "zh", "--dir", str(ws))
    assert code == 0
    for t in workspace.task_texts(drills.get(A, drill).tasks, A):
        english, chinese = t.doc.splitlines()[0], TASK_TEXTS["zh"][t.name].splitlines()[0]
        assert english not in out and chinese in out, t.name
        source = (ws / t.file).read_text()
        compile(source, t.file, "exec")
        assert english not in source and chinese in source, t.name
    assert "Write:" not in out and "Clock:" not in out


def test_practice_session_start_check_and_solve(tmp_path, capsys):
    ws = tmp_path / "ws"
    code, out, _ = gradekit(
        capsys, "practice", "rmsnorm", "--assignment", "decoder_lm", "--minutes", "8", "--dir", str(ws)
    )
    assert code == 0 and "class RMSNorm(dim, eps=1e-06)" in out and "Clock: 08:00" in out
    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(ws))
    assert code == 1 and text("ui.not_implemented", "en") in out
    code, out, _ = gradekit(capsys, "practice", "--hint", "--dir", str(ws), "--lang", "zh")
    assert code == 0 and "".join(text("practice.hint.rmsnorm.1", "zh").split()) in "".join(out.split())
    for file, names in workspace.drill_names(["rmsnorm"], A).items():
        path = ws / file
        path.write_text(workspace.splice(path.read_text(), (A.reference / file).read_text(), names))
    code, out, _ = gradekit(capsys, "practice", "--check", "--dir", str(ws))
    assert code == 0 and "Passed in" in out, out


# -- the quiz ------------------------------------------------------------------------------------------------


def test_questions_are_well_formed_and_named_apart_from_the_first_assignments():
    assert len(QUESTIONS) >= 25 and len(BY_ID) == len(QUESTIONS)
    assert all(q.id.startswith("lm_") for q in QUESTIONS)
    assert quiz.topics_of(QUESTIONS) == ("attention", "positions", "norm", "cache", "sampling", "training", "sizes")
    numeric = [q for q in QUESTIONS if q.kind == "number"]
    assert len(numeric) >= 12 and all(callable(q.params) for q in numeric)
    for q in QUESTIONS:
        if q.kind == "choice":
            assert q.answer in quiz.LETTERS and q.params is None
    # The topics both assignments have read the same in both.
    for topic in set(quiz.topics_of(QUESTIONS)) & set(quiz.topics_of(quiz.questions(T))):
        for lang in ("en", "zh"):
            assert text(f"quiz.topic.{topic}", lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_question_has_all_its_texts_and_fields(lang, ref):
    assert_quiz_texts_complete(QUESTIONS, lang, ref)


def _built_lm_params(p):
    from assignments.decoder_lm.reference.model import DecoderLM

    with torch.device("meta"):
        model = DecoderLM(
            p["vocab_size"], p["dim"], p["num_layers"], p["num_heads"], p["hidden_dim"], num_kv_heads=p["num_kv_heads"]
        )
    return sum(t.numel() for t in model.parameters())


def _targets(length, pads):
    return sum(1 for n in pads for t in range(1, length) if t < length - n)


def expected(qid, p):
    """The answers worked out independently of the reference's code: closed forms, brute-force counts, and for
    the total parameter count a model built here and counted."""
    D, H = p.get("dim"), p.get("num_heads")
    return {
        "lm_kv_cache_mib": lambda: (
            2
            * p["num_layers"]
            * p["batch"]
            * p["num_kv_heads"]
            * p["seq_len"]
            * (D // H)
            * {"float32": 4, "float16": 2, "bfloat16": 2}[p["dtype"]]
            / 2**20
        ),
        "lm_gqa_saving": lambda: H / p["num_kv_heads"],
        "lm_params_attention": lambda: 2 * D * D + 2 * D * p["num_kv_heads"] * (D // H),
        "lm_rope_theta": lambda: p["base"] ** (-2 * p["i"] / p["head_dim"]),
        "lm_rope_wavelength": lambda: 2 * math.pi * p["base"] ** ((p["head_dim"] - 2) / p["head_dim"]),
        "lm_rope_partner": lambda: p["i"] + p["head_dim"] // 2,
        "lm_params_total": lambda: _built_lm_params(p),
        "lm_params_swiglu": lambda: 3 * D * p["hidden_dim"],
        "lm_tied_saving": lambda: p["vocab_size"] * D,
        "lm_warmup_lr": lambda: p["max_lr"] * (p["step"] + 1) / p["warmup_steps"],
        "lm_cosine_lr": lambda: (
            p["min_lr"]
            + 0.5
            * (p["max_lr"] - p["min_lr"])
            * (1 + math.cos(math.pi * (p["step"] - p["warmup_steps"]) / (p["total_steps"] - p["warmup_steps"])))
        ),
        "lm_top_p_kept": lambda: sum(1 for j in range(len(p["probs"])) if sum(p["probs"][:j]) < p["p"]),
        "lm_top_k_kept": lambda: sum(1 for x in p["logits"] if x >= sorted(p["logits"], reverse=True)[p["k"] - 1]),
        "lm_decay_tensors": lambda: 1 + 7 * p["num_layers"],
        "lm_no_decay_numel": lambda: (2 * p["num_layers"] + 1) * D,
        "lm_clip_value": lambda: (
            p["c"] * min(1.0, p["max_norm"] / (math.sqrt(p["a"] ** 2 + p["b"] ** 2 + p["c"] ** 2) + 1e-6))
        ),
        "lm_loss_targets": lambda: _targets(p["length"], (p["pad1"], p["pad2"])),
        "lm_uniform_loss": lambda: math.log(p["vocab_size"]),
        "lm_cache_after_generate": lambda: p["prompt_len"] + p["max_new_tokens"] - 1,
    }[qid]()


@pytest.mark.parametrize("seed", range(4))
def test_computed_answers_match_independent_closed_forms(seed):
    _, asked = quiz.draw(A, n=0, seed=seed)
    numeric = [a for a in asked if a.question.kind == "number"]
    assert len(numeric) == sum(q.kind == "number" for q in QUESTIONS)
    for a in numeric:
        want = expected(a.question.id, a.params)
        assert math.isclose(a.answer, want, rel_tol=1e-6), (a.question.id, a.params, a.answer, want)
        if not a.question.rel_tol:
            assert float(a.answer).is_integer(), a.question.id
        assert quiz.mark(a, quiz.show_answer(a)), (a.question.id, quiz.show_answer(a))
        assert not quiz.mark(a, str(a.answer * 1.5 + 1)), a.question.id


class _Mutated:
    """The reference with one name replaced: what a wrong answer function would see."""

    def __init__(self, ref, **replace):
        self.ref, self.replace = ref, replace

    def get(self, name):
        return self.replace.get(name) or self.ref.get(name)


def test_a_reference_with_a_classic_mistake_gives_answers_the_closed_forms_reject(ref):
    """The answers really come from the reference: swap in a classic mistake and they move off the closed
    forms (which the test above would then report)."""
    import torch.nn.functional as F

    from assignments.decoder_lm.reference import cache as cache_module

    class RepeatedCache(cache_module.KVCache):  # caches H heads instead of Hkv: GQA saves nothing
        def update(self, keys, values):
            n = 16 // keys.size(1)  # the question below has 16 query heads
            return super().update(keys.repeat_interleave(n, dim=1), values.repeat_interleave(n, dim=1))

    def top_p_one_early(logits, p):  # cuts the token that crosses p, a classic off-by-one
        probs = logits.softmax(-1)
        sorted_probs, order = probs.sort(-1, descending=True)
        keep_sorted = sorted_probs.cumsum(-1) < p
        keep_sorted[..., 0] = True
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        return logits.masked_fill(~keep, float("-inf"))

    def lm_loss_unshifted(logits, tokens, pad_id=None):
        return F.cross_entropy(
            logits.reshape(-1, logits.size(-1)), tokens.reshape(-1), ignore_index=-100 if pad_id is None else pad_id
        )

    def cosine_no_plus_one(step, max_lr, min_lr, warmup_steps, total_steps):
        if step < warmup_steps:
            return max_lr * step / warmup_steps
        return ref.get("cosine_lr")(step, max_lr, min_lr, warmup_steps, total_steps)

    cases = [
        ("lm_gqa_saving", dict(dim=1024, num_heads=16, num_kv_heads=4, seq_len=8), {"KVCache": RepeatedCache}),
        ("lm_top_p_kept", dict(probs=[0.5, 0.2, 0.15, 0.1, 0.05], p=0.78), {"top_p_filter": top_p_one_early}),
        ("lm_loss_targets", dict(length=8, pad1=1, pad2=3), {"lm_loss": lm_loss_unshifted}),
        (
            "lm_warmup_lr",
            dict(step=9, max_lr=1e-3, warmup_steps=100, total_steps=1000),
            {"cosine_lr": cosine_no_plus_one},
        ),
    ]
    for qid, params, replace in cases:
        q = BY_ID[qid]
        right = q.answer(ref, **params)
        assert math.isclose(right, expected(qid, params), rel_tol=1e-6), qid
        wrong = q.answer(_Mutated(ref, **replace), **params)
        assert not math.isclose(wrong, expected(qid, params), rel_tol=q.rel_tol or 1e-9), (qid, wrong)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_quiz_command_with_answers_all_right(capsys, lang):
    _, asked = quiz.draw(A, n=8, seed=11)
    answers = ",".join(quiz.show_answer(a) for a in asked)
    code, out, _ = gradekit(
        capsys, "quiz", "--assignment", "decoder_lm", "--n", "8", "--seed", "11", "--answers", answers, "--lang", lang
    )
    assert code == 0, out
    assert ("Score: 8 / 8" if lang == "en" else "得分：8 / 8") in out
    assert out.count("✓") == 8
    assert "--assignment decoder_lm" in out  # the replay line asks this assignment's questions again


def test_quiz_command_by_topic_from_stdin(capsys, monkeypatch):
    import io

    _, asked = quiz.draw(A, n=0, seed=5, topics=["cache"])
    assert {a.question.topic for a in asked} == {"cache"} and len(asked) == 5
    replies = [quiz.show_answer(a) for a in asked[:-1]] + [""]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(replies) + "\n"))
    code, out, _ = gradekit(capsys, "quiz", "--assignment", "decoder_lm", "--n", "0", "--seed", "5", "--topic", "cache")
    assert code == 1 and "Score: 4 / 5" in out and "No answer" in out
    code, _, err = gradekit(capsys, "quiz", "--assignment", "decoder_lm", "--topic", "masks")
    assert code == 2 and "unknown topic(s) masks" in err and "cache" in err


# -- options that give nothing away (as tests/unit/test_quiz.py measures the first assignment's) -------------------

CHOICE = [q for q in QUESTIONS if q.kind == "choice"]
FAIR = 1 / len(quiz.LETTERS) + 0.1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_right_option_cannot_be_told_by_its_length(lang):
    longest = shortest = 0
    ratios = []
    for q in CHOICE:
        options = {x: width(CATALOGUES[lang][f"quiz.{q.id}.{x}"]) for x in quiz.LETTERS}
        right, others = options[q.answer], [w for x, w in options.items() if x != q.answer]
        longest += right >= max(others)
        shortest += right <= min(others)
        ratios.append(right / (sum(others) / len(others)))
    n = len(CHOICE)
    assert n >= 12
    assert longest <= FAIR * n, f"{lang}: the right option is the longest in {longest} of {n} questions"
    assert shortest <= FAIR * n, f"{lang}: the right option is the shortest in {shortest} of {n} questions"
    assert 0.85 <= sum(ratios) / n <= 1.15


def test_the_right_option_cannot_be_told_by_its_letter():
    letters = [q.answer for q in CHOICE]
    assert all(abs(letters.count(x) / len(letters) - 1 / len(quiz.LETTERS)) <= 0.1 for x in quiz.LETTERS), letters
