"""English messages for the decoder-only LM's known bugs (``assignments/decoder_lm/bugs.py``).

``bug.<id>`` names the mistake (what is wrong, and the symptom it causes) and is read after "Looks like:";
``bughint.<id>`` says where to look and what to change, without giving the code.
"""

MESSAGES = {
    # -- rmsnorm --------------------------------------------------------------------------------------------------
    "bug.rmsnorm.mean_subtracted": "the mean is subtracted before normalising, as in LayerNorm; RMSNorm only "
    "divides by the root mean square, so outputs differ for every input whose mean "
    "is not 0.",
    "bughint.rmsnorm.mean_subtracted": "RMSNorm has no centring step: divide x itself (not x minus its mean) by "
    "the root of the mean of its squares.",
    "bug.rmsnorm.eps_outside_sqrt": "eps is added to the root mean square after the square root instead of to "
    "the mean square inside it; small inputs come out scaled wrongly.",
    "bughint.rmsnorm.eps_outside_sqrt": "Add eps to the mean of the squares first, then take the (reciprocal) "
    "square root.",
    "bug.rmsnorm.sum_not_mean": "the squares are summed over the last dimension instead of averaged, so every "
    "output is about √D times too small.",
    "bughint.rmsnorm.sum_not_mean": "The statistic is the mean of x² over the last dimension, not the sum (a sum "
    "gives the L2 norm, not the root mean square).",
    "bug.rmsnorm.no_sqrt": "x is divided by the mean square instead of its square root, so the output's scale "
    "still depends on the input's (scaling x by c divides the output by c).",
    "bughint.rmsnorm.no_sqrt": "Divide by the square root of (mean of x² + eps): the root mean square.",
    "bug.rmsnorm.no_weight": "the learned per-feature weight is never applied to the normalised vector.",
    "bughint.rmsnorm.no_weight": "After normalising, multiply by the module's weight parameter (one value per "
    "feature).",
    # -- rope -----------------------------------------------------------------------------------------------------
    "bug.rope.interleaved": "RoPE pairs neighbouring coordinates (2i, 2i + 1), the paper's interleaved layout, "
    "instead of coordinate i with i + Dh/2 (half-split) as the contract asks; norms and "
    "relative positions still work, but the coordinates are rotated in a different order.",
    "bughint.rope.interleaved": "Split the head into its two halves: coordinate i turns together with coordinate "
    "i + Dh/2, and both use frequency θ_i.",
    "bug.rope.frequencies_i_not_2i": "the frequencies are θ_i = base^(-i/Dh) instead of base^(-2i/Dh), so the "
    "angles fall off half as fast across the head.",
    "bughint.rope.frequencies_i_not_2i": "The exponent uses the even numbers 0, 2, 4, … (2i) over Dh, not 0, 1, 2, …",
    "bug.rope.offset_ignored": "the offset is ignored: positions always start at 0, so tokens decoded after a "
    "cache are rotated as if they came first.",
    "bughint.rope.offset_ignored": "Row l of the input is at position offset + l: start the positions at offset.",
    "bug.rope.rotates_backwards": "each pair is rotated by −pθ instead of +pθ (the sign of the sine term is flipped).",
    "bughint.rope.rotates_backwards": "Check the rotation formula: the first half gets x1·cos − x2·sin, the "
    "second half x1·sin + x2·cos.",
    # -- swiglu ---------------------------------------------------------------------------------------------------
    "bug.swiglu.gate_up_swapped": "SiLU is applied to up_proj(x) and the product uses gate_proj(x): the gate and "
    "up projections are swapped.",
    "bughint.swiglu.gate_up_swapped": "The activation goes on the gate projection only; the up projection enters "
    "the product as it is.",
    "bug.swiglu.sigmoid_not_silu": "the gate goes through a sigmoid (GLU) instead of SiLU (a · sigmoid(a)).",
    "bughint.swiglu.sigmoid_not_silu": "SwiGLU uses the Swish/SiLU activation on the gate: the input times its "
    "sigmoid, not the sigmoid alone.",
    "bug.swiglu.silu_after_product": "SiLU is applied to the product of the two projections instead of to the "
    "gate projection before the product.",
    "bughint.swiglu.silu_after_product": "Activate the gate first, then multiply element-wise by the up "
    "projection; the product itself is not activated.",
    # -- gqa ------------------------------------------------------------------------------------------------------
    "bug.gqa.repeat_not_interleave": "the key/value heads are tiled with repeat, so query head h reads key/value "
    "head h mod Hkv instead of h // (H / Hkv): wrong as soon as 1 < Hkv < H.",
    "bughint.gqa.repeat_not_interleave": "Consecutive query heads share a key/value head: each key/value head must "
    "be repeated in place (the grouping of repeat_interleave), not the whole "
    "set tiled.",
    "bug.gqa.no_scale": "the scores q·kᵀ are not divided by √Dh at all, so the softmax is far too peaked.",
    "bughint.gqa.no_scale": "Divide the scores by the square root of the head size before the softmax.",
    "bug.gqa.scale_by_model_dim": "the scores are divided by √(H·Dh) (the model width) instead of √Dh (the head size).",
    "bughint.gqa.scale_by_model_dim": "The scale belongs to one head: use the square root of the last dimension of q.",
    "bug.gqa.causal_top_left": "the causal mask is aligned to the top-left corner, so with fewer queries than "
    "keys (decoding with a cache) the new tokens cannot see the keys of earlier "
    "positions.",
    "bughint.gqa.causal_top_left": "Query i sits at position Lk − Lq + i: shift the lower triangle by Lk − Lq so "
    "that the last query sees every key.",
    "bug.gqa.diagonal_blocked": "the causal mask also blocks each query's own position: every query misses "
    "itself, and without a cache the first query sees no key at all (its row becomes "
    "NaN).",
    "bughint.gqa.diagonal_blocked": "A query may attend to its own position: keep the diagonal of the (shifted) "
    "lower triangle.",
    "bug.gqa.fill_zero": "blocked scores are set to 0 instead of −inf, so future keys still get attention weight.",
    "bughint.gqa.fill_zero": "Fill the blocked scores with −inf before the softmax, so that their weights come "
    "out exactly 0.",
    "bug.gqa.softmax_over_queries": "the softmax runs over the queries (dim −2) instead of the keys, so a query's "
    "weights do not sum to 1.",
    "bughint.gqa.softmax_over_queries": "Each query's weights over the keys must sum to 1: normalise along the "
    "last dimension.",
    # -- attention ------------------------------------------------------------------------------------------------
    "bug.attention.positions_restart": "with a cache, the new tokens are rotated from position 0 instead of from "
    "the cache's length, so cached decoding disagrees with a full forward.",
    "bughint.attention.positions_restart": "Read the cache's length before updating it and pass it to RoPE as the "
    "offset for both q and k.",
    "bug.attention.keys_cached_before_rope": "the keys are put in the cache before RoPE and the whole cache is "
    "rotated afterwards from the current offset, so earlier keys get "
    "the wrong positions once the cache holds something.",
    "bughint.attention.keys_cached_before_rope": "Rotate the new keys at their own positions first, then append "
    "them: the cache stores keys after RoPE and never rotates them "
    "again.",
    "bug.attention.v_rotated": "the values are rotated with RoPE too; only queries and keys carry positions.",
    "bughint.attention.v_rotated": "Apply the rotation to q and k only; v goes from its projection straight to "
    "the attention.",
    "bug.attention.split_without_transpose": "the heads are split by viewing straight to [B, heads, L, Dh], which "
    "mixes positions and heads.",
    "bughint.attention.split_without_transpose": "View as [B, L, heads, Dh] first, then swap the sequence and "
    "head axes.",
    "bug.attention.merge_without_transpose": "the heads are merged by reshaping [B, H, L, Dh] straight to "
    "[B, L, H·Dh], which mixes positions and heads.",
    "bughint.attention.merge_without_transpose": "Move the head axis back behind the sequence axis before "
    "flattening the heads.",
    "bug.attention.kv_heads_not_checked": "CausalSelfAttention accepts a num_kv_heads that does not divide "
    "num_heads instead of raising ValueError.",
    "bughint.attention.kv_heads_not_checked": "Every key/value head must serve the same number of query heads: "
    "raise ValueError when num_heads is not a multiple of num_kv_heads.",
    # -- kv_cache -------------------------------------------------------------------------------------------------
    "bug.kv_cache.wrong_axis": "new keys and values are concatenated along dim 1 (the heads) instead of dim 2 "
    "(the sequence), so the cache never gets longer.",
    "bughint.kv_cache.wrong_axis": "The cache is [B, Hkv, T, Dh]: append along the sequence axis, dim 2.",
    "bug.kv_cache.newest_first": "new keys and values are put in front of the cached ones instead of after them, "
    "so the cache is not ordered oldest first.",
    "bughint.kv_cache.newest_first": "Append: the cached tensors come first in the concatenation, the new ones after.",
    "bug.kv_cache.overwritten": "each update replaces the cache with the new keys and values instead of "
    "appending them, so earlier positions are forgotten.",
    "bughint.kv_cache.overwritten": "Once the cache holds something, concatenate the new keys and values to what "
    "it holds and keep the result.",
    "bug.kv_cache.not_kept": "update returns the concatenation but does not store it, so the cache stays at its "
    "first contents and later steps lose the tokens in between.",
    "bughint.kv_cache.not_kept": "Assign the concatenated keys and values back to the cache's attributes before "
    "returning them.",
    "bug.kv_cache.length_is_len": "length is len(keys), the batch size, instead of the number of positions (dim 2).",
    "bughint.kv_cache.length_is_len": "len() of a tensor is the size of its first dimension; the length of the "
    "cache is the size of the sequence axis.",
    # -- block ----------------------------------------------------------------------------------------------------
    "bug.block.post_norm": "the block is post-norm (the norm is applied after adding the residual) instead of "
    "pre-norm.",
    "bughint.block.post_norm": "Normalise only the input of each branch and add the branch's output to the "
    "un-normalised residual stream.",
    "bug.block.residual_from_normed": "the residual adds the normalised input instead of the original one, so "
    "the residual stream is re-normalised at every branch.",
    "bughint.block.residual_from_normed": "Keep the un-normalised x for the skip connection: only the branch "
    "receives the normalised copy.",
    "bug.block.one_norm_for_both": "the feed-forward branch is normalised with attn_norm instead of its own ffn_norm.",
    "bughint.block.one_norm_for_both": "Each branch has its own RMSNorm with its own weight: use ffn_norm before "
    "the feed-forward.",
    "bug.block.ffn_reads_block_input": "the feed-forward branch reads the block's input x instead of h, the "
    "stream after the attention branch (a parallel block, not the sequential "
    "one of the contract).",
    "bughint.block.ffn_reads_block_input": "The second branch comes after the first: normalise h (x plus the "
    "attention output), not x.",
    # -- model ----------------------------------------------------------------------------------------------------
    "bug.model.untied_head": "the output head has its own weight instead of sharing the embedding's, so the "
    "model has V·D parameters too many.",
    "bughint.model.untied_head": "After initialising, make lm_head use the very same parameter as the "
    "embedding (assign it, do not copy it).",
    "bug.model.embedding_scaled": "the embeddings are multiplied by √D; this model feeds them in unscaled.",
    "bughint.model.embedding_scaled": "Unlike the first assignment, do not scale the token embeddings: RoPE, not "
    "an added table, carries the positions.",
    "bug.model.final_norm_missing": "the final RMSNorm is not applied before the output head.",
    "bughint.model.final_norm_missing": "With pre-norm blocks the residual stream is never normalised inside them: "
    "normalise it once after the last block, before the head.",
    "bug.model.caches_not_passed": "the caches are never handed to the layers, so with caches the new tokens "
    "attend only to themselves, from position 0.",
    "bughint.model.caches_not_passed": "Give layer i its own cache, caches[i], in the forward.",
    "bug.model.new_cache_aliased": "new_cache returns the same KVCache object once per layer, so all layers "
    "append to and read one shared cache.",
    "bughint.model.new_cache_aliased": "Multiplying a list repeats the same object: build a new KVCache for each "
    "layer.",
    # -- top_k ----------------------------------------------------------------------------------------------------
    "bug.top_k.strict": "only logits strictly greater than the k-th largest are kept, so the k-th itself (and "
    "its ties) is dropped and at most k − 1 tokens survive.",
    "bughint.top_k.strict": "Keep every logit at least as large as the k-th largest: ties at the boundary stay.",
    "bug.top_k.fill_zero": "filtered logits are set to 0 instead of −inf, so after the softmax they still have a "
    "chance of being drawn.",
    "bughint.top_k.fill_zero": "A logit of 0 is an ordinary score, not probability 0: set filtered logits to −inf.",
    "bug.top_k.k_not_clamped": "a k larger than the vocabulary raises an error instead of keeping every token.",
    "bughint.top_k.k_not_clamped": "torch.topk refuses k > V: use at most the row's length.",
    "bug.top_k.in_place": "the filter writes −inf into the caller's logits tensor (in place) instead of "
    "returning a new one.",
    "bughint.top_k.in_place": "Never modify the input: use the out-of-place version of the masking operation.",
    # -- top_p ----------------------------------------------------------------------------------------------------
    "bug.top_p.one_too_early": "the cut uses the cumulative probability including each token instead of the mass "
    "before it, so the token that crosses p is dropped.",
    "bughint.top_p.one_too_early": "A token stays if the tokens more probable than it have not yet reached p: "
    "compare the mass before the token, that is, the cumulative sum minus itself.",
    "bug.top_p.sorted_ascending": "the top-p filter keeps every token. Usual causes: the probabilities are sorted in "
    "ascending order (the cumulative mass starts from the least likely tokens), or p is "
    "never used.",
    "bughint.top_p.sorted_ascending": "The nucleus is built from the most probable tokens: sort in descending order.",
    "bug.top_p.not_sorted": "the cumulative probability is taken in vocabulary order, without sorting, so "
    "which tokens are kept depends on their ids.",
    "bughint.top_p.not_sorted": "Sort each row's probabilities from largest to smallest before accumulating.",
    "bug.top_p.no_softmax": "the cumulative sum runs over the raw logits instead of the probabilities.",
    "bughint.top_p.no_softmax": "p is a probability: turn each row into probabilities with a softmax first.",
    # -- sample ---------------------------------------------------------------------------------------------------
    "bug.sample.temperature_after_softmax": "the temperature has no effect on the draw. Usual causes: the probabilities are divided "
    "by the temperature after the softmax (the draw renormalises it away), or the "
    "temperature is never applied.",
    "bughint.sample.temperature_after_softmax": "Divide the logits by the temperature before any filter and "
    "before the softmax.",
    "bug.sample.temperature_after_filters": "the logits are divided by the temperature after top-k and top-p, so "
    "top-p sees the probabilities of temperature 1.",
    "bughint.sample.temperature_after_filters": "The order is temperature, then top-k, then top-p: the nucleus "
    "depends on the temperature.",
    "bug.sample.filters_swapped": "top-p is applied before top-k instead of after it, so the nucleus is computed "
    "on probabilities that still include the tokens top-k removes.",
    "bughint.sample.filters_swapped": "Apply top-k first, then top-p on what is left.",
    "bug.sample.no_greedy_branch": "temperature 0 is not handled as greedy decoding: the logits are divided by 0 "
    "and the draw fails.",
    "bughint.sample.no_greedy_branch": "Before dividing, return the argmax of each row when the temperature is "
    "0 (no filters, no draw).",
    # -- generate -------------------------------------------------------------------------------------------------
    "bug.generate.cache_unused": "every step runs the model on the whole sequence again without the cache: the "
    "text is right but each step's work grows with the prefix.",
    "bughint.generate.cache_unused": "Create the caches once, pass them to every forward, and after the prompt "
    "feed only the newest token.",
    "bug.generate.whole_sequence_with_cache": "every step feeds the whole sequence together with the cache, so the "
    "cache fills with repeated tokens at the wrong positions.",
    "bughint.generate.whole_sequence_with_cache": "The cache already holds the prefix: after the prompt, feed only "
    "the token sampled last.",
    "bug.generate.reads_first_position": "the next token is sampled from the logits of the first position instead "
    "of the last.",
    "bughint.generate.reads_first_position": "The prediction for the next token sits at the last position of the "
    "output.",
    "bug.generate.cache_reset_each_step": "new empty caches are made at every step, so each new token sees only "
    "itself, at position 0.",
    "bughint.generate.cache_reset_each_step": "Create the caches once, before the loop, and keep using them.",
    "bug.generate.leaves_eval_mode": "generate switches the model to eval mode and leaves it there; the model's "
    "training flag must be left as it was.",
    "bughint.generate.leaves_eval_mode": "This model has no dropout, so there is no need to change its mode; if "
    "you do, restore it before returning.",
    # -- decay_groups ---------------------------------------------------------------------------------------------
    "bug.decay_groups.decay_on_norms": "every parameter, RMSNorm weights included, is in the decayed group and the no-decay "
    "group is empty. Usual causes: every parameter is decayed; parameters are routed by "
    "'\"weight\" in name' (in this model the norms' parameters are named weight too); or by "
    "p.dim() >= 1 instead of p.dim() >= 2.",
    "bughint.decay_groups.decay_on_norms": "Only parameters with 2 or more dimensions are decayed; norm weights "
    "and biases (1 dimension) go to the group with weight_decay 0.",
    "bug.decay_groups.inverted": "the groups are inverted: the 1-dimensional parameters (norm weights) are "
    "decayed and the matrices are not.",
    "bughint.decay_groups.inverted": "Decay the matrices (2 or more dimensions), not the vectors.",
    "bug.decay_groups.shared_listed_twice": "parameters are collected module by module, so the tied "
    "embedding/head weight is listed twice.",
    "bughint.decay_groups.shared_listed_twice": "Collect from the model's named_parameters(), which lists a "
    "shared tensor once.",
    "bug.decay_groups.frozen_included": "parameters with requires_grad=False are put in the groups too.",
    "bughint.decay_groups.frozen_included": "Leave out the parameters that do not require gradients.",
    # -- adamw ----------------------------------------------------------------------------------------------------
    "bug.adamw.l2_not_decoupled": "the weight decay is added to the gradient (Adam's L2 penalty), so Adam's "
    "per-coordinate scaling also rescales the decay; AdamW shrinks the weights "
    "directly.",
    "bughint.adamw.l2_not_decoupled": "Multiply the parameter by (1 − lr·λ) on its own, and keep the moments "
    "computed from the plain gradient.",
    "bug.adamw.no_decay": "no weight decay is applied at all (this is Adam, not AdamW).",
    "bughint.adamw.no_decay": "Before the Adam step, shrink each parameter by lr·λ times itself, with λ read "
    "from its group.",
    "bug.adamw.decay_without_lr": "the decay shrinks θ by λ·θ instead of lr·λ·θ: the learning rate is missing "
    "from the decay.",
    "bughint.adamw.decay_without_lr": "In PyTorch's AdamW the decay is scaled by the learning rate too.",
    "bug.adamw.no_bias_correction": "the moments are used without bias correction, so the first steps are far "
    "too small.",
    "bughint.adamw.no_bias_correction": "Divide m by (1 − β1^t) and v by (1 − β2^t), with t the parameter's own "
    "step count, starting at 1.",
    "bug.adamw.eps_inside_sqrt": "eps is added to v̂ inside the square root instead of to √v̂, so small "
    "gradients take much smaller steps.",
    "bughint.adamw.eps_inside_sqrt": "Take the square root of the corrected second moment first, then add eps.",
    "bug.adamw.lr_from_defaults": "the learning rate is read from the optimizer's defaults instead of each "
    "parameter group, so a group's own lr and a schedule are ignored.",
    "bughint.adamw.lr_from_defaults": "Read lr (and the other settings) from the group being updated, at every step.",
    # -- schedule -------------------------------------------------------------------------------------------------
    "bug.schedule.warmup_from_zero": "warm-up starts at 0 (max_lr·step/warmup), so step 0 does not learn at all.",
    "bughint.schedule.warmup_from_zero": "Use step + 1 in the warm-up, so that step 0 already has a non-zero "
    "rate and the last warm-up step reaches max_lr.",
    "bug.schedule.warmup_overshoots": "the warm-up also covers step warmup_steps, which then gets more than max_lr.",
    "bughint.schedule.warmup_overshoots": "Warm-up is the steps before warmup_steps; at warmup_steps the cosine "
    "starts, from max_lr.",
    "bug.schedule.progress_over_total": "the cosine's progress is divided by total_steps instead of "
    "(total_steps − warmup_steps), so the rate has not reached min_lr at "
    "total_steps and then jumps down to it.",
    "bughint.schedule.progress_over_total": "The cosine part lasts total_steps − warmup_steps steps: its "
    "progress must go from 0 at the end of warm-up to 1 at total_steps.",
    "bug.schedule.min_lr_ignored": "the cosine decays towards 0 instead of towards min_lr.",
    "bughint.schedule.min_lr_ignored": "The cosine moves between max_lr and min_lr: start from min_lr and add "
    "half the difference times (1 + cos).",
    "bug.schedule.cosine_continues": "after total_steps the cosine keeps going and the rate rises again instead "
    "of staying at min_lr.",
    "bughint.schedule.cosine_continues": "Past total_steps, return min_lr.",
    # -- clip -----------------------------------------------------------------------------------------------------
    "bug.clip.no_eps": "the clipping factor is max_norm / total without the 1e-6, so it differs from PyTorch's "
    "whenever the total norm is small (not far above 1e-6).",
    "bughint.clip.no_eps": "Add 1e-6 to the total norm before dividing, as torch.nn.utils.clip_grad_norm_ does.",
    "bug.clip.scales_up": "gradients are always rescaled to max_norm, also when their norm is already smaller "
    "(small gradients are blown up).",
    "bughint.clip.scales_up": "The factor is min(1, max_norm / (total + 1e-6)): clipping only ever shrinks.",
    "bug.clip.per_parameter": "each gradient is clipped by its own norm instead of all gradients by their joint "
    "norm, which changes the direction of the update.",
    "bughint.clip.per_parameter": "Compute one norm over all gradients together and scale every gradient by the "
    "same factor.",
    "bug.clip.sum_of_norms": "the total norm is the sum of the gradients' norms instead of the L2 norm of all "
    "of them together.",
    "bughint.clip.sum_of_norms": "The joint norm is the square root of the sum of every squared entry: combine "
    "the per-tensor norms as a vector norm, not a sum.",
    "bug.clip.returns_clipped_norm": "the returned norm is measured after clipping instead of before.",
    "bughint.clip.returns_clipped_norm": "Return the total norm computed before the gradients were scaled.",
    # -- loss -----------------------------------------------------------------------------------------------------
    "bug.loss.not_shifted": "the targets are not shifted: the logits at position t are scored against token t "
    "itself instead of token t + 1.",
    "bughint.loss.not_shifted": "Drop the last position of the logits and the first token of the targets, so "
    "each position predicts the next token.",
    "bug.loss.shifted_wrong_way": "the shift goes the wrong way: the logits at position t + 1 are scored against "
    "token t (predicting the past).",
    "bughint.loss.shifted_wrong_way": "Keep positions 0 … L−2 of the logits and tokens 1 … L−1 as targets.",
    "bug.loss.pad_not_ignored": "padding targets are not ignored: they add loss and count in the mean.",
    "bughint.loss.pad_not_ignored": "Pass pad_id as the ignore index of the cross-entropy (when it is given).",
    "bug.loss.pad_dilutes_mean": "padding targets add no loss but still count in the mean, so padded batches get "
    "a smaller loss.",
    "bughint.loss.pad_dilutes_mean": "Divide by the number of targets that count, not by the number of positions.",
    "bug.loss.mean_per_row": "the loss is averaged per row and then over rows, so a token of a short (padded) "
    "row weighs more than a token of a long one.",
    "bughint.loss.mean_per_row": "Take one mean over every counted token of the batch.",
    # -- train_step -----------------------------------------------------------------------------------------------
    "bug.train_step.no_zero_grad": "the gradients are never zeroed, so each step adds its gradients to those of "
    "all earlier steps.",
    "bughint.train_step.no_zero_grad": "Zero the optimizer's gradients at the start of every step, before backward().",
    "bug.train_step.zero_grad_after_backward": "the gradients are zeroed after backward() instead of before, so "
    "the optimizer never sees them and the weights do not learn.",
    "bughint.train_step.zero_grad_after_backward": "Zero the gradients first, then compute the loss and call "
    "backward(), then step.",
    "bug.train_step.clip_ignored": "clipping does not change the update: the optimizer steps with unclipped gradients. "
    "Usual causes: max_grad_norm is never used, or the gradients are clipped after "
    "optimizer.step() (the next call zeroes them before they are used).",
    "bughint.train_step.clip_ignored": "When max_grad_norm is given, clip the gradients after backward() and "
    "before the optimizer's step.",
    "bug.train_step.lr_not_set": "the lr argument is ignored, so a schedule's value never reaches the optimizer.",
    "bughint.train_step.lr_not_set": "When lr is given, set it in every parameter group before the step.",
    "bug.train_step.returns_tensor": "the loss is returned as a tensor instead of a Python float.",
    "bughint.train_step.returns_tensor": "Return the loss as a plain number (it also releases the graph).",
    # -- param_count ----------------------------------------------------------------------------------------------
    "bug.param_count.head_counted_twice": "the tied output head is counted as a second V·D matrix.",
    "bughint.param_count.head_counted_twice": "The head shares the embedding's weight: count V·D once.",
    "bug.param_count.final_norm_missing": "the final RMSNorm after the last block (D parameters) is not counted.",
    "bughint.param_count.final_norm_missing": "Add the weight of the model's last norm.",
    "bug.param_count.block_norms_missing": "the two RMSNorms of each block (2·D parameters per layer) are not counted.",
    "bughint.param_count.block_norms_missing": "Each block has two norms with a D-sized weight each.",
    "bug.param_count.kv_heads_ignored": "the key and value projections are counted as D×D each, ignoring that "
    "they have only num_kv_heads heads.",
    "bughint.param_count.kv_heads_ignored": "k_proj and v_proj map D to num_kv_heads·Dh, not to D.",
    "bug.param_count.ffn_two_matrices": "the feed-forward is counted with two matrices instead of SwiGLU's three.",
    "bughint.param_count.ffn_two_matrices": "SwiGLU has gate, up and down projections, D·F parameters each.",
}
