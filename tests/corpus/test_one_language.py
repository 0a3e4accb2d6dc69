"""One language per sentence: a report in Chinese says no English words, a report in English no Chinese.

Real submissions of both assignments (the reference, the stubs, and catalogue mutants whose failures name what
differs: an output, the attention weights, a module's output after a few calls, logits in another dtype) and
edits of the reference that the kit's own error sentences grade (a probe's bad-output error) or whose failure
names the type the code returned instead of a tensor ("returned a tuple of 2") are graded once, in process, and
every view is rendered in both languages: the terminal summary, the HTML report, the Gradescope Markdown, the
JUnit XML and the JSON document's messages. In a Chinese view, every line that is Chinese is split into its Latin
words; a word is data, and allowed, when it is code (an identifier with ``_``,
``.``, a digit, brackets or an operator, a CamelCase name), a term the kit's Chinese sentences themselves use
(``softmax``, ``dtype``, ``logits``...), or something of the submission or the run: a task or check id, a key
or value of a failing example, the student's own exception text, code line and traceback, a path, a rerun
command, the profile and the devices. Anything else is an English word inside a Chinese sentence: a phrase
passed as a parameter that should have been ``messages.phrase``. In an English view, nothing is CJK.

Beyond the reports of whole gradings: the caption of a picture the code could not give, a failure's example (its
words and the labels of its keys), what a default changed, why a batch refused a hand-in (its pages), a worker's
reply that breaks the protocol and a result the wire format cannot carry.
"""

import html as html_text
import re
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from grader import api, figure_data
from grader.assignment import load
from grader.batch import runner as batch_runner
from grader.bugs.catalogue import Catalogue
from grader.errors import SAY, SubmissionError, call_timed_out, said, sentence, time_used_up
from grader.kit import record
from grader.messages import CATALOGUES, is_phrase, render, text
from grader.results import Message
from grader.submission import intake
from grader.views import gradescope, html, json_view, junit, terminal
from tests.strings import strings

TRANSFORMER, LM = load("transformer"), load("decoder_lm")
MUTANTS = {
    "transformer": ("sdpa.fill_zero", "layernorm.wrong_axis", "decoder_layer.cross_uses_target_mask"),
    "decoder_lm": ("block.ffn_reads_block_input", "rope.interleaved", "generate.reads_first_position"),
}
"""Mistakes whose failures name what differs in words (an output, the weights, a call of a module...)."""
LOSS = ("training.py", "return loss.item()", "return loss")
EDITS = {
    "transformer": {
        "sdpa.returns_none": ("attention.py", "return weights @ value, weights", "return None", ("sdpa",)),
        "train_step.returns_tensor": (*LOSS, ("training",)),
        "sdpa.returns_list": (
            "attention.py",
            "return weights @ value, weights",
            "return [weights @ value, weights]",
            ("sdpa",),
        ),
    },
    "decoder_lm": {
        "train_step.returns_tensor": (*LOSS, ("train_step",)),
        "param_groups.returns_none": ("optim.py", "    return [", "    return None and [", ("decay_groups",)),
    },
}
"""Submissions that the kit's own error sentences grade (a probe's bad-output error: ``errors.said``): ``(file, old
text, new text, the tasks graded)``, made from the reference."""
RETURNS = {
    "transformer": {
        "causal_mask.returns_list": (
            "masks.py",
            "return keep.unsqueeze(0).unsqueeze(0)",
            "return keep.tolist()",
            ("masks",),
        )
    },
    "decoder_lm": {
        "causal_attention.returns_tuple": (
            "attention.py",
            "    return weights @ v  #",
            "    return weights @ v, weights  #",
            ("gqa",),
        )
    },
}
"""Edits whose failure names what the code returned where a tensor was expected (``probes.returned``: a phrase,
never "a tuple" in a Chinese sentence), as ``EDITS``."""
PICTURES = {
    "transformer": {
        "sdpa.weights_cut": (
            "attention.py",
            "return weights @ value, weights",
            "return weights @ value, weights[..., :1]",
            ("sdpa",),
        )
    },
    "decoder_lm": {
        "rope.cut": (
            "rope.py",
            "* angles.sin()).to(x.dtype)",
            "* angles.sin()).to(x.dtype)[..., :-2]",
            ("rope",),
        )
    },
}
"""Edits whose report draws a picture that the code could not give: a shape the picture cannot use, as ``EDITS``.
These, and the edits above whose code gives no tensor, are graded with their pictures (``FIGURES``): a picture's
sentence says the kit's error in the reader's language (``figure_data.failure``)."""
FIGURES = {
    "sdpa.returns_none",
    "causal_mask.returns_list",
    "causal_attention.returns_tuple",
    "sdpa.weights_cut",
    "rope.cut",
}
EXAMPLES = {
    "transformer": {
        "noam.default_factor": (
            "training.py",
            "def noam_lr(step, d_model, warmup_steps, factor=1.0):",
            "def noam_lr(step, d_model, warmup_steps, factor=2.0):",
            ("training",),
        ),
        "sequence_loss.default_smoothing": (
            "training.py",
            "def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):",
            "def sequence_loss(logits, targets, pad_idx, label_smoothing=0.1):",
            ("training",),
        ),
        "positional.default_max_len": (
            "embedding.py",
            "def __init__(self, d_model, max_len=5000, dropout=0.1):",
            "def __init__(self, d_model, max_len=1000, dropout=0.1):",
            ("positional",),
        ),
    },
    "decoder_lm": {
        "clip.scales_up": (
            "optim.py",
            "scale = (max_norm / (total + 1e-6)).clamp(max=1.0)",
            "scale = max_norm / (total + 1e-6)",
            ("clip",),
        ),
        "adamw.no_decay": ("optim.py", "p.mul_(1 - lr * decay)  # decoupled", "pass  #", ("adamw",)),
        "loss.pad_id_zero": (
            "training.py",
            "def lm_loss(logits, tokens, pad_id=None):",
            "def lm_loss(logits, tokens, pad_id=0):",
            ("loss",),
        ),
        "rmsnorm.default_eps": (
            "norm.py",
            "def __init__(self, dim, eps=1e-6):",
            "def __init__(self, dim, eps=1e-3):",
            ("rmsnorm",),
        ),
        "model.default_eps": ("model.py", "num_kv_heads=None, eps=1e-6,", "num_kv_heads=None, eps=1e-5,", ("model",)),
    },
}
"""Edits whose failure says in words of the check's what the call was given (a list or a generator, the
defaults) or what a default changed (the failure of the call with the default spelled out, a loss that differs):
a phrase in the example or in the sentence's detail, said in the reader's language, as ``EDITS``."""
BANKED = {
    "transformer": {"banked:layernorm.unbiased_variance+encoder_layer.norms_swapped": ("layernorm", "encoder_layer")},
    "decoder_lm": {},
}
"""Mistakes (``+`` between two in other files) graded against an answer bank recorded over the reference alone, as a
student kit grades (``grader.kit``): the report says so, checks are blocked by a task beneath (the layer's calls to
the norms are not the reference's, so the record of the reference's parts cannot judge them), and examples the bank
holds no answer to are left out; ``{which: the tasks graded}``."""
SUBMISSIONS = [
    (a, which)
    for a in (TRANSFORMER, LM)
    for which in (
        "solution",
        "skeleton",
        *MUTANTS[a.name],
        *EDITS[a.name],
        *RETURNS[a.name],
        *PICTURES[a.name],
        *EXAMPLES[a.name],
        *BANKED[a.name],
    )
]
VIEWS = ("terminal", "html", "gradescope", "junit", "json")
CJK = re.compile("[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
WORD = re.compile(r"\.?[A-Za-z][A-Za-z0-9_.'\-]*")
"""A word; one right after a dot is a member of something (``.item()`` where a datum ``loss`` was blanked out)."""
CODE = re.compile(r"[_./\\\d=\[\](){}<>:`@#+*-]|[a-z][A-Z]|^[A-Z]{2,}|^[A-Z][a-z]+[A-Z]")
"""A word that is code: an identifier or expression, a CamelCase class name, an acronym."""
CALL = re.compile(r"[A-Za-z_][\w.]*\(.*\)", re.S)
"""An example's value that is code although it has spaces: a call (``AdamW(params, betas=(0.9, 0.95))``)."""
QUOTED = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|“[^”]*”|‘[^’]*’")
ENGLISH = {
    "a",
    "an",
    "the",
    "of",
    "in",
    "on",
    "is",
    "to",
    "by",
    "no",
    "and",
    "or",
    "after",
    "first",
    "one",
    "new",
    "only",
    "up",
    "down",
    "named",
    "with",
    "output",
    "weights",
    "steps",
    "step",
    "call",
    "returned",
}
"""Words that are English prose wherever they stand, even where a Chinese sentence quotes them as code."""


def _latin_terms():
    """Latin words the Chinese sentences themselves use outside code and placeholders (the house style)."""
    words = set()
    for template in CATALOGUES["zh"].values():
        prose = QUOTED.sub(" ", re.sub(r"\{[^{}]*\}", " ", template))
        words |= set(WORD.findall(prose))
    return words - ENGLISH


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{(assignment name, which): (result, the strings that are the run's data)}."""
    out = {}
    for a, which in SUBMISSIONS:
        tasks, bank = None, None
        if which in BANKED[a.name]:
            tasks = BANKED[a.name][which]
            bank = record(a, [a.reference], profiles=("quick",), tasks=tasks).save(
                tmp_path_factory.mktemp("bank") / "b"
            )
            catalogue = Catalogue(a)
            first, *others = (catalogue.by_id[b] for b in which.split(":", 1)[1].split("+"))
            path = catalogue.write_mutant(first, tmp_path_factory.mktemp("mutant") / "sub")
            for other in others:  # its file, over the first mutant's folder
                shutil.copy(catalogue.write_mutant(other, tmp_path_factory.mktemp("other") / "sub") / other.file, path)
        elif which in ("solution", "skeleton"):
            path = getattr(a, "reference" if which == "solution" else "skeleton")
        elif which in _edits(a):
            file, old, new, tasks = _edits(a)[which]
            path = tmp_path_factory.mktemp("edited") / "sub"
            shutil.copytree(a.reference, path)
            source = (path / file).read_text(encoding="utf-8")
            assert source.count(old) == 1, (which, old)
            (path / file).write_text(source.replace(old, new), encoding="utf-8")
        else:
            bug = next(b for b in Catalogue(a).bugs if b.id == which)
            path = Catalogue(a).write_mutant(bug, tmp_path_factory.mktemp("mutant") / "sub")
        figures = which in FIGURES
        result = api.check(path=path, assignment=a, profile="quick", lang="zh", tasks=tasks, figures=figures, bank=bank)
        if bank is not None:  # graded as a kit grades: said, some checks blocked, examples the bank lacks left out
            notes = {n.key for t in result.tasks for c in t.checks for n in c.notes}
            assert result.banked and "note.blocked_by" in notes, (which, notes)
            assert notes & {"note.not_in_bank", "note.failed_in_bank"}, (which, notes)
        if figures:  # a picture that could not be drawn says why
            errors = [v for f in result.figures.get("heatmaps", ()) for k, v in f.items() if k.endswith("error")]
            assert any(errors), which
        if which in EDITS[a.name]:  # the edit is graded by the kit's own error sentence, not the student's exception
            assert any((c.error or {}).get("data", {}).get(SAY) for t in result.tasks for c in t.checks), which
        elif which in PICTURES[a.name]:
            pass
        elif which in EXAMPLES[a.name]:  # the failure says what the call was given, or what differs, in words
            assert any(_worded(c) for t in result.tasks for c in t.checks), which
        elif tasks and bank is None:  # the edit fails a check that says what came back instead of a tensor
            assert any(c.message and c.message.key == "fail.not_tensor" for t in result.tasks for c in t.checks), which
        out[(a.name, which)] = result, _data_of(a, result)
    return out


def _edits(a):
    return {**EDITS[a.name], **RETURNS[a.name], **PICTURES[a.name], **EXAMPLES[a.name]}


def _worded(check):
    """Whether ``check`` failed with words of the check's in its example or as its sentence's detail."""
    detail = check.message.params.get("detail") if check.message else None
    return check.status == "failed" and (is_phrase(detail) or any(is_phrase(v) for v in _values(check.example)))


def _values(value):
    """The values in an example, nested ones too; a phrase is one."""
    if isinstance(value, dict) and not is_phrase(value):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _values(v)
    else:
        yield value


def _example_data(example, top=True):
    """The data of a failure's example: the names of its options and inputs and its values. Not data: its own
    keys, which a report shows as labels (``report.example.<key>``, in the reader's language), a phrase's words
    (only its parameters), a value of several words other than code (a call) or one in brackets ("(default)"),
    which are prose that should be a phrase."""
    for key, value in (example or {}).items():
        if not top:
            yield key
        if isinstance(value, dict) and not is_phrase(value):
            yield from _example_data(value, top=False)
            continue
        for v in _values(value):
            if is_phrase(v):
                yield from _example_data(v["params"], top=False)
            elif isinstance(v, str) and ((len(v.split()) == 1 and not v.startswith("(")) or CALL.fullmatch(v)):
                yield v


def _data_of(a, result):
    """The run's own strings, which a sentence may quote: ids, example keys and values, the student's text."""
    data = {result.submission, result.profile, *a.task_ids, *(n for t in a.tasks for n in t.names)}
    for task in result.tasks:
        for c in task.checks:
            data |= {c.id, c.reproduce, *_example_data(c.example)}
            error = c.error or {}
            if error.get("kind") in ("exception", "not_implemented", "import_error"):  # the student's words
                data |= {error.get(k) or "" for k in ("detail", "code", "trace")}
    for error in (result.load_errors or {}).values():
        data |= set(strings(error))
    data |= set(strings(result.environment))
    for figure in (result.figures or {}).get("heatmaps", ()):  # what a picture is drawn from: tokens, characters
        for panel in figure.get("panels") or ():
            data |= {str(label) for label in (*(panel.get("row_labels") or ()), *(panel.get("col_labels") or ()))}
        data |= set(strings(figure.get("quote")))
    return sorted((d for d in data if isinstance(d, str) and d.strip()), key=len, reverse=True)


def _render(view, result, lang):
    if view == "terminal":
        return terminal.summary(result, lang=lang, verbose=True)
    if view == "html":
        page = re.sub(r"(?s)<(script|style)[^>]*>.*?</\1>", " ", html.render(result, lang=lang))
        return html_text.unescape(re.sub(r"(?s)<[^>]+>", "\n", page))
    if view == "gradescope":  # Markdown: the backslash escapes of the submission's text undone
        return re.sub(r"\\(.)", r"\1", gradescope.render(result, lang=lang, output_format="md"))
    if view == "junit":
        return html_text.unescape(re.sub(r"(?s)<[^>]+>", "\n", junit.render(result, lang=lang)))
    data = json_view.to_data(result, lang=lang)
    return "\n".join(s for key, s in _pairs(data) if key == "message")


def _pairs(value, key=None):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _pairs(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _pairs(v, key)
    elif isinstance(value, str):
        yield key, value


def english_in_chinese(text, data, terms):
    """``(words, line)`` for each Chinese line of ``text`` that holds English words that are not data."""
    found = []
    for line in text.splitlines():
        if not CJK.search(line):
            continue
        line = _without(line, data)
        line = QUOTED.sub(" ", line)
        words = [
            w for w in WORD.findall(line) if w.lower() in ENGLISH or not (CODE.search(w) or w in terms or len(w) < 2)
        ]
        words = [w for w in words if not (CODE.search(w) and w.lower() not in ENGLISH)]
        if words:
            found.append((words, line.strip()))
    return found


def _without(line, data):
    """``line`` with each of ``data`` (longest first: a detail before the words inside it) blanked out; a short one
    only where it stands as a word of its own (an input named ``x`` is not the x of ``xor``)."""
    for datum in data:
        if datum in line:
            line = (
                line.replace(datum, " ")
                if len(datum) > 3
                else re.sub(rf"(?<![A-Za-z0-9_]){re.escape(datum)}(?![A-Za-z0-9_])", " ", line)
            )
    return line


def _message_data(result):
    """The string parameters of every message of ``result`` (a phrase's key is words, not data): what the run
    quotes, such as the corpus's own Chinese poems inside an English sentence."""
    out = set()

    def walk(value):
        if isinstance(value, dict) and "phrase" in value and "params" in value:
            walk(value["params"])
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            out.add(value)

    for task in result.tasks:
        for c in task.checks:
            for message in [c.message, *c.notes]:
                if message is not None:
                    walk(message.params)
            for d in c.diagnoses:
                walk(d.params)
    return sorted((d for d in out if d.strip()), key=len, reverse=True)


CASES = [pytest.param(a.name, which, view, id=f"{a.name}-{which}-{view}") for a, which in SUBMISSIONS for view in VIEWS]


@pytest.mark.parametrize("assignment, which, view", CASES)
def test_chinese_report_says_no_english_word(graded, assignment, which, view):
    result, data = graded[(assignment, which)]
    found = english_in_chinese(_render(view, result, "zh"), data, _latin_terms())
    assert not found, f"{len(found)} Chinese line(s) with English words:\n  " + "\n  ".join(
        f"{words}: {line}" for words, line in found[:10]
    )


@pytest.mark.parametrize("assignment, which, view", CASES)
def test_english_report_says_no_chinese_word(graded, assignment, which, view):
    result, data = graded[(assignment, which)]
    data = sorted({*data, *_message_data(result)}, key=len, reverse=True)
    lines = [line for line in _render(view, result, "en").splitlines() if CJK.search(_without(line, data))]
    assert not lines, f"{len(lines)} English line(s) with CJK:\n  " + "\n  ".join(lines[:10])


def test_the_check_sees_an_english_phrase_in_a_chinese_sentence():
    """The word test itself: a prose parameter is caught, identifiers, terms and the run's data are not."""
    terms = _latin_terms()
    line = "RMSNorm output 与期望值不一致"
    assert english_in_chinese(line, [], terms) == [(["output"], line)]
    assert english_in_chinese("causal_attention 的输出（float32）在 softmax 之后", [], terms) == []
    assert english_in_chinese("你的代码抛出了 ValueError: bad thing", ["ValueError: bad thing"], terms) == []
    assert english_in_chinese("the parameters of X do not match the contract。", [], terms)
    assert not english_in_chinese("the parameters of X", [], terms)  # no Chinese: not a Chinese sentence


def test_a_pictures_error_is_said_in_the_readers_language():
    """A picture the code could not give says why in the report's language (``figure_data.failure``): the kit's own
    words (an output of the wrong kind, a time limit) as a phrase; the student's exception text as it came."""
    where = SubmissionError(kind="exception", file="attention.py", line=7, code="while True: pass")
    errors = [
        SubmissionError(kind="bad_output", **said("say.too_deep")),
        SubmissionError(kind="bad_output", file="attention.py", line=7, **said("say.not_plain", type="numpy.ndarray")),
        call_timed_out("'sdpa'", 2.0, call_timeout=2.0, total_timeout=None, where=where),
        call_timed_out("'sdpa'", 1.0, call_timeout=2.0, total_timeout=30.0),
        time_used_up(30.0, "sdpa"),
    ]
    terms = _latin_terms()
    for err in errors:
        fig = figure_data.failure(err)
        line = text(fig["key"], "zh", **fig["params"])
        assert CJK.search(line) and not english_in_chinese(line, ["attention.py", "while True: pass"], terms), line
        assert not CJK.search(text(fig["key"], "en", **fig["params"]))
    student = SubmissionError(kind="exception", detail="ValueError: bad", file="attention.py", line=3)
    assert figure_data.failure(student)["params"]["detail"] == "ValueError: bad (attention.py:3)"


def _pages(out):
    """The text of every page and table a batch wrote in ``out``: the class page, the gradebook, each student's (not
    the LMS's table, whose column names are the LMS's)."""
    for path in sorted(Path(out).rglob("*")):
        if path.suffix in (".html", ".csv", ".md") and path.is_file() and path.name != "lms.csv":
            page = re.sub(r"(?s)<(script|style)[^>]*>.*?</\1>", " ", path.read_text(encoding="utf-8"))
            yield path.name, html_text.unescape(re.sub(r"(?s)<[^>]+>", "\n", page))


def test_a_refused_hand_in_is_said_in_the_pages_language(tmp_path):
    """Why a batch could not take a hand-in in (an unsafe or broken zip) is said in the pages' language."""
    cls = tmp_path / "class"
    cls.mkdir()
    with zipfile.ZipFile(cls / "escapes.zip", "w") as zf:
        zf.writestr("../escape.py", "x = 1")
    with zipfile.ZipFile(cls / "linked.zip", "w") as zf:
        link = zipfile.ZipInfo("masks.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    with zipfile.ZipFile(cls / "crowded.zip", "w") as zf:
        for i in range(intake.MAX_FILES + 1):
            zf.writestr(f"f{i}.py", "")
    (cls / "broken.zip").write_bytes(b"not a zip")
    data = ["'../escape.py'", "'masks.py'", "BadZipFile: File is not a zip file", "escapes.zip", "linked.zip"]
    data += ["crowded.zip", "broken.zip", "escapes", "linked", "crowded", "broken", "error"]  # ids, a status
    terms = _latin_terms()
    for lang in ("zh", "en"):
        out = tmp_path / f"out-{lang}"
        batch_runner.batch(submissions=cls, out=out, lang=lang, tasks=["masks"], profile="quick", jobs=1)
        pages = dict(_pages(out))
        assert "gradebook.csv" in pages and "index.html" in pages
        for name, page in pages.items():
            if lang == "zh":
                found = english_in_chinese(page, sorted(data, key=len, reverse=True), terms)
                assert not found, (name, found[:5])
            else:
                assert not [line for line in page.splitlines() if CJK.search(line)], name


def test_a_reply_the_protocol_does_not_allow_is_said_in_the_readers_language():
    """A worker's reply that breaks the protocol ends the check with the kit's sentence saying how
    (``worker._BadReply``), in the report's language; what the wire format could not decode is its data."""
    from grader.submission import wire
    from grader.submission.worker import _BadReply, _parse_reply

    replies = [[1, 2], {"standin": 3}, {"findings": 1, "result": {}}, {"error": "x"}, {"findings": []}, b"\x00"]
    terms = _latin_terms()
    for reply in replies:
        blob = reply if isinstance(reply, bytes) else wire.encode(reply)
        with pytest.raises(_BadReply) as bad:
            _parse_reply(blob)
        error = SubmissionError(kind="crashed", **said("say.worker_bad_reply", probe="'sdpa'", why=bad.value.why))
        message = Message(*sentence(error))
        data = ["'sdpa'", *strings(bad.value.why["params"] if is_phrase(bad.value.why) else [])]
        line = render(message, "zh")
        assert not english_in_chinese(line, sorted(data, key=len, reverse=True), terms), line
        assert not CJK.search(render(message, "en")), render(message, "en")


def test_a_result_the_wire_cannot_carry_is_said_in_the_readers_language():
    """A result the worker cannot send back (an object, a sparse tensor, a dict keyed by objects, nested too deep)
    is said in the report's language (``wire.reason``): the type's name is its data."""
    import torch

    from grader.submission import wire

    deep = []
    for _ in range(wire.MAX_DEPTH + 2):
        deep = [deep]
    terms = _latin_terms()
    for value in (object(), torch.zeros(2).to_sparse(), {object(): 1}, deep):
        with pytest.raises(wire.WireError) as bad:
            wire.encode({"result": {"out": value}})
        error = SubmissionError(kind="bad_output", **said("say.reply_unsendable", error=wire.reason(bad.value)))
        message = Message(*sentence(error))
        line = render(message, "zh")
        assert not english_in_chinese(line, ["builtins.object", "torch.sparse_coo", "object"], terms), line
        assert not CJK.search(render(message, "en")), render(message, "en")
