"""The first assignment: the encoder-decoder Transformer of the seeds' tutorials, written piece by piece.

Its contract page is ``docs/CONTRACT.md``; its reference and stubs are the repository's top-level ``solution/``
and ``skeleton/`` folders. Everything else that is specific to it lives in this folder: checks, probes, known
bugs, sentences, the pinyin corpus, figures, drills and quiz, the demo.
"""

from pathlib import Path

from grader.author import Assignment, Task

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def _root(package):
    """The folder of a top-level package (``solution``), found without importing it (a worker must not)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parent
    return REPO / package


TASKS = (
    Task("sdpa", "attention.py", ("scaled_dot_product_attention",)),
    Task("mha", "attention.py", ("MultiHeadAttention",), ("sdpa",)),
    Task("embedding", "embedding.py", ("TokenEmbedding",)),
    Task("positional", "embedding.py", ("PositionalEncoding",)),
    Task("layernorm", "norm.py", ("LayerNorm",)),
    Task("feedforward", "feedforward.py", ("FeedForward",)),
    Task("masks", "masks.py", ("padding_mask", "causal_mask", "target_mask")),
    Task("encoder_layer", "layers.py", ("EncoderLayer",), ("mha", "feedforward", "layernorm")),
    Task("decoder_layer", "layers.py", ("DecoderLayer",), ("mha", "feedforward", "layernorm")),
    Task(
        "model",
        "model.py",
        ("Encoder", "Decoder", "Transformer"),
        ("embedding", "positional", "encoder_layer", "decoder_layer", "layernorm"),
    ),
    Task("greedy", "decoding.py", ("greedy_decode",), ("model", "masks")),
    Task(
        "training",
        "training.py",
        ("sequence_loss", "noam_lr", "train_step"),
        ("model", "masks"),
        own_reference=("sequence_loss",),
    ),
    Task("param_count", "training.py", ("count_parameters",)),
    Task("overfit", "", (), ("model", "greedy", "training")),
)

CHECKS = tuple(f"{__name__}.checks.{t.id}" for t in TASKS)

ASSIGNMENT = Assignment(
    name="transformer",
    title={"en": "Hand-written Transformer", "zh": "手写 Transformer"},
    tasks=TASKS,
    reference=_root("solution"),
    skeleton=_root("skeleton"),
    contract=REPO / "docs" / "CONTRACT.md",
    checks=CHECKS,
    probes=(f"{__name__}.probes",),
    probe_tasks={"sdpa": ("sdpa",), "greedy": ("greedy",), "train_steps": ("training",), "overfit": ("overfit",)},
    warm_up=f"{__name__}.probes:warm_up",
    messages=f"{__name__}.messages",
    bugs=f"{__name__}.bugs",
    banned=(
        "torch.nn.MultiheadAttention",
        "torch.nn.Transformer",
        "torch.nn.TransformerEncoder",
        "torch.nn.TransformerEncoderLayer",
        "torch.nn.TransformerDecoder",
        "torch.nn.TransformerDecoderLayer",
        "torch.nn.functional.scaled_dot_product_attention",
        "torch.nn.functional.multi_head_attention_forward",
        "torch.nn.LayerNorm",
        "torch.nn.functional.layer_norm",
        "solution",
    ),
    figures=f"{__name__}.figures:collect",
    practice=f"{__name__}.practice",
    data=HERE / "data",
    demo=f"{__name__}.demo:main",
)
