"""The second assignment: a modern decoder-only language model, as data.

Students write RMSNorm, rotary position embedding, SwiGLU, grouped-query causal attention with a KV cache, the
pre-norm block, the model with tied embeddings, sampling (temperature, top-k, top-p) and the training pieces
(next-token loss, AdamW, warm-up + cosine schedule, gradient clipping, parameter count). ``docs/CONTRACT_LM.md``
is the contract; ``reference/`` implements it and ``skeleton/`` holds the stubs handed to students. Everything
specific to it lives in this folder: checks (one module per task), probes, known bugs, sentences.
"""

from pathlib import Path

from grader.author import Assignment, Task

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

TASKS = (
    Task("rmsnorm", "norm.py", ("RMSNorm",)),
    Task("rope", "rope.py", ("RotaryEmbedding",)),
    Task("swiglu", "feedforward.py", ("SwiGLU",)),
    Task("gqa", "attention.py", ("causal_attention",)),
    Task("attention", "attention.py", ("CausalSelfAttention",), ("gqa", "rope", "kv_cache")),
    Task("kv_cache", "cache.py", ("KVCache",)),
    Task("block", "block.py", ("DecoderBlock",), ("rmsnorm", "attention", "swiglu")),
    Task("model", "model.py", ("DecoderLM",), ("block", "rmsnorm", "kv_cache")),
    Task("top_k", "sampling.py", ("top_k_filter",)),
    Task("top_p", "sampling.py", ("top_p_filter",)),
    Task("sample", "sampling.py", ("sample_next",), ("top_k", "top_p")),
    Task("generate", "sampling.py", ("generate",), ("model", "sample")),
    Task("decay_groups", "optim.py", ("param_groups",)),
    Task("adamw", "optim.py", ("AdamW",)),
    Task("schedule", "optim.py", ("cosine_lr",)),
    Task("clip", "optim.py", ("clip_grad_norm_",)),
    Task("loss", "training.py", ("lm_loss",)),
    Task("train_step", "training.py", ("train_step",), ("model", "loss", "clip")),
    Task("param_count", "training.py", ("count_parameters",)),
    # The whole: no file or names of its own (docs/CONTRACT_LM.md "Task ids").
    Task("overfit", "", (), ("model", "train_step", "generate", "decay_groups", "adamw", "schedule")),
)

CHECKS = tuple(f"{__name__}.checks.{t.id}" for t in TASKS)

ASSIGNMENT = Assignment(
    name="decoder_lm",
    title={"en": "Decoder-only language model", "zh": "仅解码器语言模型"},
    tasks=TASKS,
    reference=HERE / "reference",
    skeleton=HERE / "skeleton",
    contract=REPO / "docs" / "CONTRACT_LM.md",
    checks=CHECKS,
    probes=(f"{__name__}.probes", f"{__name__}.sampling_probes"),
    probe_tasks={
        # -- probes.py (the modules) --
        "lm_attention_grad": ("gqa",),
        "lm_cache_ops": ("kv_cache",),
        # -- sampling_probes.py (sampling, optimiser, training) --
        "lm_filter": ("top_k", "top_p"),
        "lm_sample_draw": ("sample",),
        "lm_sample_counts": ("sample",),
        "lm_generate": ("generate",),
        "lm_param_groups": ("decay_groups",),
        "lm_adamw": ("adamw",),
        "lm_clip": ("clip",),
        "lm_train_steps": ("train_step",),
        "lm_overfit": ("overfit",),
    },
    messages=f"{__name__}.messages",
    bugs=f"{__name__}.bugs",
    practice=f"{__name__}.practice",
    data=HERE / "data",
    demo=f"{__name__}.demo:main",
    figures=f"{__name__}.figures:collect",
    warm_up=f"{__name__}.probes:warm_up",
    banned=(
        "torch.nn.RMSNorm",
        "torch.nn.functional.rms_norm",
        "torch.rms_norm",
        "torch.nn.functional.scaled_dot_product_attention",
        "torch.nn.attention.flex_attention",
        "torch.nn.MultiheadAttention",
        "torch.nn.functional.multi_head_attention_forward",
        "torch.nn.Transformer",
        "torch.nn.TransformerEncoder",
        "torch.nn.TransformerEncoderLayer",
        "torch.nn.TransformerDecoder",
        "torch.nn.TransformerDecoderLayer",
        "torch.optim.AdamW",
        "torch.optim.Adam",
        "torch.optim.lr_scheduler",
        "torch.nn.utils.clip_grad_norm_",
        "torch.nn.utils.clip_grad_norm",
        "torch.nn.utils.get_total_norm",
        "torch.nn.utils.clip_grads_with_norm_",
        "assignments.decoder_lm.reference",
    ),
)
