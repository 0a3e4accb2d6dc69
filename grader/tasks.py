"""The task ids of the contract: which file and names each covers, and what it builds on."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Task:
    """One piece of student work, as named in ``CONTRACT.md``."""

    id: str
    """The task id (``"mha"``), used by stubs, checks, reports and drills."""
    file: str
    """The contract file that holds it (``"attention.py"``); empty for ``overfit``."""
    names: tuple
    """The module-level names it defines in that file."""
    deps: tuple = field(default=())
    """Task ids whose code it calls: graded 'isolated', these are the reference's."""
    own_reference: tuple = field(default=())
    """Names of its own that its isolated checks take from the reference too, because each is graded by a check
    of its own (``train_step`` is judged over the reference's ``sequence_loss``: a loss mistake is charged once,
    in ``training.loss``)."""


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
    Task("model", "model.py", ("Encoder", "Decoder", "Transformer"),
         ("embedding", "positional", "encoder_layer", "decoder_layer", "layernorm")),
    Task("greedy", "decoding.py", ("greedy_decode",), ("model", "masks")),
    Task("training", "training.py", ("sequence_loss", "noam_lr", "train_step"), ("model", "masks"),
         own_reference=("sequence_loss",)),
    Task("param_count", "training.py", ("count_parameters",)),
    Task("overfit", "", (), ("model", "greedy", "training")),
)

TASK_BY_ID = {t.id: t for t in TASKS}
TASK_IDS = tuple(t.id for t in TASKS)
CONTRACT_FILES = tuple(sorted({t.file for t in TASKS if t.file}))
NAME_TO_TASK = {name: t.id for t in TASKS for name in t.names}
NAME_TO_FILE = {name: t.file for t in TASKS for name in t.names}


def all_deps(task_id):
    """Every task ``task_id`` builds on, directly or through another task."""
    seen, todo = [], list(TASK_BY_ID[task_id].deps)
    while todo:
        dep = todo.pop(0)
        if dep not in seen:
            seen.append(dep)
            todo.extend(TASK_BY_ID[dep].deps)
    return tuple(seen)


def parse_task_list(text):
    """``"mha,masks"`` -> ``("mha", "masks")``; raises ``ValueError`` naming an unknown id."""
    ids = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [i for i in ids if i not in TASK_BY_ID]
    if unknown:
        raise ValueError(f"unknown task id(s) {', '.join(unknown)}; expected some of: {', '.join(TASK_IDS)}")
    return ids
