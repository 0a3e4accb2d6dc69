"""The Transformer assignment's own sentences (English): its checks' failures."""

MESSAGES = {
    "fail.blocked_nonzero": "the attention weight at {index} is {value} although the mask blocks it; blocked "
    "weights must be exactly 0.",
    "fail.rows_not_normalised": "attention weight rows do not sum to 1 (worst error {error}) or are negative: the "
    "softmax must run over the keys (last dimension).",
    "fail.sdpa_dropout_unused": "the dropout module passed to scaled_dot_product_attention was not applied to the "
    "weights.",
    "fail.sdpa_dropout_mismatch": "the returned weights are not the ones that multiplied value: return the weights "
    "after dropout.",
    "fail.mha_divisible": "MultiHeadAttention(d_model={d_model}, num_heads={num_heads}) raised {raised}; expected "
    "ValueError because {num_heads} does not divide {d_model}.",
    "fail.pe_parameter": "PositionalEncoding has trainable parameters {names}; the table must be a buffer "
    "(register_buffer), never trained.",
    "fail.pe_missing": "PositionalEncoding has no buffer named 'pe' (buffers found: {found}); register the table "
    "with self.register_buffer('pe', ...).",
    "fail.pe_not_moved": "the table 'pe' did not follow .to(dtype) / .to(device): keep it in a registered buffer, "
    "not a plain attribute.",
    "fail.ln_init": "LayerNorm must start with weight = 1 and bias = 0.",
    "fail.not_xavier": "parameter {name} is not Xavier-uniform initialised (expected |w| <= {bound} and std about "
    "{expected_std}, got std {std}).",
    "fail.no_positions": "the encoder's output is permutation-equivariant: the positional encoding has no effect.",
    "fail.greedy_too_long": "greedy_decode generated {got} tokens although max_len={max_len}.",
    "fail.train_loss": "the loss returned by train_step at step {step} is {got}, different from the expected "
    "loss for the same weights and batch.",
    "fail.train_loss_nonfinite": "train_step returned a loss of {value} at step {step}; for the same weights and "
    "batch the expected loss is a finite number.",
    "fail.noam": "noam_lr(step={step}, d_model={d_model}, warmup_steps={warmup}) = {got}, which does not match "
    "the formula.",
    "fail.param_count": "count_parameters returned {got}, off by {difference} from the real parameter count.",
    "fail.overfit_loss": "after {steps} training steps on 10 samples the loss is {last}, not below {target}: the "
    "model does not learn.",
    "fail.overfit_nonfinite": "the loss became {value} at step {step} of {steps} on 10 samples, and training "
    "stopped there. Common causes: a row of attention scores that is all -inf (a position "
    "that may attend to nothing), a division by zero, a log of 0.",
    "fail.overfit_decode": "the loss fell, but greedy_decode decodes {wrong} of the 10 training sources to "
    "something other than their targets (for example: {examples}).",
    "fail.residual_dropout": "{what}: with dropout=1.0 in train() mode (and the sublayers' own dropout off) every sublayer's output is dropped, so only the residual path is left, and the output is not the reference's. Either a sublayer's output does not pass through a dropout with the layer's probability before the residual add (missing, or a fixed probability), or the residual path itself differs (a residual add missing, a norm elsewhere): where another check of this layer fails too, look at that one first.",
    "fail.padding_row": "{what}: the embedding row of token {token} starts as all zeros (padding_idx?); the contract's nn.Embedding(V, D) has "
    "no padding_idx, every row trains.",
    # -- what a default changed, said inside fail.defaults
    "transformer.detail.smoothing": "the loss differs from the one without smoothing",
    "transformer.detail.pe_shape": "the buffer pe has shape {got}, expected {expected}",
    "transformer.detail.params_differ": "{count} parameters or buffers differ, e.g. {first}",
    "transformer.detail.param_differs": "{name}: {got} (expected {expected})",
}
