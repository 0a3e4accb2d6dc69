"""The Transformer assignment's practice and quiz sentences (English): drill titles, hints, topics, questions."""

from grader.author import quiz_messages

_TOPICS = {
    "attention": "attention",
    "positions": "positions",
    "norm": "norm & residuals",
    "masks": "masks",
    "training": "training",
    "decoding": "decoding",
    "sizes": "sizes & cost",
}

_TITLES = {
    "sdpa": "Scaled dot-product attention",
    "mha": "Multi-head attention",
    "embedding": "Token embedding",
    "positional": "Sinusoidal positional encoding",
    "layernorm": "Layer normalisation",
    "feedforward": "Position-wise feed-forward",
    "masks": "Padding, causal and target masks",
    "encoder_layer": "Encoder layer",
    "decoder_layer": "Decoder layer",
    "model": "Encoder, decoder and the whole Transformer",
    "greedy": "Greedy decoding",
    "training": "Loss, Noam schedule and one training step",
    "param_count": "Parameter count from the formula",
    "attention20": "Attention, scaled and multi-head",
    "encoder30": "The encoder's building blocks",
    "decoder30": "Masks, decoder layer and decoding",
    "classic45": "The classic interview round",
    "train30": "Training loop and model size",
}

# Level 1: how the shapes flow. Level 2: the operation everything hinges on. Never the code.
_HINTS = {
    "sdpa": (
        "q [..., Lq, Dk] times kᵀ [..., Dk, Lk] gives scores [..., Lq, Lk]: one score per (query, key) pair. "
        "The weights keep that shape; weights [..., Lq, Lk] times value [..., Lk, Dv] gives [..., Lq, Dv].",
        "Scale the scores by 1/√Dk with Dk = query.size(-1). Blocked positions get a very negative score "
        "(masked_fill where the keep-mask is False) before a softmax over the last axis; the dropout module, "
        "when given, acts on the weights, and those same weights are returned.",
    ),
    "mha": (
        "[B, L, D] → project → [B, L, D] → view [B, L, H, Dh] → transpose → [B, H, L, Dh]; attention per head "
        "gives [B, H, Lq, Dh] → transpose back → [B, Lq, H, Dh] → merge → [B, Lq, D] → output projection.",
        "The heads axis has to sit next to the batch axis before attention, so the last two axes are (length, "
        "Dh): a view alone lands the numbers in the wrong places, the transpose is what makes it right. After a "
        "transpose the memory is no longer contiguous, so merge with reshape or contiguous().view. Reuse the "
        "sdpa function; the 4-D mask already broadcasts over heads.",
    ),
    "embedding": (
        "tokens [B, L] (long) → table lookup → [B, L, D]. The table has one row of D numbers per token id.",
        "Multiply the looked-up vectors by √D (the square root, not D itself), so that they are not dwarfed by "
        "the positional table that gets added next.",
    ),
    "positional": (
        "Build a table [max_len, D] once: positions [max_len, 1] against frequencies [D/2] give angles "
        "[max_len, D/2]; store it as [1, max_len, D]. In forward, x [B, L, D] + table[:, :L] → [B, L, D].",
        "Column pair (2i, 2i+1) shares the frequency 1/10000^(2i/D): sin in the even column, cos in the odd one, "
        "positions counted from 0. Keep the table with register_buffer, so that it follows .to() and is never "
        "trained; apply dropout to the sum.",
    ),
    "layernorm": (
        "x [..., D] → mean and variance over the last axis, each [..., 1] (keep the dimension) → normalised "
        "[..., D] → times weight [D] plus bias [D].",
        "The variance is the biased one (mean of squared deviations, divide by D); eps goes inside the square "
        "root. weight starts at ones and bias at zeros, both nn.Parameter.",
    ),
    "feedforward": (
        "[..., D] → linear1 → [..., F] → activation → dropout → linear2 → [..., D]. Every position is "
        "transformed on its own, with the same weights.",
        "The non-linearity between the two linear maps is the whole point: without it the two maps collapse into "
        "one. Pick ReLU or the exact GELU from the activation argument; dropout sits after the activation.",
    ),
    "masks": (
        "padding: tokens [B, L] → compare → [B, L] → add two singleton axes → [B, 1, 1, L] (keys on the last "
        "axis). causal: [L, L] → [1, 1, L, L]. target: [B, 1, 1, L] & [1, 1, L, L] broadcasts to [B, 1, L, L].",
        "Keep-masks are True where attention is allowed: real tokens for padding, j <= i (the lower triangle, "
        "diagonal included) for causal. Create the causal mask on the device you are given, and in target_mask "
        "on tgt.device.",
    ),
    "encoder_layer": (
        "x [B, L, D] goes through two sub-layers, self-attention then feed-forward, and every step keeps "
        "[B, L, D]; the mask passes straight to self-attention.",
        "Each sub-layer is wrapped as residual + LayerNorm: Post-LN normalises after adding the input back, Pre-LN "
        "normalises the sub-layer's input and adds the raw input back. Query, key and value are all the same "
        "tensor; dropout goes on the sub-layer output before the addition.",
    ),
    "decoder_layer": (
        "x [B, Lt, D] → masked self-attention → [B, Lt, D] → cross-attention over memory [B, Ls, D] → "
        "[B, Lt, D] → feed-forward → [B, Lt, D]. Cross-attention weights are [B, H, Lt, Ls].",
        "Self-attention uses tgt_mask; cross-attention takes its query from x and its key and value from memory, "
        "with memory_mask. Three residual + norm wrappers (norm1, norm2, norm3); in Pre-LN only the query side "
        "is normalised, never memory.",
    ),
    "model": (
        "src [B, Ls] → embed → + positions → N encoder layers → memory [B, Ls, D]; tgt [B, Lt] → embed → + "
        "positions → N decoder layers (with memory) → [B, Lt, D] → output projection → logits [B, Lt, V_tgt].",
        "Build a new layer object for each position of the stack (a list multiplied by N shares one layer). The "
        "final LayerNorm exists only when norm_first. The source mask serves twice: encoder self-attention and "
        "the decoder's memory mask. Finish with Xavier-uniform on every parameter of more than one dimension.",
    ),
    "greedy": (
        "ys starts as [B, 1] of BOS; each step decodes ys → [B, t, D], keeps the last position [B, D] → logits "
        "[B, V] → argmax [B] → appended as a column: [B, t + 1].",
        "Encode the source once, outside the loop. Each step needs a target mask for the current ys. Track which "
        "rows have produced EOS (a bool [B]); later tokens of finished rows become padding, and the loop stops "
        "when all rows are finished or after max_len new tokens.",
    ),
    "training": (
        "tgt [B, Lt] → decoder input tgt[:, :-1] and targets tgt[:, 1:], both [B, Lt - 1]; logits "
        "[B, Lt - 1, V] → flatten to [B·(Lt - 1), V] against targets [B·(Lt - 1)] for the loss.",
        "The loss ignores pad targets (ignore_index) and averages over real tokens only. The schedule takes the "
        "smaller of two terms, step^-0.5 and step·warmup^-1.5, with step 0 counted as 1. A step: zero the "
        "gradients, backward, clip when asked, optimizer step, return the loss as a Python float.",
    ),
    "param_count": (
        "Count per piece: two embedding tables, N encoder layers, N decoder layers, optional final norms, and "
        "the output projection. A Linear(a, b) holds a·b weights plus b biases.",
        "Attention holds four D×D projections with biases; the feed-forward holds D×F + F + F×D + D; every "
        "LayerNorm holds 2·D. Encoder layers have one attention and two norms, decoder layers two attentions and "
        "three norms. The number of heads changes nothing.",
    ),
}

# Choice questions: (question, (a, b, c, d), explanation). Numeric: (question, explanation); the explanation
# may use {answer} and the question's values.
_QUIZ = {
    "scale_why": (
        "Why are the attention scores divided by √d_k?",
        (
            "To make each row of attention weights sum to one, so the output is a weighted average of the values",
            "To keep the QKᵀ product cheap: smaller numbers need fewer bits, so the matrix multiply runs faster",
            "Dot products of d_k terms grow with d_k; big scores saturate the softmax and its gradients vanish",
            "Because d_k is the number of heads, and the scores of all heads are added up before the softmax",
        ),
        "With unit-variance entries, q·k sums d_k products, so its standard deviation is about √d_k. Dividing "
        "brings the scores back near unit scale, where the softmax is not almost one-hot and still passes "
        "gradients. The softmax, not the scale, makes rows sum to one.",
    ),
    "softmax_axis": (
        "The scores have shape [B, H, Lq, Lk]. Along which axis does the softmax run?",
        (
            "The query axis (-2): each key spreads its attention over the queries",
            "The key axis (-1): each query's weights over the keys sum to one",
            "The head axis (1): the heads compete for each query-key pair",
            "Over the last two axes at once, so each head's scores sum to one",
        ),
        "Every query distributes one unit of attention over the keys, so the normalisation is over keys, the "
        "last axis. Normalising over queries (-2) is a classic bug: rows no longer sum to one.",
    ),
    "mask_neg_inf": (
        "Why are blocked scores filled with -inf (or a very negative number) rather than 0?",
        (
            "exp(-inf) = 0 gives a blocked key no weight; a score of 0 still gets exp(0) = 1",
            "Filling with 0 would make some rows all zero, and the softmax would then divide by zero",
            "-inf scores give sharper gradients, so the model learns which positions to ignore faster",
            "Either works: the softmax renormalises each row, so blocked entries end up at zero anyway",
        ),
        "The softmax only sees scores. A 0 score is an ordinary value, often larger than the real scores, so the "
        "blocked position would still receive attention. -inf (or a large negative number such as -1e9, or "
        "finfo.min) makes its exponential vanish. Beware -1e9 in float16: it overflows.",
    ),
    "multihead_cost": (
        "Compared with one head of width d_model, what does multi-head attention with H heads of width d_model/H cost?",
        (
            "H times the parameters and H times the compute: each head has its own full-width projections",
            "H times the compute but the same parameters: the heads share one set of projections",
            "About 1/H of the parameters, since each head only projects to a width of d_model/H",
            "About the same parameters and compute: the width is split across the heads, not multiplied",
        ),
        "The projections are still D×D in total and the score products are H × (L² · D/H) = L² · D. What you "
        "gain is H separate attention patterns (one per subspace) for about the same price.",
    ),
    "cross_attn_qkv": (
        "In the decoder's cross-attention, where do query, key and value come from?",
        (
            "All three from the encoder output; the decoder stream only decides which layer reads them",
            "Query from the decoder stream; key and value from the encoder output (memory)",
            "Query from the encoder output; key and value from the decoder, so the source reads the target",
            "All three from the decoder stream, with the encoder output added to the keys beforehand",
        ),
        "Each target position asks (query) which source positions are relevant (keys) and reads their content "
        "(values). So the weights are [Lt, Ls], and the source padding mask applies to the keys.",
    ),
    "head_dim": (
        "d_model = {d_model} with {num_heads} heads: what is the size Dh of one head?",
        "Dh = d_model / H = {answer}. The model width is split across the heads, which is why H must divide d_model.",
    ),
    "scale_value": (
        "d_model = {d_model} with {num_heads} heads: by which number are the scores of one head divided?",
        "The scale uses the key dimension of the head, √Dh = √(d_model / H) = {answer}, not √d_model.",
    ),
    "score_entries": (
        "Self-attention with batch {batch}, {heads} heads, sequence length {length}: how many numbers does the "
        "attention-weight tensor hold?",
        "The weights are [B, H, L, L] = {batch} × {heads} × {length} × {length} = {answer}: one per head, query "
        "and key. This quadratic tensor is what limits long sequences.",
    ),
    "cross_shape": (
        "Cross-attention with {lt} target positions and {ls} source positions: what is the size of the last "
        "axis of the attention weights?",
        "The weights are [.., Lt, Ls]: each of the {lt} target queries spreads over the {ls} source keys, so the "
        "last axis has {answer} entries.",
    ),
    "sincos_why": (
        "Why does the original Transformer use sine and cosine positional encodings?",
        (
            "PE(pos + k) is a fixed rotation of PE(pos) for every offset k, and any length can be computed",
            "They need fewer parameters than learned embeddings, yet are tuned the same way in training",
            "They keep every token's embedding at unit norm, which stabilises the attention scores",
            "They give each position a random but fixed code, so that no two positions look alike",
        ),
        "Each (sin, cos) pair at one frequency rotates by a fixed angle when the position moves by k, whatever "
        "the position. Nothing is learned, so any length can be computed. Learned position embeddings work as "
        "well in practice but stop at the longest position trained.",
    ),
    "no_position": (
        "What happens to an encoder without positional encoding?",
        (
            "It cannot be trained: without positions all attention scores are equal, so the gradients vanish",
            "It attends only to the first token, since every other position looks identical to it",
            "Permutation-equivariant: shuffling the tokens shuffles the outputs alike, so order is invisible",
            "Nothing changes: the causal structure of attention already tells the model the order of the words",
        ),
        "Self-attention and the position-wise feed-forward treat the sequence as a set. Only the added "
        'positional signal tells "dog bites man" from "man bites dog".',
    ),
    "embed_scale_why": (
        "Why are the token embeddings multiplied by √d_model?",
        (
            "To make the softmax sharper, since larger embeddings give larger attention scores",
            "To let the model train without warm-up, because larger inputs give larger gradients early on",
            "To undo the division by √d_k in attention, so that the scores keep their original scale",
            "So the embeddings are not dwarfed by the positional table added next (entries in [-1, 1])",
        ),
        "Embeddings initialised with small values would be dominated by a positional table of entries up to 1; "
        "the √d_model factor rebalances them (the paper also shares this matrix with the output layer).",
    ),
    "embed_scale": (
        "d_model = {d_model}: by which factor does the token embedding multiply the looked-up vector?",
        "√d_model = √{d_model} = {answer}.",
    ),
    "ln_vs_bn": (
        "Why do Transformers use LayerNorm rather than BatchNorm?",
        (
            "LayerNorm has no learned parameters, so it cannot overfit the small batches of translation data",
            "It normalises each token alone: batch, padding and length do not matter, in training or inference",
            "BatchNorm cannot run on GPUs with variable sequence lengths, so it would need fixed-size batches",
            "LayerNorm is faster: it reduces over one axis, while BatchNorm reduces over two",
        ),
        "BatchNorm's statistics mix positions of different sentences (and padding) and need running averages at "
        "inference, which suffer with small or variable batches. LayerNorm's statistics come from one vector of "
        "size D at a time.",
    ),
    "pre_post_ln": (
        "What is the difference between Post-LN (the paper) and Pre-LN?",
        (
            "Pre-LN removes the residual connections and normalises each sub-layer's output instead",
            "Post-LN normalises only the model's input embeddings; Pre-LN normalises every layer's output",
            "Post-LN: x = LN(x + F(x)). Pre-LN: x = x + F(LN(x)), which leaves a clean residual path",
            "None in the computation; the names only say where the norm is written in the source code",
        ),
        "In Post-LN every gradient passes through the norms of all later layers, so deep models need a careful "
        "warm-up. Pre-LN leaves the identity path untouched; because that stream is never normalised, a last "
        "LayerNorm follows the stack.",
    ),
    "residual_why": (
        "What do the residual connections around each sub-layer do?",
        (
            "Give gradients an identity path through the depth, and let each sub-layer learn a correction",
            "Normalise the activations, so that every layer sees inputs with zero mean and unit variance",
            "Reduce the number of parameters, since each sub-layer only has to store the difference",
            "Stop attention to padding, because padded positions are carried through unchanged",
        ),
        "x + F(x) has the derivative 1 + F'(x): the signal and the gradient survive even when F is poorly "
        "trained. It also explains why the positional signal added at the input is still available deep inside.",
    ),
    "padding_mask_what": (
        "What does the padding mask do?",
        (
            "It removes the padded sequences from the batch before attention, and puts them back afterwards",
            "It sets the padded embeddings to zero, so that they add nothing at all to the attention scores",
            "It hides padded queries from the loss, so that padding positions do not dilute the mean",
            "It stops every query from attending to padded keys, so padding cannot change real outputs",
        ),
        "Padding exists only to make a batch rectangular. Blocking it as a key ([B, 1, 1, L]) is enough: what "
        "padded queries compute is discarded later, and the loss ignores pad targets separately.",
    ),
    "encoder_decoder_masks": (
        "Which masks does each attention of an encoder-decoder Transformer use?",
        (
            "All three use the causal mask, so that no position ever sees one that comes after it",
            "Encoder self: source padding; decoder self: target padding and causal; cross: source padding",
            "Encoder: causal; decoder self: padding only; cross-attention: none, it sees all the source",
            "Only the decoder uses masks; the encoder sees all positions, padding included, by design",
        ),
        "The encoder sees the whole source, so only padding is hidden. The decoder must not see future targets "
        "(causal) nor padding. Cross-attention's keys are source positions, so the source padding mask applies.",
    ),
    "train_infer_masks": (
        "How does the decoder's masking differ between training and inference?",
        (
            "Training feeds the whole shifted target under a causal mask; inference grows it token by token",
            "Inference uses no mask at all, since only the tokens already generated exist",
            "Training needs no causal mask, because the targets are known in advance anyway",
            "Inference uses the causal mask and training does not, since in training the whole sentence is known",
        ),
        "Teacher forcing computes all positions in parallel, which is only honest if position i cannot look at "
        "i+1..; at inference the future simply does not exist yet, but the same mask keeps the computation "
        "identical to training.",
    ),
    "causal_true": (
        "How many entries of a {length} × {length} causal keep-mask are True?",
        "Row i allows positions 0..i, so 1 + 2 + … + {length} = {answer} (the lower triangle with the diagonal).",
    ),
    "target_true": (
        "A target row has length {length}; its last {pads} tokens are padding. How many entries of its "
        "[{length}, {length}] target mask are True?",
        "Row i allows keys j <= i that are not padding; padded queries still see the real keys before them. "
        "Total: {answer}.",
    ),
    "right_shift": (
        "Why is the decoder fed the target shifted right by one (BOS y1 y2 …) during training?",
        (
            "To make the sequence one token longer, so that the decoder has room left for the EOS token",
            "To skip the first target token, which is always BOS and would make the loss far too easy",
            "So the output at i learns to predict token i+1: input tgt[:, :-1], target tgt[:, 1:]",
            "Because the encoder output is shifted too, and both streams must stay aligned position by position",
        ),
        "This is teacher forcing: the decoder receives the true prefix and predicts the next token at every "
        "position at once. Without the shift the model would learn to copy its input.",
    ),
    "label_smoothing_why": (
        "What does label smoothing (e.g. ε = 0.1) change?",
        (
            "It removes noisy labels from the data, by ignoring the targets that the model finds most unlikely",
            "The target gives the true token 1 - ε and spreads ε over the vocabulary: less over-confidence",
            "It smooths the learning-rate schedule, so that the warm-up and the decay join without a kink",
            "It averages the logits of neighbouring positions, so that predictions change smoothly",
        ),
        "Perplexity gets worse, but accuracy and BLEU usually improve: the model keeps some probability for "
        "alternatives instead of pushing logits to infinity.",
    ),
    "warmup_why": (
        "Why does the Transformer's learning rate start with a warm-up?",
        (
            "To let dropout switch on gradually, since full dropout at the very start hides too much signal",
            "Because the embeddings must be trained first, before the attention layers can use them",
            "To save memory at the start, while Adam's moment buffers are still being allocated",
            "Adam's first moment estimates are poor and Post-LN is fragile: a large early rate diverges",
        ),
        "The Noam schedule rises linearly for warmup steps, then decays like 1/√step. Pre-LN models are far less "
        "sensitive to it.",
    ),
    "dropout_where": (
        "Where is dropout applied in the original Transformer?",
        (
            "Only on the final logits, just before the loss, so that the model never relies on one output",
            "Only on the input embeddings, since every later layer sees a mix of all the tokens anyway",
            "On every sub-layer output before the residual add, and on the embeddings plus positions",
            "On the LayerNorm gains and biases, the parameters most prone to overfitting",
        ),
        'The paper\'s "residual dropout" sits on every sub-layer output before the addition and on the sum of '
        "embeddings and positions; common implementations add it on attention weights and after the feed-forward "
        "activation.",
    ),
    "eval_mode": (
        "Your model gives different outputs for the same input at inference. The most likely cause?",
        (
            "model.eval() was not called, so dropout still zeroes random activations",
            "The positional table is rebuilt on every call, so positions shift from run to run",
            "The softmax runs over the wrong axis, which makes the weights depend on the batch",
            "Label smoothing, which adds random noise to the predictions at inference time",
        ),
        "In train() mode dropout zeroes random activations. eval() switches it off (and torch.no_grad() saves "
        "memory); a module that calls F.dropout must pass training=self.training.",
    ),
    "logits_not_probs": (
        "Should the model's output layer apply a softmax before the cross-entropy loss?",
        (
            "Yes: cross_entropy expects probabilities and takes their logarithm itself",
            "No: return logits; cross_entropy applies log-softmax itself, a second softmax distorts it",
            "Yes, but only at inference, so that the outputs can be read as probabilities",
            "Only with label smoothing, which needs probabilities to mix with the uniform target",
        ),
        "F.cross_entropy combines log_softmax and the negative log-likelihood in one numerically stable step. "
        "For greedy decoding the argmax of the logits is the argmax of the probabilities anyway.",
    ),
    "noam_peak": (
        "Noam schedule with d_model = {d_model} and warmup = {warmup}: at which step is the learning rate largest?",
        "The two terms step^-0.5 and step·warmup^-1.5 cross where step = warmup, so the peak is at step {answer}.",
    ),
    "noam_value": (
        "Noam schedule, factor 1: what is the learning rate at step {step} with d_model = {d_model} and warmup = "
        "{warmup}?",
        "lr = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) = {answer}.",
    ),
    "smoothed_true": (
        "Vocabulary of {vocab} tokens, label smoothing ε = {eps}: what probability does the smoothed target put "
        "on the true token?",
        "1 - ε + ε / V = {answer}: ε is spread uniformly over all {vocab} tokens, the true one included.",
    ),
    "kv_cache": (
        "What does a KV cache store during autoregressive decoding?",
        (
            "The attention weights of earlier steps, so that the softmax need not be recomputed",
            "The logits of earlier steps, so that beam search can rescore the hypotheses cheaply",
            "Each layer's keys and values of the tokens so far, so a step projects only the newest token",
            "The encoder's input embeddings, so that the source is not looked up again at every single step",
        ),
        "Without a cache every step recomputes the whole prefix. Causal masking guarantees that old keys and "
        "values never change, so they can be kept; the cache's memory grows with length × layers × D.",
    ),
    "greedy_last": (
        "In greedy decoding, which logits choose the next token?",
        (
            "Those of the last position of the decoder output",
            "Those of the first position, which summarises the whole prefix",
            "The average over all positions, weighted by attention",
            "Those of the encoder's last position, fed through output_proj",
        ),
        "The decoder output at position t predicts token t+1, so the newest prediction is at the last position. "
        "Reading position 0 repeats the same guess forever.",
    ),
    "dff_4x": (
        "Why is d_ff usually 4 × d_model?",
        (
            "The residual connection requires it, so that the two linear maps cancel each other out in shape",
            "An empirical choice: a wider hidden layer adds capacity, and 4× balanced quality and cost",
            "Because attention has four projection matrices, and the feed-forward mirrors each one of them",
            "It keeps the feed-forward's parameter count equal to the attention block's",
        ),
        "Nothing forces the factor; the paper used 512 → 2048 and later models mostly kept the ratio (gated "
        "variants use about 8/3). The feed-forward then holds about two thirds of a layer's parameters.",
    ),
    "complexity": (
        "How do self-attention's time and memory grow with sequence length L (width D fixed)?",
        (
            "Linearly, O(L·D): each position is processed once per layer",
            "O(L log L·D), as in a fast Fourier transform",
            "O(D²) only, independent of L: the projections dominate",
            "Quadratically: O(L²·D) time and O(L²) memory for the weights",
        ),
        "Every query scores every key: an L × L matrix per head. Doubling the length quadruples it, which is why "
        "long contexts need tricks (chunking, sparse or memory-efficient attention).",
    ),
    "score_growth": (
        "The sequence length grows from {length} to twice that. By which factor does the attention-weight tensor grow?",
        "It is L × L per head, so doubling L multiplies it by {answer}.",
    ),
    "params_total": (
        "How many parameters does Transformer(src_vocab={src_vocab}, tgt_vocab={tgt_vocab}, d_model={d_model}, "
        "heads={num_heads}, d_ff={d_ff}, layers={num_layers}, norm_first={norm_first}) have (separate "
        "embeddings, an output projection with bias)?",
        "Embeddings (V_src + V_tgt)·D, per encoder layer 4(D² + D) + (2DF + F + D) + 4D, per decoder layer "
        "8(D² + D) + (2DF + F + D) + 6D, plus 4D of final norms with Pre-LN, plus D·V_tgt + V_tgt: {answer}.",
    ),
    "params_mha": (
        "How many parameters does one multi-head attention block with d_model = {d_model} and {num_heads} heads "
        "have (Q, K, V and output projections, with biases)?",
        "4 · (D² + D) = {answer}; the number of heads does not matter.",
    ),
    "params_ffn": (
        "How many parameters does a feed-forward block with d_model = {d_model} and d_ff = {d_ff} have (with biases)?",
        "D·F + F + F·D + D = {answer}.",
    ),
    "params_layernorm": (
        "How many parameters does LayerNorm(d_model = {d_model}) have?",
        "A gain and a bias per feature: 2 · {d_model} = {answer}.",
    ),
}


MESSAGES = {
    "quiz.header": "Transformer interview quiz: {n} questions (`{replay}` asks them again).",
    **{f"quiz.topic.{k}": v for k, v in _TOPICS.items()},
    **{f"practice.title.{k}": v for k, v in _TITLES.items()},
    **{f"practice.hint.{task}.{level}": h for task, pair in _HINTS.items() for level, h in enumerate(pair, start=1)},
    **quiz_messages(_QUIZ),
}
