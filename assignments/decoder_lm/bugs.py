"""The known mistakes of hand-written decoder-only LMs, each a small edit of ``reference/`` (``grader.bugs.catalogue``).

An id is ``<task>.<name>`` with a task id of ``TASKS``. Explanations and hints: ``messages/bugs_<lang>.py`` under
``bug.<id>`` and ``bughint.<id>``. Where a mistake takes several lines, the edit replaces one contiguous block
rather than several pieces: every non-empty part of a multi-edit bug is also a spelling of it, and half of, say,
"keys cached before RoPE" (keys never rotated) is a different mistake that must not be named as this one.
"""

from grader.author import bug as _bug

NORM, ROPE, FF, ATTN, CACHE, BLOCK, MODEL, SAMPLING, OPTIM, TRAIN = (
    "norm.py",
    "rope.py",
    "feedforward.py",
    "attention.py",
    "cache.py",
    "block.py",
    "model.py",
    "sampling.py",
    "optim.py",
    "training.py",
)

# -- the reference lines the edits replace (each occurs exactly once in its file) -----------------------------------
NORM_INV = "inv_rms = torch.rsqrt(xc.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # (..., 1)"
NORM_OUT = "return (xc * inv_rms * self.weight.to(compute)).to(x.dtype)  # (..., D)"
ROPE_ROTATE = "x1, x2 = x.chunk(2, dim=-1)\n    return torch.cat([-x2, x1], dim=-1)"
ROPE_THETA = "theta = self.base ** (-torch.arange(0, Dh, 2, device=x.device, dtype=compute) / Dh)"
ROPE_POS = "positions = torch.arange(offset, offset + L, device=x.device, dtype=compute)"
ROPE_CAT = "angles = torch.cat([angles, angles], dim=-1)"
FFN = "return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))"
GQA_K = "k = k.repeat_interleave(H // Hkv, dim=1)"
GQA_KV = (
    GQA_K + "  # (B, Hkv, Lk, Dh) -> (B, H, Lk, Dh): heads h*Hkv/H share one\n"
    "    v = v.repeat_interleave(H // Hkv, dim=1)"
)
GQA_SCORES = "scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)"
GQA_KEEP = "keep = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device).tril(diagonal=Lk - Lq)"
GQA_WEIGHTS = 'weights = scores.masked_fill(~keep, float("-inf")).softmax(dim=-1)'
ATT_OFFSET = "offset = 0 if cache is None else cache.length"
ATT_K = "k = self.rope(self._split(self.k_proj(x), self.num_kv_heads), offset)  # (B, Hkv, L, Dh)"
ATT_V = "v = self._split(self.v_proj(x), self.num_kv_heads)  # (B, Hkv, L, Dh)"
ATT_UPDATE = "k, v = cache.update(k, v)  # (B, Hkv, offset + L, Dh)"
ATT_SPLIT = "return x.view(B, L, heads, self.head_dim).transpose(1, 2)"
ATT_MERGE = "y = y.transpose(1, 2).reshape(B, L, self.num_heads * self.head_dim)"
CACHE_CAT = (
    "self.keys = torch.cat([self.keys, keys], dim=2)  # (B, Hkv, T + L, Dh)\n"
    "            self.values = torch.cat([self.values, values], dim=2)"
)
BLOCK_ATT = "h = x + self.attn(self.attn_norm(x), cache)  # (B, L, D)"
BLOCK_FFN = "return h + self.ffn(self.ffn_norm(h))  # (B, L, D)"
MODEL_EMBED = "h = self.embed(tokens)  # (B, L) -> (B, L, D)"
TOPK_OUT = 'return logits.masked_fill(logits < threshold, float("-inf"))'
TOPP_SORT = "sorted_probs = probs.sort(dim=-1, descending=True).values"
SAMPLE_TEMP = "    logits = logits / temperature\n"
SAMPLE_K = "    if top_k is not None:\n        logits = top_k_filter(logits, top_k)\n"
SAMPLE_P = "    if top_p is not None:\n        logits = top_p_filter(logits, top_p)\n"
GEN_FWD = "logits = model(step_input, caches)[:, -1]"
GROUPS = (
    '{"params": [p for p in trainable if p.dim() >= 2], "weight_decay": weight_decay},\n'
    '        {"params": [p for p in trainable if p.dim() < 2], "weight_decay": 0.0},'
)
GROUPS_TRAINABLE = "trainable = [p for _, p in model.named_parameters() if p.requires_grad]"
ADAM_DECAY = "p.mul_(1 - lr * decay)  # decoupled: the gradient never sees the decay"
ADAM_MOMENTS = (
    "m.mul_(beta1).add_(p.grad, alpha=1 - beta1)\n        v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)"
)
ADAM_DENOM = "denom = (v / (1 - beta2**t)).sqrt_().add_(eps)  # √v̂ + ε"
ADAM_UPDATE = "p.addcdiv_(m, denom, value=-lr / (1 - beta1**t))"
SCHED_COS = "return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))"
CLIP_TOTAL = "total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))"
CLIP_SCALE = "scale = (max_norm / (total + 1e-6)).clamp(max=1.0)"
LOSS_SHIFT = (
    "predictions = logits[:, :-1].reshape(-1, V)  # (B*(L-1), V): positions 0 … L-2\n"
    "    targets = tokens[:, 1:].reshape(-1)  # (B*(L-1),): tokens 1 … L-1"
)
LOSS_OUT = "return F.cross_entropy(predictions, targets, ignore_index=-100 if pad_id is None else pad_id)"
IGNORE = "ignore = -100 if pad_id is None else pad_id\n    "
STEP_FORWARD = "    loss = lm_loss(model(tokens), tokens, pad_id)\n    loss.backward()\n"
COUNT_ATT = "attention = 2 * dim * dim + 2 * dim * num_kv_heads * head_dim"
COUNT_LAYER = "per_layer = 2 * dim + attention + 3 * dim * hidden_dim"
COUNT_OUT = "return vocab_size * dim + num_layers * per_layer + dim"

BUGS = (
    # -- rmsnorm ------------------------------------------------------------------------------------------------
    _bug(
        "rmsnorm.mean_subtracted",
        NORM,
        ("xc = x.to(compute)", "xc = x.to(compute)\n        xc = xc - xc.mean(dim=-1, keepdim=True)"),
    ),
    _bug(
        "rmsnorm.eps_outside_sqrt",
        NORM,
        (NORM_INV, "inv_rms = 1 / (xc.pow(2).mean(dim=-1, keepdim=True).sqrt() + self.eps)"),
    ),
    _bug(
        "rmsnorm.sum_not_mean",
        NORM,
        (NORM_INV, "inv_rms = torch.rsqrt(xc.pow(2).sum(dim=-1, keepdim=True) + self.eps)"),
    ),
    _bug("rmsnorm.no_sqrt", NORM, (NORM_INV, "inv_rms = 1 / (xc.pow(2).mean(dim=-1, keepdim=True) + self.eps)")),
    _bug("rmsnorm.no_weight", NORM, (NORM_OUT, "return (xc * inv_rms).to(x.dtype)")),
    # -- rope -----------------------------------------------------------------------------------------------------
    _bug(
        "rope.interleaved",
        ROPE,
        (ROPE_ROTATE, "x1, x2 = x[..., 0::2], x[..., 1::2]\n    return torch.stack([-x2, x1], dim=-1).flatten(-2)"),
        (ROPE_CAT, "angles = angles.repeat_interleave(2, dim=-1)"),
    ),
    _bug(
        "rope.frequencies_i_not_2i",
        ROPE,
        (ROPE_THETA, "theta = self.base ** (-torch.arange(0, Dh // 2, device=x.device, dtype=compute) / Dh)"),
    ),
    _bug("rope.offset_ignored", ROPE, (ROPE_POS, "positions = torch.arange(L, device=x.device, dtype=compute)")),
    _bug(
        "rope.rotates_backwards",
        ROPE,
        (ROPE_ROTATE, "x1, x2 = x.chunk(2, dim=-1)\n    return torch.cat([x2, -x1], dim=-1)"),
    ),
    # -- swiglu ---------------------------------------------------------------------------------------------------
    _bug("swiglu.gate_up_swapped", FF, (FFN, "return self.down_proj(F.silu(self.up_proj(x)) * self.gate_proj(x))")),
    _bug("swiglu.sigmoid_not_silu", FF, (FFN, "return self.down_proj(self.gate_proj(x).sigmoid() * self.up_proj(x))")),
    _bug("swiglu.silu_after_product", FF, (FFN, "return self.down_proj(F.silu(self.gate_proj(x) * self.up_proj(x)))")),
    # -- gqa ------------------------------------------------------------------------------------------------------
    _bug(
        "gqa.repeat_not_interleave",
        ATTN,
        (GQA_KV, "k = k.repeat(1, H // Hkv, 1, 1)\n    v = v.repeat(1, H // Hkv, 1, 1)"),
    ),
    _bug("gqa.no_scale", ATTN, (GQA_SCORES, "scores = q @ k.transpose(-2, -1)")),
    _bug("gqa.scale_by_model_dim", ATTN, (GQA_SCORES, "scores = q @ k.transpose(-2, -1) / math.sqrt(H * Dh)")),
    _bug(
        "gqa.causal_top_left", ATTN, (GQA_KEEP, "keep = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device).tril()")
    ),
    _bug(
        "gqa.diagonal_blocked",
        ATTN,
        (GQA_KEEP, "keep = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device).tril(diagonal=Lk - Lq - 1)"),
    ),
    _bug("gqa.fill_zero", ATTN, (GQA_WEIGHTS, "weights = scores.masked_fill(~keep, 0.0).softmax(dim=-1)")),
    _bug(
        "gqa.softmax_over_queries",
        ATTN,
        (GQA_WEIGHTS, 'weights = scores.masked_fill(~keep, float("-inf")).softmax(dim=-2)'),
    ),
    # -- attention ------------------------------------------------------------------------------------------------
    _bug("attention.positions_restart", ATTN, (ATT_OFFSET, "offset = 0")),
    _bug(
        "attention.keys_cached_before_rope",
        ATTN,
        (
            f"{ATT_K}\n        {ATT_V}\n        if cache is not None:\n            {ATT_UPDATE}",
            "k = self._split(self.k_proj(x), self.num_kv_heads)  # (B, Hkv, L, Dh)\n"
            f"        {ATT_V}\n        if cache is not None:\n            {ATT_UPDATE}\n"
            "        k = self.rope(k, offset)",
        ),
    ),
    _bug(
        "attention.v_rotated",
        ATTN,
        (ATT_V, "v = self.rope(self._split(self.v_proj(x), self.num_kv_heads), offset)  # (B, Hkv, L, Dh)"),
    ),
    _bug("attention.split_without_transpose", ATTN, (ATT_SPLIT, "return x.view(B, heads, L, self.head_dim)")),
    _bug("attention.merge_without_transpose", ATTN, (ATT_MERGE, "y = y.reshape(B, L, self.num_heads * self.head_dim)")),
    _bug("attention.kv_heads_not_checked", ATTN, ("if num_heads % num_kv_heads:", "if num_kv_heads > num_heads:")),
    # -- kv_cache -------------------------------------------------------------------------------------------------
    _bug(
        "kv_cache.wrong_axis",
        CACHE,
        (
            CACHE_CAT,
            "self.keys = torch.cat([self.keys, keys], dim=1)\n"
            "            self.values = torch.cat([self.values, values], dim=1)",
        ),
    ),
    _bug(
        "kv_cache.newest_first",
        CACHE,
        (
            CACHE_CAT,
            "self.keys = torch.cat([keys, self.keys], dim=2)\n"
            "            self.values = torch.cat([values, self.values], dim=2)",
        ),
    ),
    _bug("kv_cache.overwritten", CACHE, (CACHE_CAT, "self.keys, self.values = keys, values")),
    _bug(
        "kv_cache.not_kept",
        CACHE,
        (
            CACHE_CAT + "\n        return self.keys, self.values",
            "return torch.cat([self.keys, keys], dim=2), torch.cat([self.values, values], dim=2)\n"
            "        return self.keys, self.values",
        ),
    ),
    _bug(
        "kv_cache.length_is_len",
        CACHE,
        ("return 0 if self.keys is None else self.keys.size(2)", "return 0 if self.keys is None else len(self.keys)"),
    ),
    # -- block ----------------------------------------------------------------------------------------------------
    _bug(
        "block.post_norm",
        BLOCK,
        (
            f"{BLOCK_ATT}\n        {BLOCK_FFN}",
            "h = self.attn_norm(x + self.attn(x, cache))\n        return self.ffn_norm(h + self.ffn(h))",
        ),
    ),
    _bug(
        "block.residual_from_normed",
        BLOCK,
        (
            f"{BLOCK_ATT}\n        {BLOCK_FFN}",
            "x = self.attn_norm(x)\n        h = x + self.attn(x, cache)\n"
            "        h = self.ffn_norm(h)\n        return h + self.ffn(h)",
        ),
    ),
    _bug("block.one_norm_for_both", BLOCK, (BLOCK_FFN, "return h + self.ffn(self.attn_norm(h))")),
    _bug("block.ffn_reads_block_input", BLOCK, (BLOCK_FFN, "return h + self.ffn(self.ffn_norm(x))")),
    # -- model ----------------------------------------------------------------------------------------------------
    _bug(
        "model.untied_head",
        MODEL,
        ("        self.lm_head.weight = self.embed.weight  # tied: one tensor, trained by both uses\n", ""),
    ),
    _bug(
        "model.embedding_scaled",
        MODEL,
        (MODEL_EMBED, "h = self.embed(tokens) * self.embed.embedding_dim**0.5  # (B, L) -> (B, L, D)"),
    ),
    _bug("model.final_norm_missing", MODEL, ("return self.lm_head(self.norm(h))", "return self.lm_head(h)")),
    _bug("model.caches_not_passed", MODEL, ("h = layer(h, cache)", "h = layer(h)")),
    _bug(
        "model.new_cache_aliased",
        MODEL,
        ("return [KVCache() for _ in self.layers]", "return [KVCache()] * len(self.layers)"),
    ),
    # -- top_k ----------------------------------------------------------------------------------------------------
    _bug("top_k.strict", SAMPLING, (TOPK_OUT, 'return logits.masked_fill(logits <= threshold, float("-inf"))')),
    _bug("top_k.fill_zero", SAMPLING, (TOPK_OUT, "return logits.masked_fill(logits < threshold, 0.0)")),
    _bug("top_k.k_not_clamped", SAMPLING, ("    k = min(k, logits.size(-1))\n", "")),
    _bug("top_k.in_place", SAMPLING, (TOPK_OUT, 'return logits.masked_fill_(logits < threshold, float("-inf"))')),
    # -- top_p ----------------------------------------------------------------------------------------------------
    _bug(
        "top_p.one_too_early",
        SAMPLING,
        ("mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs", "mass_before = sorted_probs.cumsum(dim=-1)"),
    ),
    _bug("top_p.sorted_ascending", SAMPLING, (TOPP_SORT, "sorted_probs = probs.sort(dim=-1).values")),
    _bug("top_p.not_sorted", SAMPLING, (TOPP_SORT, "sorted_probs = probs")),
    _bug("top_p.no_softmax", SAMPLING, ("probs = logits.softmax(dim=-1)  # (..., V)", "probs = logits  # (..., V)")),
    # -- sample ---------------------------------------------------------------------------------------------------
    _bug(
        "sample.temperature_after_softmax",
        SAMPLING,
        (
            SAMPLE_TEMP + SAMPLE_K + SAMPLE_P + "    probs = logits.softmax(dim=-1)",
            SAMPLE_K + SAMPLE_P + "    probs = logits.softmax(dim=-1) / temperature",
        ),
    ),
    _bug(
        "sample.temperature_after_filters",
        SAMPLING,
        (SAMPLE_TEMP + SAMPLE_K + SAMPLE_P, SAMPLE_K + SAMPLE_P + SAMPLE_TEMP),
    ),
    _bug("sample.filters_swapped", SAMPLING, (SAMPLE_K + SAMPLE_P, SAMPLE_P + SAMPLE_K)),
    _bug(
        "sample.no_greedy_branch",
        SAMPLING,
        ("    if temperature == 0:\n        return logits.argmax(dim=-1)  # (B,)\n", ""),
    ),
    # -- generate -------------------------------------------------------------------------------------------------
    _bug("generate.cache_unused", SAMPLING, (GEN_FWD, "logits = model(torch.cat(tokens, dim=1))[:, -1]")),
    _bug(
        "generate.whole_sequence_with_cache",
        SAMPLING,
        (GEN_FWD, "logits = model(torch.cat(tokens, dim=1), caches)[:, -1]"),
    ),
    _bug("generate.reads_first_position", SAMPLING, (GEN_FWD, "logits = model(step_input, caches)[:, 0]")),
    _bug(
        "generate.cache_reset_each_step",
        SAMPLING,
        (
            "    for _ in range(max_new_tokens):\n",
            "    for _ in range(max_new_tokens):\n        caches = model.new_cache()\n",
        ),
    ),
    _bug(
        "generate.leaves_eval_mode",
        SAMPLING,
        (
            "    caches = model.new_cache()\n    tokens = [prompt]",
            "    model.eval()\n    caches = model.new_cache()\n    tokens = [prompt]",
        ),
    ),
    # -- decay_groups ---------------------------------------------------------------------------------------------
    _bug(
        "decay_groups.decay_on_norms",
        OPTIM,
        (GROUPS, '{"params": trainable, "weight_decay": weight_decay},\n        {"params": [], "weight_decay": 0.0},'),
    ),
    _bug(
        "decay_groups.inverted",
        OPTIM,
        (
            GROUPS,
            '{"params": [p for p in trainable if p.dim() < 2], "weight_decay": weight_decay},\n'
            '        {"params": [p for p in trainable if p.dim() >= 2], "weight_decay": 0.0},',
        ),
    ),
    _bug(
        "decay_groups.shared_listed_twice",
        OPTIM,
        (
            GROUPS_TRAINABLE,
            "trainable = [p for m in model.modules() for p in m.parameters(recurse=False) if p.requires_grad]",
        ),
    ),
    _bug(
        "decay_groups.frozen_included",
        OPTIM,
        (GROUPS_TRAINABLE, "trainable = [p for _, p in model.named_parameters()]"),
    ),
    # -- adamw ----------------------------------------------------------------------------------------------------
    _bug(
        "adamw.l2_not_decoupled",
        OPTIM,
        (
            f"{ADAM_DECAY}\n        {ADAM_MOMENTS}",
            "g = p.grad + decay * p  # the decay goes through the gradient (Adam's L2)\n"
            "        m.mul_(beta1).add_(g, alpha=1 - beta1)\n"
            "        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)",
        ),
    ),
    _bug("adamw.no_decay", OPTIM, (ADAM_DECAY, "pass")),
    _bug("adamw.decay_without_lr", OPTIM, (ADAM_DECAY, "p.mul_(1 - decay)")),
    _bug(
        "adamw.no_bias_correction",
        OPTIM,
        (f"{ADAM_DENOM}\n        {ADAM_UPDATE}", "denom = v.sqrt().add_(eps)\n        p.addcdiv_(m, denom, value=-lr)"),
    ),
    _bug("adamw.eps_inside_sqrt", OPTIM, (ADAM_DENOM, "denom = (v / (1 - beta2**t)).add_(eps).sqrt_()")),
    _bug(
        "adamw.lr_from_defaults",
        OPTIM,
        ('lr, (beta1, beta2), eps, decay = group["lr"]', 'lr, (beta1, beta2), eps, decay = self.defaults["lr"]'),
    ),
    # -- schedule -------------------------------------------------------------------------------------------------
    _bug(
        "schedule.warmup_from_zero",
        OPTIM,
        ("return max_lr * (step + 1) / warmup_steps", "return max_lr * step / warmup_steps"),
    ),
    _bug("schedule.warmup_overshoots", OPTIM, ("if step < warmup_steps:", "if step <= warmup_steps:")),
    _bug(
        "schedule.progress_over_total",
        OPTIM,
        (
            "progress = (step - warmup_steps) / (total_steps - warmup_steps)",
            "progress = (step - warmup_steps) / total_steps",
        ),
    ),
    _bug("schedule.min_lr_ignored", OPTIM, (SCHED_COS, "return 0.5 * max_lr * (1 + math.cos(math.pi * progress))")),
    _bug("schedule.cosine_continues", OPTIM, ("    if step > total_steps:\n        return min_lr\n", "")),
    # -- clip -----------------------------------------------------------------------------------------------------
    _bug("clip.no_eps", OPTIM, (CLIP_SCALE, "scale = (max_norm / total).clamp(max=1.0)")),
    _bug("clip.scales_up", OPTIM, (CLIP_SCALE, "scale = max_norm / (total + 1e-6)")),
    _bug(
        "clip.per_parameter",
        OPTIM,
        (
            "for g in grads:\n        g.mul_(scale.to(g.device, g.dtype))",
            "for g in grads:\n        g.mul_((max_norm / (torch.linalg.vector_norm(g) + 1e-6)).clamp(max=1.0))",
        ),
    ),
    _bug(
        "clip.sum_of_norms",
        OPTIM,
        (CLIP_TOTAL, "total = torch.stack([torch.linalg.vector_norm(g) for g in grads]).sum()"),
    ),
    _bug(
        "clip.returns_clipped_norm",
        OPTIM,
        (
            "    return total\n",
            "    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))\n",
        ),
    ),
    # -- loss -----------------------------------------------------------------------------------------------------
    _bug(
        "loss.not_shifted", TRAIN, (LOSS_SHIFT, "predictions = logits.reshape(-1, V)\n    targets = tokens.reshape(-1)")
    ),
    _bug(
        "loss.shifted_wrong_way",
        TRAIN,
        (LOSS_SHIFT, "predictions = logits[:, 1:].reshape(-1, V)\n    targets = tokens[:, :-1].reshape(-1)"),
    ),
    _bug("loss.pad_not_ignored", TRAIN, (LOSS_OUT, "return F.cross_entropy(predictions, targets)")),
    _bug(
        "loss.pad_dilutes_mean",
        TRAIN,
        (
            LOSS_OUT,
            IGNORE + 'return F.cross_entropy(predictions, targets, ignore_index=ignore, reduction="none").mean()',
        ),
    ),
    _bug(
        "loss.mean_per_row",
        TRAIN,
        (
            LOSS_OUT,
            IGNORE + "B = logits.size(0)\n"
            '    per_token = F.cross_entropy(predictions, targets, ignore_index=ignore, reduction="none")\n'
            "    counted = (targets != ignore).view(B, -1).sum(dim=1)\n"
            "    return (per_token.view(B, -1).sum(dim=1) / counted).mean()",
        ),
    ),
    # -- train_step -----------------------------------------------------------------------------------------------
    _bug("train_step.no_zero_grad", TRAIN, ("    optimizer.zero_grad()\n", "")),
    _bug(
        "train_step.zero_grad_after_backward",
        TRAIN,
        ("    optimizer.zero_grad()\n" + STEP_FORWARD, STEP_FORWARD + "    optimizer.zero_grad()\n"),
    ),
    _bug(
        "train_step.clip_ignored",
        TRAIN,
        ("    if max_grad_norm is not None:\n        clip_grad_norm_(model.parameters(), max_grad_norm)\n", ""),
    ),
    _bug(
        "train_step.lr_not_set",
        TRAIN,
        ('    if lr is not None:\n        for group in optimizer.param_groups:\n            group["lr"] = lr\n', ""),
    ),
    _bug("train_step.returns_tensor", TRAIN, ("return loss.item()", "return loss")),
    # -- param_count ----------------------------------------------------------------------------------------------
    _bug(
        "param_count.head_counted_twice",
        TRAIN,
        (COUNT_OUT, "return 2 * vocab_size * dim + num_layers * per_layer + dim"),
    ),
    _bug("param_count.final_norm_missing", TRAIN, (COUNT_OUT, "return vocab_size * dim + num_layers * per_layer")),
    _bug("param_count.block_norms_missing", TRAIN, (COUNT_LAYER, "per_layer = attention + 3 * dim * hidden_dim")),
    _bug("param_count.kv_heads_ignored", TRAIN, (COUNT_ATT, "attention = 4 * dim * dim")),
    _bug(
        "param_count.ffn_two_matrices", TRAIN, (COUNT_LAYER, "per_layer = 2 * dim + attention + 2 * dim * hidden_dim")
    ),
)

# Mistakes people make that are not in BUGS because no grader can tell them apart from another entry or from the
# reference; kept here so that nobody adds them back without a new idea for a check.
EQUIVALENT = {
    "sample.temperature_ignored": "never dividing by the temperature draws from the same distribution as "
    "sample.temperature_after_softmax: multinomial renormalises probs / temperature",
    "top_p.p_ignored": "a top-p filter that returns the logits unchanged behaves exactly like "
    "top_p.sorted_ascending, whose kept set (an ascending prefix) always reaches the smallest "
    "probability and so keeps every token",
    "decay_groups.by_name_weight": "routing by '\"weight\" in name' decays every parameter of this model (it has no "
    "biases, and the norms' parameters are named weight): decay_groups.decay_on_norms",
    "decay_groups.dim_at_least_one": "'p.dim() >= 1' puts every parameter of this model in the decayed group: "
    "decay_groups.decay_on_norms",
    "train_step.clip_after_step": "clipping after optimizer.step() changes gradients that the next train_step "
    "zeroes before use, so it behaves exactly like train_step.clip_ignored",
    "adamw.decay_after_update": "shrinking θ after the Adam step instead of before differs by lr²·λ·update, "
    "below any tolerance the grader can use",
    "model.tied_before_init": "tying before self.apply(_init_weights) draws the shared tensor again from the same "
    "N(0, 0.02²): the same model up to the random draw, which no check may rely on",
}

SAME_EFFECT = {
    "sample.temperature_after_softmax": ("sample.temperature_ignored",),
    "top_p.sorted_ascending": ("top_p.p_ignored",),
    "decay_groups.decay_on_norms": ("decay_groups.by_name_weight", "decay_groups.dim_at_least_one"),
    "train_step.clip_ignored": ("train_step.clip_after_step",),
}
"""Entries of ``BUGS`` that also stand for mistakes of ``EQUIVALENT`` (no check can tell them apart): their
message states the effect they share and lists the usual causes, so that a student is never told a cause their
code does not have."""
