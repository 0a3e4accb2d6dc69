"""The known mistakes of hand-written Transformers, each a small edit of the reference (see ``grader.bugs.catalogue``).

Explanations and hints: ``messages/bugs_<lang>.py`` under ``bug.<id>`` and ``bughint.<id>``.
"""

from grader.author import bug as _bug

A, E, N, FF, M, LY, MD, DEC, TR = (
    "attention.py",
    "embedding.py",
    "norm.py",
    "feedforward.py",
    "masks.py",
    "layers.py",
    "model.py",
    "decoding.py",
    "training.py",
)

SDPA_SCORES = "scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)"
SDPA_FILL = 'scores = scores.masked_fill(~mask, float("-inf"))'
SDPA_SOFTMAX = "weights = scores.softmax(dim=-1)"
SDPA_RETURN = "return weights @ value, weights"
MHA_Q = "q = self.w_q(query).view(B, Lq, H, Dh).transpose(1, 2)"
MHA_K = "k = self.w_k(key).view(B, Lk, H, Dh).transpose(1, 2)"
MHA_V = "v = self.w_v(value).view(B, Lk, H, Dh).transpose(1, 2)"
MHA_CALL = "out, _ = scaled_dot_product_attention(q, k, v, mask, self.dropout)"
MHA_MERGE = "out = out.transpose(1, 2).contiguous().view(B, Lq, D)"
PE_ANGLE = "angle = position / 10000.0 ** (two_i / d_model)"
PE_SIN = "pe[:, 0::2] = torch.sin(angle)"
PE_COS = "pe[:, 1::2] = torch.cos(angle)"
PE_REGISTER = 'self.register_buffer("pe", pe.unsqueeze(0).to(torch.get_default_dtype()))'
LN_VAR = "var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)"
LN_OUT = "return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias"
ENC_POST_ATTN = "x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))"
ENC_POST_FFN = "x = self.norm2(x + self.dropout(self.ffn(x)))"
ENC_PRE_ATTN = "x = x + self.dropout(self.self_attn(n, n, n, mask))"
DEC_PRE_SELF = "x = x + self.dropout(self.self_attn(n, n, n, tgt_mask))"
DEC_PRE_CROSS = "x = x + self.dropout(self.cross_attn(n, memory, memory, memory_mask))"
DEC_POST_SELF = "x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)))"
DEC_POST_CROSS = "x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, memory_mask)))"
ENC_LAYERS = "EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation) for _ in range(num_layers)"
GREEDY_STEP = "hidden = model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)"

BUGS = (
    # -- sdpa ----------------------------------------------------------------------------------------
    _bug("sdpa.no_scale", A, (SDPA_SCORES, "scores = query @ key.transpose(-2, -1)")),
    _bug("sdpa.scale_not_sqrt", A, (SDPA_SCORES, "scores = query @ key.transpose(-2, -1) / d_k")),
    _bug("sdpa.scale_multiplied", A, (SDPA_SCORES, "scores = query @ key.transpose(-2, -1) * math.sqrt(d_k)")),
    _bug("sdpa.scale_value_dim", A, ("d_k = query.size(-1)", "d_k = value.size(-1)")),
    _bug("sdpa.softmax_wrong_axis", A, (SDPA_SOFTMAX, "weights = scores.softmax(dim=-2)")),
    _bug("sdpa.fill_zero", A, (SDPA_FILL, "scores = scores.masked_fill(~mask, 0.0)")),
    _bug("sdpa.mask_inverted", A, (SDPA_FILL, 'scores = scores.masked_fill(mask, float("-inf"))')),
    _bug(
        "sdpa.mask_after_softmax",
        A,
        (SDPA_FILL, "pass"),
        (SDPA_SOFTMAX, "weights = scores.softmax(dim=-1)\n    if mask is not None:\n        weights = weights * mask"),
    ),
    _bug(
        "sdpa.dropout_not_returned",
        A,
        ("weights = dropout(weights)", "dropped = dropout(weights)\n        return dropped @ value, weights"),
    ),
    _bug("sdpa.dropout_ignored", A, ("weights = dropout(weights)", "pass")),
    _bug("sdpa.weights_transposed", A, (SDPA_RETURN, "return weights @ value, weights.transpose(-2, -1)")),
    # -- mha ------------------------------------------------------------------------------------------
    _bug(
        "mha.scale_d_model",
        A,
        (MHA_CALL, "out, _ = scaled_dot_product_attention(q * math.sqrt(Dh / D), k, v, mask, self.dropout)"),
    ),
    _bug(
        "mha.split_without_transpose",
        A,
        (MHA_Q, "q = self.w_q(query).view(B, H, Lq, Dh)"),
        (MHA_K, "k = self.w_k(key).view(B, H, Lk, Dh)"),
        (MHA_V, "v = self.w_v(value).view(B, H, Lk, Dh)"),
    ),
    _bug("mha.merge_without_transpose", A, (MHA_MERGE, "out = out.contiguous().view(B, Lq, D)")),
    _bug("mha.no_output_projection", A, ("return self.w_o(out)", "return out")),
    _bug("mha.mask_ignored", A, (MHA_CALL, "out, _ = scaled_dot_product_attention(q, k, v, None, self.dropout)")),
    _bug("mha.key_uses_query_projection", A, (MHA_K, "k = self.w_q(key).view(B, Lk, H, Dh).transpose(1, 2)")),
    _bug("mha.value_uses_key_projection", A, (MHA_V, "v = self.w_k(value).view(B, Lk, H, Dh).transpose(1, 2)")),
    _bug("mha.value_from_key_input", A, (MHA_V, "v = self.w_v(key).view(B, Lk, H, Dh).transpose(1, 2)")),
    _bug(
        "mha.no_divisibility_check",
        A,
        ('raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")', "pass"),
        variants=[
            [('raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")', "assert False")]
        ],
    ),  # an assert in place of the contract's ValueError
    _bug(
        "mha.mask_extra_unsqueeze",
        A,
        (MHA_CALL, "mask = mask.unsqueeze(1) if mask is not None else None\n        " + MHA_CALL),
    ),
    # -- embedding ------------------------------------------------------------------------------------
    _bug("embedding.no_scale", E, ("return self.embed(tokens) * math.sqrt(self.d_model)", "return self.embed(tokens)")),
    _bug(
        "embedding.scale_fixed_512",
        E,
        ("return self.embed(tokens) * math.sqrt(self.d_model)", "return self.embed(tokens) * math.sqrt(512)"),
    ),
    _bug(
        "embedding.scale_d_model",
        E,
        ("return self.embed(tokens) * math.sqrt(self.d_model)", "return self.embed(tokens) * self.d_model"),
    ),
    _bug(
        "embedding.scale_divided",
        E,
        ("return self.embed(tokens) * math.sqrt(self.d_model)", "return self.embed(tokens) / math.sqrt(self.d_model)"),
    ),
    # -- positional -----------------------------------------------------------------------------------
    _bug(
        "positional.sin_cos_swapped",
        E,
        (PE_SIN, "pe[:, 0::2] = torch.cos(angle)"),
        (PE_COS, "pe[:, 1::2] = torch.sin(angle)"),
    ),
    _bug("positional.wrong_exponent", E, (PE_ANGLE, "angle = position / 10000.0 ** (2 * two_i / d_model)")),
    _bug(
        "positional.positions_from_one",
        E,
        (
            "position = torch.arange(max_len, dtype=torch.float64)",
            "position = torch.arange(1, max_len + 1, dtype=torch.float64)",
        ),
    ),
    _bug(
        "positional.halves_not_interleaved",
        E,
        (PE_SIN, "pe[:, : d_model // 2] = torch.sin(angle)"),
        (PE_COS, "pe[:, d_model // 2:] = torch.cos(angle)"),
    ),
    _bug(
        "positional.table_as_parameter",
        E,
        (PE_REGISTER, "self.pe = nn.Parameter(pe.unsqueeze(0).to(torch.get_default_dtype()), requires_grad=False)"),
    ),
    _bug("positional.table_as_attribute", E, (PE_REGISTER, "self.pe = pe.unsqueeze(0).to(torch.get_default_dtype())")),
    _bug("positional.no_dropout", E, ("return self.dropout(x + self.pe[:, :L])", "return x + self.pe[:, :L]")),
    # -- layernorm ------------------------------------------------------------------------------------
    _bug("layernorm.unbiased_variance", N, (LN_VAR, "var = x.var(dim=-1, keepdim=True)")),
    _bug(
        "layernorm.eps_outside_sqrt",
        N,
        (LN_OUT, "return (x - mean) / (torch.sqrt(var) + self.eps) * self.weight + self.bias"),
    ),
    _bug("layernorm.no_eps", N, (LN_OUT, "return (x - mean) / torch.sqrt(var) * self.weight + self.bias")),
    _bug(
        "layernorm.wrong_axis",
        N,
        ("mean = x.mean(dim=-1, keepdim=True)", "mean = x.mean(dim=0, keepdim=True)"),
        (LN_VAR, "var = ((x - mean) ** 2).mean(dim=0, keepdim=True)"),
    ),
    _bug("layernorm.no_affine", N, (LN_OUT, "return (x - mean) / torch.sqrt(var + self.eps)")),
    # -- feedforward ----------------------------------------------------------------------------------
    _bug("feedforward.no_activation", FF, ('h = F.relu(h) if self.activation == "relu" else F.gelu(h)', "pass")),
    _bug("feedforward.always_relu", FF, ('h = F.relu(h) if self.activation == "relu" else F.gelu(h)', "h = F.relu(h)")),
    _bug(
        "feedforward.activation_twice",
        FF,
        (
            "return self.linear2(self.dropout(h))",
            "out = self.linear2(self.dropout(h))\n"
            '        return F.relu(out) if self.activation == "relu" else F.gelu(out)',
        ),
    ),
    _bug(
        "feedforward.gelu_tanh",
        FF,
        (
            'h = F.relu(h) if self.activation == "relu" else F.gelu(h)',
            'h = F.relu(h) if self.activation == "relu" else F.gelu(h, approximate="tanh")',
        ),
    ),
    _bug(
        "feedforward.dropout_always_on",
        FF,
        ("return self.linear2(self.dropout(h))", "return self.linear2(F.dropout(h, self.dropout.p))"),
    ),
    # -- masks ----------------------------------------------------------------------------------------
    _bug(
        "masks.causal_blocks_diagonal",
        M,
        (
            "keep = torch.ones(size, size, dtype=torch.bool, device=device).tril()",
            "keep = torch.ones(size, size, dtype=torch.bool, device=device).tril(-1)",
        ),
        variants=[
            [
                (
                    "keep = torch.ones(size, size, dtype=torch.bool, device=device).tril()",
                    "keep = torch.ones(size, size, dtype=torch.bool, device=device).tril(-1)\n    keep[0, 0] = True",
                )
            ]
        ],
    ),  # diagonal blocked, first position kept visible
    _bug(
        "masks.causal_shows_future",
        M,
        (
            "keep = torch.ones(size, size, dtype=torch.bool, device=device).tril()",
            "keep = torch.ones(size, size, dtype=torch.bool, device=device).triu()",
        ),
    ),
    _bug(
        "masks.causal_on_cpu",
        M,
        (
            "keep = torch.ones(size, size, dtype=torch.bool, device=device).tril()",
            "keep = torch.ones(size, size, dtype=torch.bool).tril()",
        ),
    ),
    _bug("masks.padding_inverted", M, ("return (tokens != pad_idx)", "return (tokens == pad_idx)")),
    _bug("masks.padding_against_zero", M, ("return (tokens != pad_idx)", "return (tokens != 0)")),
    _bug(
        "masks.padding_on_queries",
        M,
        (
            "return (tokens != pad_idx).unsqueeze(1).unsqueeze(2)",
            "return (tokens != pad_idx).unsqueeze(1).unsqueeze(3)",
        ),
    ),
    _bug(
        "masks.target_without_padding",
        M,
        (
            "return padding_mask(tgt, pad_idx) & causal_mask(L, device=tgt.device)",
            "return causal_mask(L, device=tgt.device)",
        ),
        variants=[
            [
                (
                    "return padding_mask(tgt, pad_idx) & causal_mask(L, device=tgt.device)",
                    "return causal_mask(L, device=tgt.device).expand(tgt.size(0), 1, L, L)",
                )
            ]
        ],
    ),  # batch-shaped
    _bug(
        "masks.target_on_cpu",
        M,
        (
            "return padding_mask(tgt, pad_idx) & causal_mask(L, device=tgt.device)",
            "return padding_mask(tgt, pad_idx).cpu() & causal_mask(L)",
        ),
    ),
    # -- encoder_layer --------------------------------------------------------------------------------
    _bug(
        "encoder_layer.no_attention_residual",
        LY,
        (ENC_POST_ATTN, "x = self.norm1(self.dropout(self.self_attn(x, x, x, mask)))"),
        (ENC_PRE_ATTN, "x = self.dropout(self.self_attn(n, n, n, mask))"),
    ),
    _bug(
        "encoder_layer.no_ffn_residual",
        LY,
        (ENC_POST_FFN, "x = self.norm2(self.dropout(self.ffn(x)))"),
        (
            "x = x + self.dropout(self.ffn(self.norm2(x)))  # [B, L, D]\n        else",
            "x = self.dropout(self.ffn(self.norm2(x)))  # [B, L, D]\n        else",
        ),
    ),
    _bug(
        "encoder_layer.norm_first_ignored",
        LY,
        (
            "        if self.norm_first:\n            n = self.norm1(x)  # [B, L, D]",
            "        if False:\n            n = self.norm1(x)  # [B, L, D]",
        ),
    ),
    _bug(
        "encoder_layer.mask_ignored",
        LY,
        (ENC_POST_ATTN, "x = self.norm1(x + self.dropout(self.self_attn(x, x, x)))"),
        (ENC_PRE_ATTN, "x = x + self.dropout(self.self_attn(n, n, n))"),
    ),
    _bug(
        "encoder_layer.prenorm_residual_from_normed",
        LY,
        (ENC_PRE_ATTN, "x = n + self.dropout(self.self_attn(n, n, n, mask))"),
    ),
    _bug(
        "encoder_layer.norms_swapped",
        LY,
        (ENC_POST_ATTN, "x = self.norm2(x + self.dropout(self.self_attn(x, x, x, mask)))"),
        (ENC_POST_FFN, "x = self.norm1(x + self.dropout(self.ffn(x)))"),
    ),
    # -- decoder_layer --------------------------------------------------------------------------------
    _bug(
        "decoder_layer.cross_attends_to_self",
        LY,
        (DEC_POST_CROSS, "x = self.norm2(x + self.dropout(self.cross_attn(x, x, x)))"),
        (DEC_PRE_CROSS, "x = x + self.dropout(self.cross_attn(n, n, n))"),
    ),
    _bug(
        "decoder_layer.cross_uses_target_mask",
        LY,
        (DEC_POST_CROSS, "x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, tgt_mask)))"),
        (DEC_PRE_CROSS, "x = x + self.dropout(self.cross_attn(n, memory, memory, tgt_mask))"),
    ),
    _bug(
        "decoder_layer.memory_normalised",
        LY,
        (
            DEC_PRE_CROSS,
            "x = x + self.dropout(self.cross_attn(n, self.norm2(memory), self.norm2(memory), memory_mask))",
        ),
    ),
    _bug(
        "decoder_layer.self_mask_ignored",
        LY,
        (DEC_POST_SELF, "x = self.norm1(x + self.dropout(self.self_attn(x, x, x)))"),
        (DEC_PRE_SELF, "x = x + self.dropout(self.self_attn(n, n, n))"),
    ),
    _bug(
        "decoder_layer.no_cross_residual",
        LY,
        (DEC_POST_CROSS, "x = self.norm2(self.dropout(self.cross_attn(x, memory, memory, memory_mask)))"),
        (DEC_PRE_CROSS, "x = self.dropout(self.cross_attn(n, memory, memory, memory_mask))"),
    ),
    _bug(
        "decoder_layer.norm_first_ignored",
        LY,
        (
            "        if self.norm_first:\n            n = self.norm1(x)  # [B, Lt, D]",
            "        if False:\n            n = self.norm1(x)  # [B, Lt, D]",
        ),
    ),
    # -- model ----------------------------------------------------------------------------------------
    _bug(
        "model.layers_shared",
        MD,
        (ENC_LAYERS, "[EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation)] * num_layers"),
    ),
    _bug(
        "model.no_final_norm",
        MD,
        (
            '            x = layer(x, src_mask)  # [B, Ls, D]\n        if hasattr(self, "norm"):',
            "            x = layer(x, src_mask)  # [B, Ls, D]\n        if False:",
        ),
    ),
    _bug(
        "model.final_norm_always",
        MD,
        (
            "        if norm_first:\n            self.norm = LayerNorm(d_model)\n\n    def forward(self, src",
            "        self.norm = LayerNorm(d_model)\n\n    def forward(self, src",
        ),
    ),
    _bug("model.no_xavier_init", MD, ("nn.init.xavier_uniform_(p)", "pass")),
    _bug(
        "model.returns_probabilities",
        MD,
        ("return self.output_proj(hidden)", "return self.output_proj(hidden).softmax(dim=-1)"),
    ),
    _bug(
        "model.memory_mask_dropped",
        MD,
        ("hidden = self.decode(tgt, memory, tgt_mask, src_mask)", "hidden = self.decode(tgt, memory, tgt_mask)"),
    ),
    _bug("model.no_positional_encoding", MD, ("x = self.pos_enc(self.embed(src))", "x = self.embed(src)")),
    _bug("model.src_mask_ignored", MD, ("x = layer(x, src_mask)", "x = layer(x)")),
    # -- greedy ---------------------------------------------------------------------------------------
    _bug(
        "greedy.reads_first_position",
        DEC,
        ("next_token = model.output_proj(hidden[:, -1])", "next_token = model.output_proj(hidden[:, 0])"),
    ),
    _bug("greedy.no_padding_after_eos", DEC, ("next_token = next_token.masked_fill(done, pad_idx)", "pass")),
    _bug("greedy.no_early_stop", DEC, ("        if done.all():\n            break\n", "")),
    _bug("greedy.no_target_mask", DEC, (GREEDY_STEP, "hidden = model.decode(ys, memory, None, src_mask)")),
    _bug("greedy.one_step_short", DEC, ("for _ in range(max_len):", "for _ in range(max_len - 1):")),
    _bug("greedy.drops_bos", DEC, ("    return ys\n", "    return ys[:, 1:]\n")),
    _bug(
        "greedy.no_source_mask",
        DEC,
        ("memory = model.encode(src, src_mask)", "memory = model.encode(src)"),
        (GREEDY_STEP, "hidden = model.decode(ys, memory, target_mask(ys, pad_idx))"),
    ),
    # -- training -------------------------------------------------------------------------------------
    _bug("training.loss_counts_padding", TR, ("ignore_index=pad_idx,", "ignore_index=-100,")),
    _bug(
        "training.loss_diluted_by_padding",
        TR,
        (
            "label_smoothing=label_smoothing,\n    )",
            'label_smoothing=label_smoothing,\n        reduction="sum",\n    ) / targets.numel()',
        ),
    ),
    _bug("training.label_smoothing_ignored", TR, ("label_smoothing=label_smoothing,\n    )", ")")),
    _bug(
        "training.smoothing_over_wrong_classes",
        TR,
        (
            "return F.cross_entropy(\n"
            "        logits.reshape(-1, V),  # [B * L, V]\n"
            "        targets.reshape(-1),  # [B * L]\n"
            "        ignore_index=pad_idx,\n"
            "        label_smoothing=label_smoothing,\n"
            "    )",
            "logp = logits.reshape(-1, V).log_softmax(dim=-1)\n"
            "    t = targets.reshape(-1)\n"
            "    wanted = logp.new_full(logp.shape, label_smoothing / (V - 1))\n"
            "    wanted.scatter_(1, t.clamp(0, V - 1).unsqueeze(1), 1.0 - label_smoothing)\n"
            "    return -(wanted * logp).sum(dim=-1)[t != pad_idx].mean()",
        ),
    ),
    _bug(
        "training.targets_not_shifted",
        TR,
        ("tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]", "tgt_in, tgt_out = tgt[:, :-1], tgt[:, :-1]"),
    ),
    _bug("training.gradients_not_zeroed", TR, ("    optimizer.zero_grad()\n", "")),
    _bug(
        "training.clipping_ignored",
        TR,
        ("        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n", "        pass\n"),
    ),
    _bug(
        "training.no_causal_mask",
        TR,
        ("padding_mask(src, pad_idx), target_mask(tgt_in, pad_idx))", "padding_mask(src, pad_idx), None)"),
        variants=[
            [
                (
                    "padding_mask(src, pad_idx), target_mask(tgt_in, pad_idx))",
                    "padding_mask(src, pad_idx), padding_mask(tgt_in, pad_idx))",
                )
            ]
        ],
    ),  # padding only
    _bug("training.noam_step_zero", TR, ("    step = max(step, 1)\n", "")),
    _bug("training.noam_no_d_model_factor", TR, ("return factor * d_model**-0.5 * min(", "return factor * min(")),
    _bug(
        "training.noam_wrong_warmup_power",
        TR,
        (
            "d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)",
            "d_model**-0.5 * min(step**-0.5, step * warmup_steps**-0.5)",
        ),
    ),
    _bug("training.returns_tensor", TR, ("return loss.item()", "return loss")),
    # -- param_count ----------------------------------------------------------------------------------
    _bug(
        "param_count.no_biases",
        TR,
        ("attn = 4 * (D * D + D)", "attn = 4 * D * D"),
        ("ffn = D * F_ + F_ + F_ * D + D", "ffn = D * F_ + F_ * D"),
    ),
    _bug("param_count.no_norms", TR, ("norm = 2 * D", "norm = 0")),
    _bug(
        "param_count.decoder_two_norms",
        TR,
        ("decoder_layer = 2 * attn + ffn + 3 * norm", "decoder_layer = 2 * attn + ffn + 2 * norm"),
    ),
    _bug(
        "param_count.no_final_norm",
        TR,
        ("final_norms = 2 * norm if norm_first else 0", "final_norms = 0"),
        variants=[[("final_norms = 2 * norm if norm_first else 0", "final_norms = norm if norm_first else 0")]],
    ),
    _bug(
        "param_count.one_embedding",
        TR,
        ("embeddings = (src_vocab_size + tgt_vocab_size) * D", "embeddings = src_vocab_size * D"),
    ),
    _bug(
        "param_count.no_output_bias",
        TR,
        ("output_proj = D * tgt_vocab_size + tgt_vocab_size", "output_proj = D * tgt_vocab_size"),
    ),
    _bug(
        "param_count.decoder_one_attention",
        TR,
        ("decoder_layer = 2 * attn + ffn + 3 * norm", "decoder_layer = attn + ffn + 3 * norm"),
    ),
)

# Mistakes people make that are not in BUGS because no grader can tell them apart from another entry
# or from the reference; kept here so that nobody adds them back without a new idea for a check.
EQUIVALENT = {
    "training.clip_after_step": "clipping after optimizer.step() changes gradients that the next train_step "
    "zeroes before use, so it behaves exactly like training.clipping_ignored",
    "sdpa.key_transposed_other_way": "key.transpose(-1, -2) is the same tensor as key.transpose(-2, -1)",
    "sdpa.fill_minus_1e4": "a fill of -1e4 gives exactly 0 after the softmax in float64 and float32 for the "
    "score ranges involved, like -inf; it only shows as a float16 issue, not a bug",
}

SAME_EFFECT = {"training.clipping_ignored": ("training.clip_after_step",)}
"""Entries of ``BUGS`` that also stand for mistakes of ``EQUIVALENT`` (no check can tell them apart): their
message states the effect they share and lists the usual causes, so that a student is never told a cause their
code does not have."""
