"""The data behind the Transformer's report pictures, gathered once by running a few probes on both runners.

``collect(sub=..., ref=...)`` returns plain data (lists of floats, strings and booleans, never tensors), stored
in ``GradeResult.figures`` and drawn by the HTML view: ``{"heatmaps": [attention, positional]}``, two figures of
the kit's generic heat-map kind (``docs/ASSIGNMENTS.md``, *Pictures*):

- ``attention``: the attention weights of the submission's and the reference's
  ``scaled_dot_product_attention`` for one sentence of the pinyin corpus, each under its own
  ``causal_mask`` (the submission's under the reference's mask when its own cannot be used, with
  the reason), the cells each mask blocks hatched: a wrong causal mask shows in the picture;
- ``positional``: the submission's positional-encoding table (the reference's when the
  submission's cannot be built, with the reason).

Nothing here may fail the grading run: whatever the student's code raises is recorded as the
figure's ``error`` (a message key and its parameters) and the other figures go on. Every sentence is a message
key (``messages/figures_<lang>.py``, or the kit's ``report.figure_*`` errors). The loss curve and the mismatch
maps need no extra run: they come with the check results (``CheckResult.artifacts``).
"""

import math

import torch

from assignments.transformer.corpus import load_pairs, src_tokens, tgt_tokens
from grader.author import SubmissionError, failure, phrase, returned, rows

D_ATTENTION = 16
"""Width of the made-up query and key vectors."""
PE_KWARGS = {"d_model": 32, "max_len": 50, "dropout": 0.0}
"""The positional table drawn: 50 positions by 32 dimensions."""
SEED = 0


def collect(*, sub, ref):
    """The figures' data: ``{"heatmaps": [attention, positional]}``; see the module docstring."""
    return {"heatmaps": [attention(sub=sub, ref=ref), positional(sub=sub, ref=ref)]}


def sentence(min_len=6, max_len=8):
    """A fixed sentence of the corpus: ``(syllables, characters)``."""
    pairs = load_pairs()
    for pinyin, chars in pairs:
        if min_len <= len(src_tokens(pinyin)) <= max_len:
            return src_tokens(pinyin), tgt_tokens(chars)
    pinyin, chars = pairs[0]
    return src_tokens(pinyin), tgt_tokens(chars)


def attention_inputs(syllables, d=D_ATTENTION, seed=SEED):
    """Query, key and value ``[1, L, d]`` (float64) from seeded random embeddings of the syllables.

    The same syllable gets the same vector; query and key are two seeded random projections of it,
    scaled so that the weights are neither uniform nor one-hot.
    """
    g = torch.Generator().manual_seed(seed)
    vocab = sorted(set(syllables))
    table = torch.randn(len(vocab), d, generator=g, dtype=torch.float64)
    x = table[[vocab.index(s) for s in syllables]].unsqueeze(0)  # [1, L, d]
    w_q = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    w_k = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    return x @ w_q * 1.5, x @ w_k * 1.5, x  # [1, L, d] each


def causal(L):
    """The keep-mask ``[L, L]``: position i sees 0..i (the contract's ``causal_mask``, as the reference builds it)."""
    return torch.ones(L, L, dtype=torch.bool).tril()


def attention(*, sub, ref):
    """The ``attention`` heat-map figure: both runners' weights ``[L][L]`` for the sentence, each under its own
    causal mask (the cells it blocks hatched), labelled with the syllables and their characters, and what the
    comparison says.

    The submission's ``causal_mask(L)`` builds its mask, as its decoder would; when that mask cannot be used,
    ``mask_error`` says why and the submission's attention is drawn under the reference's mask.
    Besides the figure's fields, the data keeps ``tokens`` and ``characters``, ``max_abs_diff`` (``None`` when
    either side is missing or has NaN/inf where the other has a number), ``mask_differs`` (the positions where the
    two masks disagree), ``mask_error`` and ``reference_error``.
    """
    syllables, chars = sentence()
    L = len(syllables)
    query, key, value = attention_inputs(syllables)
    ref_mask = causal(L)
    sub_mask, mask_error = _causal_mask(sub, L)
    if sub_mask is None:
        sub_mask = ref_mask
    ref_w, ref_error = _weights(ref, {"query": query, "key": key, "value": value, "mask": ref_mask}, L)
    sub_w, sub_error = _weights(sub, {"query": query, "key": key, "value": value, "mask": sub_mask}, L)
    diff = None
    if sub_w is not None and ref_w is not None:
        pairs = [(a, b) for ra, rb in zip(sub_w, ref_w) for a, b in zip(ra, rb)]
        if all((a is None) == (b is None) for a, b in pairs):
            diff = max((abs(a - b) for a, b in pairs if a is not None), default=0.0)
    mask_differs = int((sub_mask != ref_mask).sum())
    # Each syllable with its character ("xue 学"): source and target have one token per character.
    labels = [f"{s} {c}" for s, c in zip(syllables, chars)] if len(chars) == L else list(syllables)
    panels = []
    for title, weights, mask in (
        ("transformer.fig.attention_yours", sub_w, sub_mask),
        ("transformer.fig.attention_reference", ref_w, ref_mask),
    ):
        if weights is not None:
            panels.append(
                {
                    "title": title,
                    "values": weights,
                    "row_labels": labels,
                    "col_labels": labels,
                    "x_label": "transformer.fig.axis_key",
                    "y_label": "transformer.fig.axis_query",
                    "scale": "sequential",
                    "vmin": 0.0,
                    "vmax": 1.0,
                    "legend": "transformer.fig.attention_legend",
                    "decimals": 2,
                    "blocked": (~mask).tolist(),
                    "blocked_label": "transformer.fig.attention_blocked",
                }
            )
    comparison = []
    if sub_w is not None:  # the masks explain the submission's picture, when there is one
        if mask_error:
            comparison.append({"key": mask_error["key"], "params": mask_error["params"]})
        elif mask_differs:
            comparison.append(
                {
                    "key": "transformer.fig.attention_mask_differs",
                    "params": {"size": L, "count": mask_differs, "total": L * L},
                }
            )
    if diff is not None:
        comparison.append(
            {"key": "transformer.fig.attention_same"}
            if diff <= 1e-6
            else {"key": "transformer.fig.attention_differs", "params": {"diff": diff}}
        )
    return {
        "id": "attention",
        "title": "transformer.fig.attention_title",
        "note": "transformer.fig.attention_note",
        "quote": [{"text": " ".join(syllables), "italic": True}, {"text": "".join(chars), "lang": "zh-CN"}],
        "error": sub_error,
        "panels": panels,
        "comparison": comparison,
        "tokens": syllables,
        "characters": chars,
        "max_abs_diff": diff,
        "mask_differs": mask_differs,
        "mask_error": mask_error,
        "reference_error": ref_error,
    }


def _causal_mask(runner, L):
    """``(the runner's causal_mask(L) as a boolean [L, L], None)`` or ``(None, why it cannot be used)``.

    Any shape that broadcasts to ``[1, 1, L, L]`` is accepted, as the attention would broadcast it.
    """
    try:
        got = runner.run("call", "integrated", name="causal_mask", args=[L])
    except SubmissionError as err:
        not_written = err.kind == "not_implemented"
        key = "transformer.fig.mask_not_implemented" if not_written else "transformer.fig.mask_failed"
        return None, {"key": key, "params": {"detail": failure(err)["params"]["detail"]}, "kind": err.kind}
    except Exception as exc:  # noqa: BLE001 - a picture must never sink the report
        return None, {"key": "transformer.fig.mask_failed", "params": {"detail": f"{type(exc).__name__}: {exc}"}}
    mask = got.get("out")
    if mask is None:
        detail = phrase("transformer.fig.mask_returned", got=returned(got))
    elif mask.dtype != torch.bool:
        detail = phrase("transformer.fig.mask_dtype", dtype=str(mask.dtype).replace("torch.", ""))
    elif mask.dim() > 4 or any(n not in (1, m) for n, m in zip(reversed(mask.shape), (L, L, 1, 1))):
        detail = phrase("transformer.fig.mask_shape", shape=list(mask.shape), expected=[1, 1, L, L])
    else:
        return mask.to("cpu").expand(1, 1, L, L)[0, 0].clone(), None
    return None, {"key": "transformer.fig.mask_failed", "params": {"detail": detail}}


def _weights(runner, args, L):
    """``(weights as rows, None)`` or ``(None, error)`` for one runner."""
    try:
        got = runner.run("sdpa", "integrated", **args)
        weights = got["weights"]
        if list(weights.shape) not in ([1, L, L], [L, L]):
            return None, {
                "key": "report.figure_shape",
                "params": {"what": phrase("what.weights_word"), "got": list(weights.shape), "expected": [1, L, L]},
            }
        return rows(weights.reshape(L, L)), None
    except SubmissionError as err:
        return None, failure(err)
    except Exception as exc:  # noqa: BLE001 - a picture must never sink the report
        return None, {"key": "report.figure_failed", "params": {"detail": f"{type(exc).__name__}: {exc}"}}


def positional(*, sub, ref):
    """The ``positional`` heat-map figure: the submission's table ``[max_len][d_model]``, or the reference's with the
    reason (the panel's note says whose it is); ``source`` says which (``None``: neither could be built)."""
    table, error = _pe_table(sub)
    source = "submission"
    if table is None:
        table, ref_error = _pe_table(ref)
        source = "reference" if table is not None else None
        if table is None:
            error = error or ref_error
    panels = []
    if table is not None:
        # Drawn as the table is indexed, pe[position, dimension]: a position per row, so that the picture is tall
        # rather than wide and fits a phone's width whole.
        panels.append(
            {
                "values": table,
                "x_label": "transformer.fig.axis_dimension",
                "y_label": "transformer.fig.axis_position",
                "scale": "diverging",
                "vmin": -1.0,
                "vmax": 1.0,
                "legend": "transformer.fig.pe_legend",
                "show_values": False,
                "note": "transformer.fig.pe_reference_note" if source == "reference" else None,
            }
        )
    return {
        "id": "positional",
        "title": "transformer.fig.pe_title",
        "note": {
            "key": "transformer.fig.pe_caption",
            "params": dict(d_model=PE_KWARGS["d_model"], max_len=PE_KWARGS["max_len"]),
        },
        "error": error,
        "panels": panels,
        "comparison": [],
        "source": source,
        "d_model": PE_KWARGS["d_model"],
        "max_len": PE_KWARGS["max_len"],
    }


def _pe_table(runner):
    try:
        got = runner.run("params", "integrated", name="PositionalEncoding", kwargs=dict(PE_KWARGS))
        pe = got["buffer_values"].get("pe")
        if pe is None:
            return None, {"key": "transformer.fig.no_pe", "params": {"found": sorted(got["buffer_values"])}}
        expected = [PE_KWARGS["max_len"], PE_KWARGS["d_model"]]
        if list(pe.shape) not in ([1, *expected], expected):
            return None, {
                "key": "report.figure_shape",
                "params": {"what": "pe", "got": list(pe.shape), "expected": [1, *expected]},
            }
        return rows(pe.reshape(expected)), None
    except SubmissionError as err:
        return None, failure(err)
    except Exception as exc:  # noqa: BLE001 - a picture must never sink the report
        return None, {"key": "report.figure_failed", "params": {"detail": f"{type(exc).__name__}: {exc}"}}
