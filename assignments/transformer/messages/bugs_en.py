"""English messages for the known-bug diagnosis.

Keys: ``bug.<id>`` names the mistake of catalogued bug ``<id>`` (``grader.bugs.catalogue``) and is
read after "Looks like:"; ``bughint.<id>`` says where to look and what to change, without giving the
code; ``bug.hint.*`` describe how an output differs from the expected one when no catalogued bug
matches (their parameters are filled in by ``grader.bugs.diagnose.pattern_hints``).
"""

MESSAGES = {
    # -- sdpa -----------------------------------------------------------------------------------------
    "bug.sdpa.no_scale": "the scores q·kᵀ are not scaled at all: the division by √d_k is missing.",
    "bughint.sdpa.no_scale": "Before the softmax, divide the scores by the square root of the key dimension.",
    "bug.sdpa.scale_not_sqrt": "the scores are divided by d_k instead of √d_k.",
    "bughint.sdpa.scale_not_sqrt": "The scale is the square root of the key dimension, not the dimension itself.",
    "bug.sdpa.scale_multiplied": "the scores are multiplied by √d_k instead of divided by it.",
    "bughint.sdpa.scale_multiplied": "The scaling should make the scores smaller: divide q·kᵀ by √d_k rather than "
    "multiply.",
    "bug.sdpa.scale_value_dim": "the scores are scaled by √(value dim) instead of √(key dim) = √d_k.",
    "bughint.sdpa.scale_value_dim": "Take d_k from the last dimension of the query (or key), not of the value.",
    "bug.sdpa.softmax_wrong_axis": "the softmax runs over the queries (dim -2) instead of over the keys (the last "
    "dimension).",
    "bughint.sdpa.softmax_wrong_axis": "Each query's row of weights must sum to 1: apply the softmax along the last "
    "dimension.",
    "bug.sdpa.fill_zero": "blocked scores are set to 0 instead of -inf, so blocked keys still get a share of the "
    "attention.",
    "bughint.sdpa.fill_zero": "Before the softmax, fill blocked scores with -inf (or a very negative number) so that "
    "their weight comes out exactly 0.",
    "bug.sdpa.mask_inverted": "the mask is used the wrong way round: positions marked True (may attend) are blocked "
    "and those marked False are kept.",
    "bughint.sdpa.mask_inverted": "Masks here are keep-masks (True = may attend): block the scores where the mask is "
    "False.",
    "bug.sdpa.mask_after_softmax": "the mask zeroes the weights after the softmax, so blocked keys still took part in "
    "the normalisation and rows no longer sum to 1.",
    "bughint.sdpa.mask_after_softmax": "Mask the scores before the softmax, so that the softmax itself gives blocked "
    "keys weight 0 and renormalises the rest.",
    "bug.sdpa.dropout_not_returned": "dropout is applied to the weights that multiply value, but the weights returned "
    "are the ones from before dropout.",
    "bughint.sdpa.dropout_not_returned": "Return the very weights that multiplied value, that is, the ones after "
    "dropout.",
    "bug.sdpa.dropout_ignored": "the dropout module passed in is never applied to the attention weights.",
    "bughint.sdpa.dropout_ignored": "When a dropout module is given, apply it to the weights after the softmax and "
    "before they multiply value.",
    "bug.sdpa.weights_transposed": "the output is right, but the returned weights are transposed ([..., Lk, Lq] "
    "instead of [..., Lq, Lk]).",
    "bughint.sdpa.weights_transposed": "Return the weights the way they were used: one row per query, one column per "
    "key.",
    # -- mha ------------------------------------------------------------------------------------------
    "bug.mha.scale_d_model": "the attention scores are scaled by √d_model instead of by √(head size) = "
    "√(d_model / num_heads).",
    "bughint.mha.scale_d_model": "Inside one head the key dimension is d_model / num_heads: scale by the square root "
    "of that, not of d_model.",
    "bug.mha.split_without_transpose": "the heads are split by viewing straight to [B, H, L, Dh], which mixes "
    "positions and heads instead of giving each head its slice of every position.",
    "bughint.mha.split_without_transpose": "Reshape to [B, L, H, Dh] first, then move the head axis in front of the "
    "sequence axis.",
    "bug.mha.merge_without_transpose": "the heads are merged by viewing [B, H, Lq, Dh] straight as [B, Lq, D], which "
    "mixes positions and heads.",
    "bughint.mha.merge_without_transpose": "Before merging, move the head axis back behind the sequence axis (next to "
    "Dh) and make the tensor contiguous.",
    "bug.mha.no_output_projection": "the output projection w_o is never applied to the merged heads.",
    "bughint.mha.no_output_projection": "After merging the heads, pass the result through the output projection.",
    "bug.mha.mask_ignored": "the mask is never passed on to the attention, so every key is attended to, padded and "
    "future positions included.",
    "bughint.mha.mask_ignored": "Hand the mask you are given on to scaled_dot_product_attention.",
    "bug.mha.key_uses_query_projection": "the keys are projected with w_q instead of w_k.",
    "bughint.mha.key_uses_query_projection": "Query, key and value each have their own projection: check which Linear "
    "the keys go through.",
    "bug.mha.value_uses_key_projection": "the values are projected with w_k instead of w_v.",
    "bughint.mha.value_uses_key_projection": "Query, key and value each have their own projection: check which Linear "
    "the values go through.",
    "bug.mha.value_from_key_input": "the values are computed from the key input instead of the value input.",
    "bughint.mha.value_from_key_input": "Project the value argument to get v: key and value can be different tensors.",
    "bug.mha.no_divisibility_check": "MultiHeadAttention accepts a d_model that num_heads does not divide instead of "
    "raising ValueError.",
    "bughint.mha.no_divisibility_check": "In __init__, check that d_model is a multiple of num_heads and raise "
    "ValueError when it is not.",
    "bug.mha.mask_extra_unsqueeze": "the mask gets an extra axis inside MultiHeadAttention, so it no longer lines up "
    "with the [B, H, Lq, Lk] scores.",
    "bughint.mha.mask_extra_unsqueeze": "The masks MultiHeadAttention receives already broadcast over the head axis: "
    "pass them on unchanged.",
    # -- embedding ------------------------------------------------------------------------------------
    "bug.embedding.no_scale": "the embeddings are not multiplied by √d_model.",
    "bughint.embedding.no_scale": "Scale the looked-up vectors by the square root of d_model.",
    "bug.embedding.scale_fixed_512": "the embeddings are multiplied by √512, a fixed number, instead of by √d_model "
    "of the module built.",
    "bughint.embedding.scale_fixed_512": "Scale by the square root of the d_model the module was built with.",
    "bug.embedding.scale_d_model": "the embeddings are multiplied by d_model instead of √d_model.",
    "bughint.embedding.scale_d_model": "The scale factor is the square root of d_model, not d_model itself.",
    "bug.embedding.scale_divided": "the embeddings are divided by √d_model instead of multiplied by it.",
    "bughint.embedding.scale_divided": "Multiply, don't divide: the embeddings are scaled up by √d_model.",
    # -- positional -----------------------------------------------------------------------------------
    "bug.positional.sin_cos_swapped": "sin and cos are swapped: the even columns get cos and the odd columns get sin.",
    "bughint.positional.sin_cos_swapped": "Even columns (0, 2, 4, ...) take the sine, odd columns the cosine.",
    "bug.positional.wrong_exponent": "the frequency exponent is doubled: columns 2i and 2i+1 use 10000^(4i/d_model) "
    "instead of 10000^(2i/d_model).",
    "bughint.positional.wrong_exponent": "If your index already steps by 2 (0, 2, 4, ...), it is 2i itself: divide it "
    "by d_model without doubling it again.",
    "bug.positional.positions_from_one": "positions are counted from 1 instead of 0.",
    "bughint.positional.positions_from_one": "The first position is pos = 0, so row 0 of the table alternates "
    "sin(0) = 0 and cos(0) = 1.",
    "bug.positional.halves_not_interleaved": "the sines fill the first half of the columns and the cosines the second "
    "half, instead of alternating column by column.",
    "bughint.positional.halves_not_interleaved": "Interleave them: sines in the even columns, cosines in the odd ones, "
    "so that each pair (2i, 2i+1) shares one frequency.",
    "bug.positional.table_as_parameter": "the table is stored as an nn.Parameter (even with requires_grad=False) "
    "instead of a registered buffer.",
    "bughint.positional.table_as_parameter": "Keep the table in a buffer: it is saved and moved with the module but is "
    "never a parameter.",
    "bug.positional.table_as_attribute": "the table is a plain tensor attribute, so it does not follow .to(device) or "
    ".to(dtype).",
    "bughint.positional.table_as_attribute": "Register the table as a buffer named pe so that it moves with the "
    "module.",
    "bug.positional.no_dropout": "dropout is never applied to the sum of the input and the position table.",
    "bughint.positional.no_dropout": "Pass x plus the table through the dropout module before returning it.",
    # -- layernorm ------------------------------------------------------------------------------------
    "bug.layernorm.unbiased_variance": "the variance is the unbiased one (divided by D - 1) instead of the biased one "
    "(divided by D).",
    "bughint.layernorm.unbiased_variance": "Compute the population variance over the last dimension; torch's var "
    "divides by D - 1 unless told otherwise.",
    "bug.layernorm.eps_outside_sqrt": "eps is added to the standard deviation instead of to the variance inside the "
    "square root.",
    "bughint.layernorm.eps_outside_sqrt": "Add eps to the variance first, then take the square root.",
    "bug.layernorm.no_eps": "eps is never used, so near-constant inputs divide by (almost) zero.",
    "bughint.layernorm.no_eps": "Add eps to the variance inside the square root to keep the division stable.",
    "bug.layernorm.wrong_axis": "the mean and variance are taken over the first dimension (the batch) instead of the "
    "last.",
    "bughint.layernorm.wrong_axis": "Normalise each vector on its own: reduce over the last dimension and keep it for "
    "broadcasting.",
    "bug.layernorm.no_affine": "the learned weight and bias are never applied after normalising.",
    "bughint.layernorm.no_affine": "After normalising, scale by weight and shift by bias.",
    # -- feedforward ----------------------------------------------------------------------------------
    "bug.feedforward.no_activation": "there is no activation between the two linear maps, so the block is a single "
    "linear map.",
    "bughint.feedforward.no_activation": "Apply the chosen activation (ReLU or GELU) to the output of linear1, before "
    "dropout and linear2.",
    "bug.feedforward.always_relu": 'ReLU is used even when activation="gelu" is asked for.',
    "bughint.feedforward.always_relu": "Choose the activation from the activation argument.",
    "bug.feedforward.activation_twice": "the activation is applied again to the output of linear2, so with ReLU the "
    "block can never output a negative value.",
    "bughint.feedforward.activation_twice": "Apply the activation once, between linear1 and linear2: linear2's "
    "output is the block's output.",
    "bug.feedforward.gelu_tanh": "GELU uses the tanh approximation instead of the exact, erf-based form.",
    "bughint.feedforward.gelu_tanh": "The contract asks for the exact, erf-based GELU, which is PyTorch's default.",
    "bug.feedforward.dropout_always_on": "dropout stays on in eval() mode: functional dropout is called without "
    "training=self.training.",
    "bughint.feedforward.dropout_always_on": "Use the nn.Dropout module, or tie functional dropout to self.training, "
    "so that it switches off in eval().",
    # -- masks ----------------------------------------------------------------------------------------
    "bug.masks.causal_blocks_diagonal": "the causal mask also blocks the diagonal, so a position cannot attend to "
    "itself (and the first position sees nothing).",
    "bughint.masks.causal_blocks_diagonal": "Keep the diagonal: position i may see positions 0 to i, itself included.",
    "bug.masks.causal_shows_future": "the causal mask is upper-triangular: each position sees itself and the future "
    "instead of itself and the past.",
    "bughint.masks.causal_shows_future": "Keep the lower triangle: row i is query i, column j is key j, and j <= i "
    "is allowed.",
    "bug.masks.causal_on_cpu": "causal_mask ignores its device argument and always builds the mask on the CPU.",
    "bughint.masks.causal_on_cpu": "Pass device on to the tensor you create.",
    "bug.masks.padding_inverted": "the padding mask is True at padding tokens and False at real ones, the reverse of "
    "a keep-mask.",
    "bughint.masks.padding_inverted": "A keep-mask marks what may be attended: True where the token is not padding.",
    "bug.masks.padding_against_zero": "the padding mask compares the tokens with 0 instead of with pad_idx, so it is "
    "right only when the padding id is 0.",
    "bughint.masks.padding_against_zero": "Compare the tokens with the pad_idx argument.",
    "bug.masks.padding_on_queries": "the padding mask has shape [B, 1, L, 1], so it blocks query rows instead of key "
    "columns.",
    "bughint.masks.padding_on_queries": "Padding hides keys: put the token axis last, with singleton axes for heads "
    "and queries.",
    "bug.masks.target_without_padding": "target_mask is only the causal mask: padding tokens in the target are not "
    "blocked.",
    "bughint.masks.target_without_padding": "Combine the padding mask of tgt with the causal mask: a key is allowed "
    "only when both allow it.",
    "bug.masks.target_on_cpu": "target_mask builds its mask on the CPU instead of on tgt's device.",
    "bughint.masks.target_on_cpu": "Build every part of the mask on tgt.device.",
    # -- encoder_layer --------------------------------------------------------------------------------
    "bug.encoder_layer.no_attention_residual": "the self-attention sublayer has no residual connection: its input is "
    "not added back.",
    "bughint.encoder_layer.no_attention_residual": "In both the Post-LN and Pre-LN branches, add the sublayer's input "
    "x to the attention output.",
    "bug.encoder_layer.no_ffn_residual": "the feed-forward sublayer has no residual connection: its input is not added "
    "back.",
    "bughint.encoder_layer.no_ffn_residual": "In both the Post-LN and Pre-LN branches, add x back to the feed-forward "
    "output.",
    "bug.encoder_layer.norm_first_ignored": "norm_first is ignored: the layer always runs Post-LN.",
    "bughint.encoder_layer.norm_first_ignored": "Branch on self.norm_first: Pre-LN normalises each sublayer's input "
    "and leaves the residual stream un-normalised.",
    "bug.encoder_layer.mask_ignored": "the mask is not passed to self-attention, so padded keys are attended to.",
    "bughint.encoder_layer.mask_ignored": "Hand the layer's mask on to self_attn.",
    "bug.encoder_layer.prenorm_residual_from_normed": "in Pre-LN the residual adds the attention output to the "
    "normalised input instead of to the original x.",
    "bughint.encoder_layer.prenorm_residual_from_normed": "In Pre-LN only the sublayer sees the normalised tensor; the "
    "residual carries the un-normalised x.",
    "bug.encoder_layer.norms_swapped": "in Post-LN the two norms are swapped: norm2 follows the attention and norm1 "
    "the feed-forward.",
    "bughint.encoder_layer.norms_swapped": "norm1 belongs to the attention sublayer and norm2 to the feed-forward "
    "(weights are matched by name).",
    # -- decoder_layer --------------------------------------------------------------------------------
    "bug.decoder_layer.cross_attends_to_self": "cross-attention attends to the target itself (x) instead of the "
    "encoder's memory, and without memory_mask.",
    "bughint.decoder_layer.cross_attends_to_self": "Cross-attention takes its query from x and its keys and values "
    "from memory, masked with memory_mask.",
    "bug.decoder_layer.cross_uses_target_mask": "cross-attention is masked with tgt_mask instead of memory_mask.",
    "bughint.decoder_layer.cross_uses_target_mask": "Cross-attention's keys are source positions, so it needs the "
    "source-side mask, memory_mask.",
    "bug.decoder_layer.memory_normalised": "in Pre-LN the encoder's memory goes through a LayerNorm before "
    "cross-attention.",
    "bughint.decoder_layer.memory_normalised": "Pre-LN normalises only the query side of cross-attention: use memory "
    "as it comes.",
    "bug.decoder_layer.self_mask_ignored": "tgt_mask is not passed to the masked self-attention, so positions see "
    "later tokens.",
    "bughint.decoder_layer.self_mask_ignored": "Hand tgt_mask on to self_attn: it is what keeps the decoder from "
    "seeing the future.",
    "bug.decoder_layer.no_cross_residual": "the cross-attention sublayer has no residual connection: its input is not "
    "added back.",
    "bughint.decoder_layer.no_cross_residual": "In both the Post-LN and Pre-LN branches, add x back to the "
    "cross-attention output.",
    "bug.decoder_layer.norm_first_ignored": "norm_first is ignored: the decoder layer always runs Post-LN.",
    "bughint.decoder_layer.norm_first_ignored": "Branch on self.norm_first: Pre-LN normalises each sublayer's input "
    "and leaves the residual stream un-normalised.",
    # -- model ----------------------------------------------------------------------------------------
    "bug.model.layers_shared": "the stack repeats one layer object num_layers times, so all its layers share the "
    "same weights.",
    "bughint.model.layers_shared": "Build a fresh layer for each position in the stack (in a loop or a comprehension).",
    "bug.model.no_final_norm": "with Pre-LN (norm_first=True) the final LayerNorm after the last layer is never "
    "applied.",
    "bughint.model.no_final_norm": "Pre-LN leaves the residual stream un-normalised: normalise it once more after the "
    "last layer.",
    "bug.model.final_norm_always": "a final LayerNorm is created and applied in Post-LN too, where only Pre-LN should "
    "have one.",
    "bughint.model.final_norm_always": "Create the stack's final norm only when norm_first is True; Post-LN layers "
    "already end in a norm.",
    "bug.model.no_xavier_init": "the weight matrices keep PyTorch's default initialisation instead of Xavier-uniform.",
    "bughint.model.no_xavier_init": "At the end of Transformer.__init__, give every parameter with more than one "
    "dimension a Xavier-uniform initialisation.",
    "bug.model.returns_probabilities": "forward returns probabilities (a softmax over the vocabulary) instead of the "
    "raw logits.",
    "bughint.model.returns_probabilities": "Return output_proj's output as it is: the loss applies the (log-)softmax "
    "itself.",
    "bug.model.memory_mask_dropped": "Transformer.forward does not pass src_mask on to the decoder, so "
    "cross-attention attends to padded source positions.",
    "bughint.model.memory_mask_dropped": "src_mask is also the decoder's memory_mask: hand it to decode.",
    "bug.model.no_positional_encoding": "the encoder never adds the positional encoding to the embeddings.",
    "bughint.model.no_positional_encoding": "Pass the embeddings through pos_enc before the first layer.",
    "bug.model.src_mask_ignored": "the encoder does not pass src_mask to its layers, so padded source positions are "
    "attended to.",
    "bughint.model.src_mask_ignored": "Hand src_mask to every encoder layer.",
    # -- greedy ---------------------------------------------------------------------------------------
    "bug.greedy.reads_first_position": "the next token is read from the first position's logits instead of the last's.",
    "bughint.greedy.reads_first_position": "The prediction for the next token sits at the last position of the "
    "decoder's output.",
    "bug.greedy.no_padding_after_eos": "rows that already produced EOS keep generating tokens instead of being filled "
    "with pad_idx.",
    "bughint.greedy.no_padding_after_eos": "Remember which rows are finished and write pad_idx into them from then on.",
    "bug.greedy.no_early_stop": "decoding always runs max_len steps, even after every row has produced EOS.",
    "bughint.greedy.no_early_stop": "Leave the loop as soon as every row is finished.",
    "bug.greedy.no_target_mask": "each step calls the decoder without a target mask, so earlier positions attend to "
    "later tokens.",
    "bughint.greedy.no_target_mask": "At every step, build a target_mask for the tokens decoded so far and pass it on.",
    "bug.greedy.one_step_short": "the loop runs max_len - 1 times, so at most max_len - 1 new tokens are generated.",
    "bughint.greedy.one_step_short": "Allow up to max_len new tokens after BOS.",
    "bug.greedy.drops_bos": "the result leaves out the BOS column: it holds only the generated tokens.",
    "bughint.greedy.drops_bos": "Return the whole sequence, BOS in column 0, as the contract says.",
    "bug.greedy.no_source_mask": "the source padding mask is used neither when encoding nor when decoding, so padded "
    "source positions are attended to.",
    "bughint.greedy.no_source_mask": "Build the source's padding mask once and give it to both encode and decode.",
    # -- training -------------------------------------------------------------------------------------
    "bug.training.loss_counts_padding": "padded target positions are counted in the loss (ignore_index is not "
    "pad_idx).",
    "bughint.training.loss_counts_padding": "Tell the cross-entropy which target id to ignore: the padding id.",
    "bug.training.loss_diluted_by_padding": "padded positions add no loss but still count in the mean, so a batch "
    "with more padding gets a smaller loss.",
    "bughint.training.loss_diluted_by_padding": "Divide by the number of targets that are not padding, not by the "
    "number of positions (or let ignore_index take the mean).",
    "bug.training.label_smoothing_ignored": "label_smoothing is accepted but never passed to the cross-entropy.",
    "bughint.training.label_smoothing_ignored": "Forward label_smoothing to the loss function.",
    "bug.training.smoothing_over_wrong_classes": "label smoothing spreads its mass over the V - 1 wrong classes only "
    "(the target keeps 1 - label_smoothing), not over all V classes as F.cross_entropy's label_smoothing does.",
    "bughint.training.smoothing_over_wrong_classes": "Spread label_smoothing over all V classes, the target's "
    "included (label_smoothing / V each, and 1 - label_smoothing more for the target), or pass label_smoothing to "
    "F.cross_entropy.",
    "bug.training.targets_not_shifted": "the targets are not shifted: the model learns to predict tgt[:, :-1], its "
    "own input, instead of the next tokens.",
    "bughint.training.targets_not_shifted": "The decoder reads tokens 0..n-1 and must predict tokens 1..n: the "
    "targets are the input shifted by one.",
    "bug.training.gradients_not_zeroed": "gradients are never zeroed, so they pile up from one step to the next.",
    "bughint.training.gradients_not_zeroed": "Clear the optimizer's gradients before calling backward().",
    "bug.training.clipping_ignored": "clipping does not change the update: the optimizer steps with unclipped gradients. "
    "Usual causes: max_grad_norm is never used, or the gradients are clipped after "
    "optimizer.step() (the next call zeroes them before they are used).",
    "bughint.training.clipping_ignored": "When max_grad_norm is given, clip the total gradient norm between "
    "backward() and the optimizer step.",
    "bug.training.no_causal_mask": "in train_step the decoder's mask has no causal part, so during training each "
    "position sees the tokens it has to predict (no target mask at all, or only the "
    "padding mask).",
    "bughint.training.no_causal_mask": "Build the decoder's mask from the decoder input with target_mask.",
    "bug.training.noam_step_zero": "noam_lr does not treat step 0 as step 1, so step 0 divides by zero.",
    "bughint.training.noam_step_zero": "Raise the step to at least 1 before it enters the formula.",
    "bug.training.noam_no_d_model_factor": "the learning rate leaves out the factor d_model ** -0.5, so it is "
    "√d_model times too large.",
    "bughint.training.noam_no_d_model_factor": "Multiply by d_model ** -0.5 as well as by factor.",
    "bug.training.noam_wrong_warmup_power": "the warm-up term uses warmup_steps ** -0.5 instead of "
    "warmup_steps ** -1.5.",
    "bughint.training.noam_wrong_warmup_power": "Check the exponent of warmup_steps in the warm-up term: the two "
    "branches must meet at step = warmup_steps.",
    "bug.training.returns_tensor": "train_step returns the loss as a tensor instead of a Python float.",
    "bughint.training.returns_tensor": "Turn the scalar loss into a Python number before returning it.",
    # -- param_count ----------------------------------------------------------------------------------
    "bug.param_count.no_biases": "the biases of the attention and feed-forward linear layers are not counted.",
    "bughint.param_count.no_biases": "Every nn.Linear(a, b) has a·b weights plus b biases.",
    "bug.param_count.no_norms": "the LayerNorm parameters are not counted.",
    "bughint.param_count.no_norms": "Each LayerNorm has a weight and a bias of size d_model: 2·d_model parameters.",
    "bug.param_count.decoder_two_norms": "each decoder layer is counted with two LayerNorms instead of three.",
    "bughint.param_count.decoder_two_norms": "A decoder layer has three sublayers, each with a LayerNorm of its own: "
    "3 · 2·d_model parameters.",
    "bug.param_count.no_final_norm": "with norm_first=True, the final LayerNorm of each stack is not counted.",
    "bughint.param_count.no_final_norm": "Pre-LN adds one LayerNorm after the encoder and one after the decoder.",
    "bug.param_count.one_embedding": "only the source embedding is counted; the target embedding is missing.",
    "bughint.param_count.one_embedding": "The encoder and the decoder each have their own embedding table, with "
    "src_vocab_size and tgt_vocab_size rows.",
    "bug.param_count.no_output_bias": "the bias of the output projection is not counted.",
    "bughint.param_count.no_output_bias": "output_proj is an nn.Linear with a bias: count its tgt_vocab_size biases "
    "too.",
    "bug.param_count.decoder_one_attention": "each decoder layer is counted with one attention block instead of two "
    "(the cross-attention is missing).",
    "bughint.param_count.decoder_one_attention": "A decoder layer has self-attention and cross-attention, each with "
    "its own four projections.",
    # -- pattern hints (no catalogued bug matched) ----------------------------------------------------
    "bug.hint.constant_factor": "your output is the expected one times a constant factor of about {factor}{note}.",
    "bug.hint.sqrt_factor": "your output is the expected one times about {factor}, that is √{d} or 1/√{d}: a scaling "
    "by √{d} is missing, doubled or inverted.",
    "bug.hint.transposed": "your output is the expected one transposed in its last two dimensions.",
    "bug.hint.rows_not_normalised": "the rows of the attention weights do not sum to 1: the softmax runs over the "
    "wrong dimension, or the weights are changed after it.",
    "bug.hint.only_last_position": "only the last position is right: earlier positions see later ones (a causal mask "
    "is missing or does not reach this module).",
    "bug.hint.first_positions_only": "the first {n} position(s) are right and the later ones are wrong.",
    "bug.hint.some_heads": "heads {heads} are right and the others are wrong: the heads are split or merged in the "
    "wrong order.",
    "bug.hint.batch_row": "only batch row(s) {rows} are wrong.",
    "bug.hint.sign": "your output is the expected one with the opposite sign.",
    "bug.hint.zero": "your output is all zeros.",
}
