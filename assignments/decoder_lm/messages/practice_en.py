"""The decoder-only LM's practice and quiz sentences (English): drill titles, hints, topics, questions.

A topic the first assignment also has is named exactly as there (the catalogue is shared: one key, one text).
``PENDING`` holds the texts of the two drills the kit cannot key apart from the first assignment's yet
(``assignments/decoder_lm/practice.py`` says why); they are not in ``MESSAGES``.
"""

from grader.author import quiz_messages

_TOPICS = {
    "attention": "attention",
    "positions": "positions",
    "norm": "norm & residuals",
    "cache": "KV cache",
    "sampling": "sampling",
    "training": "training",
    "sizes": "sizes & cost",
}

_TITLES = {
    "rmsnorm": "RMSNorm",
    "rope": "Rotary position embedding (half-split)",
    "swiglu": "SwiGLU feed-forward",
    "gqa": "Causal grouped-query attention",
    "attention": "Self-attention with RoPE and a KV cache",
    "kv_cache": "The KV cache of one layer",
    "block": "The pre-norm decoder block",
    "top_k": "Top-k filter",
    "top_p": "Top-p (nucleus) filter",
    "sample": "Sampling the next token",
    "generate": "Generation with the KV cache",
    "decay_groups": "Weight-decay parameter groups",
    "adamw": "AdamW by hand",
    "schedule": "Warm-up + cosine schedule",
    "clip": "Gradient clipping by global norm",
    "loss": "Next-token loss",
    "train_step": "One training step",
    "llama_block25": "Norm, feed-forward and the block",
    "rope_attention40": "RoPE, grouped-query attention and the cache",
    "sampling30": "From logits to text",
    "optim35": "The optimiser, by hand",
    "lm_training25": "Loss, schedule and training step",
    "llama60": "A Llama layer from scratch",
}

# Level 1: how the shapes flow. Level 2: the operation everything hinges on. Never the code.
_HINTS = {
    "rmsnorm": (
        "x [..., D] → mean of x² over the last axis, kept as [..., 1] → divide x by its root → times weight [D] "
        "→ [..., D]. One statistic per vector, no mean subtracted.",
        "eps goes inside the square root: x / sqrt(mean(x²) + eps). weight is an nn.Parameter of ones; there is "
        "no bias. For half-precision inputs, compute the statistic in float32 and cast back.",
    ),
    "rope": (
        "x [..., L, Dh] → positions offset … offset + L − 1 [L] against θ [Dh/2] give angles [L, Dh/2] → "
        "repeat them to [L, Dh] so that coordinates i and i + Dh/2 share one → broadcast over the leading axes.",
        "Half-split: split the head into halves x1, x2; the 90° turn is cat(−x2, x1), and the result is "
        "x·cos + turn(x)·sin. θ_i = base^(−2i/Dh). Build the angles in at least float32 on x's device.",
    ),
    "swiglu": (
        "x [..., D] → gate_proj and up_proj, each [..., F] → multiply elementwise → down_proj → [..., D].",
        "Only the gate goes through SiLU: down(silu(gate(x)) · up(x)). Three nn.Linear without bias; "
        "hidden_dim is used as given.",
    ),
    "gqa": (
        "q [B, H, Lq, Dh], k and v [B, Hkv, Lk, Dh] → give every query head its key/value head → scores "
        "[B, H, Lq, Lk] → softmax over the keys → times v → [B, H, Lq, Dh].",
        "repeat_interleave(H // Hkv, dim=1) puts consecutive query heads on one key/value head (repeat would "
        "pair them wrongly). The causal pattern is aligned to the end: ones(Lq, Lk).tril(Lk − Lq); fill the "
        "blocked scores with −inf before the softmax, and scale by 1/√Dh.",
    ),
    "attention": (
        "x [B, L, D] → q [B, L, H·Dh], k and v [B, L, Hkv·Dh] → split heads → [B, H, L, Dh] and "
        "[B, Hkv, L, Dh] → rotate q and k → (append k, v to the cache) → attention → merge → o_proj → [B, L, D].",
        "Read the offset from the cache before appending: the new tokens sit at positions cache.length … "
        "cache.length + L − 1. Rotate before caching (the cache holds rotated keys); values are never rotated.",
    ),
    "kv_cache": (
        "update(keys [B, Hkv, L, Dh], values …): the cache grows from [B, Hkv, T, Dh] to [B, Hkv, T + L, Dh] and "
        "returns the whole of both.",
        "Concatenate along dim 2, the sequence axis. keys and values are None while empty, and length reads "
        "T (0 while empty).",
    ),
    "block": (
        "x [B, L, D] → attn_norm → attn → add to x → h [B, L, D] → ffn_norm → ffn → add to h → [B, L, D].",
        "Pre-norm: the norm is applied to the sublayer's input only; the residual adds the un-normalised x "
        "(and h). Pass the cache through to the attention.",
    ),
    "top_k": (
        "logits [..., V] → the k-th largest of each row, kept as [..., 1] → compare → [..., V], with −inf where "
        "a logit is below it.",
        "torch.topk(logits, k).values[..., -1:] is the threshold; keep what is ≥ it, so ties at the boundary "
        "all survive. torch.topk refuses k > V: cap k first.",
    ),
    "top_p": (
        "softmax per row [..., V] → sort descending → the mass before each sorted token (cumsum minus itself) "
        "→ a threshold [..., 1] → back to the unsorted row [..., V].",
        "Keep a token when the mass strictly ahead of it is < p (so the first is always kept). The smallest "
        "kept probability is the threshold: tokens tied with it stay. p ≥ 1 keeps everything.",
    ),
    "sample": (
        "logits [B, V] → / temperature → top-k → top-p → softmax [B, V] → one multinomial draw → [B, 1] → "
        "squeeze → long [B].",
        "Temperature 0 is argmax, before any filter and without the generator. Otherwise exactly one call "
        "torch.multinomial(probs, 1, generator=generator) on the whole batch.",
    ),
    "generate": (
        "prompt [B, L0] → one forward with fresh caches → last position's logits [B, V] → sample [B, 1] → "
        "feed only that token back → … → cat → [B, L0 + max_new_tokens].",
        "Exactly max_new_tokens forwards: the last sampled token is not fed back. Run under torch.no_grad(), "
        "and leave model.training as it was.",
    ),
    "decay_groups": (
        "model.named_parameters() → split by p.dim(): ≥ 2 goes to the decayed group, < 2 to the other → "
        "two dicts, decayed first.",
        "named_parameters() already lists the tied embedding once. Leave out parameters with "
        "requires_grad=False; the second group's weight_decay is 0.0.",
    ),
    "adamw": (
        "For each parameter with a gradient: its state m, v (shape of θ) and step t → decay θ → update m and v "
        "→ bias-correct → step θ in place.",
        "Decoupled: θ ← θ − lr·λ·θ before the Adam step, never added to the gradient. Read lr and λ from the "
        "parameter's group each step; m̂ = m/(1 − β1^t), v̂ = v/(1 − β2^t); eps is added to √v̂.",
    ),
    "schedule": (
        "step → three regimes: warm-up (step < warmup_steps), cosine (up to total_steps), then flat at min_lr.",
        "Warm-up is max_lr·(step + 1)/warmup_steps, so step 0 already learns. The cosine's progress is "
        "(step − warmup)/(total − warmup), from 0 to 1.",
    ),
    "clip": (
        "every gradient → its norm → one norm over all of them (as if concatenated) → one scale factor → "
        "every gradient times it, in place → return the norm before clipping.",
        "scale = min(1, max_norm / (total + 1e-6)). Skip parameters without a gradient, and read the "
        "parameters once: they may come as a generator.",
    ),
    "loss": (
        "logits [B, L, V] → drop the last position → [B·(L−1), V]; tokens [B, L] → drop the first → "
        "[B·(L−1)] → cross-entropy.",
        "The mean runs over counted targets, not over rows: pass pad_id as ignore_index (and ignore nothing when "
        "it is None).",
    ),
    "train_step": (
        "set the groups' lr (if given) → zero the gradients → forward → lm_loss → backward → clip (if asked) "
        "→ optimizer.step() → return the loss as a float.",
        "Clip after backward() and before step(). Return loss.item() computed before the update.",
    ),
}

PENDING_TITLES = {
    "model": "The decoder-only LM with tied embeddings",
    "param_count": "The parameter count from the formula",
}

PENDING_HINTS = {
    "model": (
        "tokens [B, L] → embed → [B, L, D] → every layer with its own cache → final norm → lm_head → logits [B, L, V].",
        "Tie by assigning the parameter (lm_head.weight = embed.weight) after initialising. No √D scale and no "
        "position table: RoPE places the tokens.",
    ),
    "param_count": (
        "Count per part: the embedding (V·D, the tied head adds nothing), each layer, the final norm (D).",
        "Per layer: two norms (2·D), q_proj and o_proj (D² each), k_proj and v_proj (D·Hkv·Dh each, Dh = D/H), "
        "three SwiGLU matrices (D·F each).",
    ),
}

# Choice: (question, [a, b, c, d], why); numeric: (question, why).
_QUIZ = {
    # -- attention ---------------------------------------------------------------------------------------------
    "lm_gqa_what": (
        "What does grouped-query attention (GQA) change compared with multi-head attention?",
        [
            "Each query head attends to its own group of positions, so the attention cost falls.",
            "Several query heads share one key/value head, so the KV cache is that much smaller.",
            "Queries are grouped into chunks of tokens and each chunk is attended to as one token.",
            "Key/value heads are split further into groups, so each of them gets a smaller size.",
        ],
        "H query heads read Hkv key/value heads (H/Hkv queries per group). Only k_proj and v_proj shrink, and "
        "with them the cache that every decoding step has to read; quality stays close to multi-head attention.",
    ),
    "lm_causal_offset": (
        "Decoding with a cache: 1 new query attends to Lk keys (the cache plus its own). Which keys may it see?",
        [
            "Only key 0, because a lone query sits on the first row of the causal lower triangle.",
            "None until the cache is full, and then all of them at once, with equal weights.",
            "Keys 0 … Lk − 2: the newest token must not attend to its own key when decoding.",
            "All Lk keys: it is the last position, so the end-aligned causal mask hides none.",
        ],
        "The queries are the last Lq positions: query i sits at Lk − Lq + i and sees keys 0 … Lk − Lq + i; with "
        "Lq = 1 that is every key. PyTorch's is_causal=True aligns the triangle to the top-left instead and "
        "would show the new token key 0 only.",
    ),
    "lm_mqa_cost": (
        "Multi-query attention (a single key/value head) is the extreme case of GQA. What does it trade?",
        [
            "The smallest cache and fastest decoding, for some quality lost against MHA.",
            "Fewer query parameters, for a KV cache that grows twice as fast with the length.",
            "Exact equivalence with MHA when decoding, for a training cost H times larger.",
            "Faster training on long texts, for decoding that needs H passes per new token.",
        ],
        "One key/value head makes the cache H times smaller than MHA's, so decoding reads far less memory; "
        "sharing one head among all queries costs some quality, which is why GQA's middle ground is common.",
    ),
    "lm_gqa_saving": (
        "Attention with dim = {dim}, {num_heads} query heads and {num_kv_heads} key/value head(s): how many "
        "times smaller is its KV cache than with {num_heads} key/value heads (plain multi-head)?",
        "The cache holds Hkv heads, not H: the ratio is H / Hkv = {num_heads} / {num_kv_heads} = {answer}; the "
        "length and the head size cancel.",
    ),
    "lm_params_attention": (
        "How many parameters does CausalSelfAttention(dim={dim}, num_heads={num_heads}, "
        "num_kv_heads={num_kv_heads}) have (no biases)?",
        "q_proj and o_proj are D × D; k_proj and v_proj are D × Hkv·Dh with Dh = D / H: 2·D² + 2·D·Hkv·Dh = {answer}.",
    ),
    # -- positions ---------------------------------------------------------------------------------------------
    "lm_rope_relative": (
        "Why does RoPE make the attention scores depend on relative positions only?",
        [
            "It adds one position vector to both q and k, and the sum cancels in their product.",
            "Its angles are learnt in training to match the offsets that the data contains.",
            "Rotations compose: R(m)q · R(n)k = q · R(n − m)k depends on the offset only.",
            "It normalises q and k at each position, so only the order of tokens can matter.",
        ],
        "A rotation's transpose is its inverse, so R(m)ᵀR(n) = R(n − m): the score of a query at m and a key at "
        "n sees only n − m. Rotations also keep norms, so nothing else about the vectors changes.",
    ),
    "lm_rope_qk_only": (
        "Which tensors does RoPE rotate in a decoder's attention?",
        [
            "Queries and keys, after the projections and before the scores; values stay as they are.",
            "The token embeddings, once at the input, the way the sinusoidal table used to be added.",
            "Queries, keys and values alike, so that the output also carries the position signal.",
            "The attention output, after the heads are merged, so that the next layer sees positions.",
        ],
        "Positions only need to enter the scores q·k; rotating v would rotate the output by an absolute angle "
        "and lose the relative property.",
    ),
    "lm_rope_pairing": (
        "A checkpoint trained with half-split RoPE (i with i + Dh/2) is loaded into code that pairs (2i, 2i + 1). "
        "What happens?",
        [
            "Nothing visible: both pairings turn by the same angles, so the outputs are identical.",
            "It works at position 0 only and then degrades slowly as sequences grow longer.",
            "It refuses to load: checkpoints record their pairing and PyTorch checks for a match.",
            "The outputs are wrong: the pairings differ by a reordering of every head's coordinates.",
        ],
        "Both pairings have the same properties, but they rotate different coordinates together; weights learnt "
        "with one do not fit the other (at position 0 nothing turns, so only later positions go wrong).",
    ),
    "lm_rope_theta": (
        "RoPE with head_dim = {head_dim} and base = {base}: by what angle (in radians) does pair i = {i} turn "
        "from one position to the next?",
        "θ_i = base^(−2i/Dh) = {answer}. Pair 0 turns one radian per position; later pairs turn ever more slowly.",
    ),
    "lm_rope_wavelength": (
        "RoPE with head_dim = {head_dim} and base = {base}: how many positions does the slowest pair need for "
        "one full turn?",
        "The last pair, i = Dh/2 − 1, turns by θ = base^(−(Dh − 2)/Dh) per position, so a full turn takes 2π/θ "
        "= {answer} positions. Raising the base stretches it: that is how long-context models extend RoPE.",
    ),
    "lm_rope_partner": (
        "Half-split RoPE with head_dim = {head_dim}: which coordinate (counting from 0) turns together with "
        "coordinate {i}?",
        "Coordinate i pairs with i + Dh/2 = {answer}. The paper's interleaved pairing would use its neighbour.",
    ),
    # -- norm --------------------------------------------------------------------------------------------------
    "lm_rmsnorm_drop": (
        "What does RMSNorm leave out compared with LayerNorm?",
        [
            "The learnt scale: it divides by the root mean square and then multiplies by nothing.",
            "Subtracting the mean, and the bias: it divides by the RMS and scales by a weight.",
            "The epsilon: the root mean square of a real activation is never exactly zero.",
            "Features: it normalises each feature over the batch, the way BatchNorm does.",
        ],
        "RMSNorm is x / sqrt(mean(x²) + eps) · weight: no centring and no bias. It is cheaper, and in practice "
        "as good, which is why Llama-style models use it.",
    ),
    "lm_prenorm": (
        "Why do modern decoders normalise before each sublayer (pre-norm) rather than after it?",
        [
            "It halves the number of norm layers, since the residual sum no longer needs one.",
            "It makes the model blind to the scale of the embeddings, so no √D factor is needed.",
            "The residual path stays an identity, so gradients reach early layers in deep stacks.",
            "It lets attention and the feed-forward sublayer run in parallel on two separate devices.",
        ],
        "With x + f(norm(x)) the residual stream is never normalised, so the gradient has a direct path through "
        "every layer; post-norm stacks need careful warm-up to train at depth. A final norm follows the last "
        "layer.",
    ),
    # -- KV cache ----------------------------------------------------------------------------------------------
    "lm_cache_why_kv": (
        "Why does a decoder cache the keys and values but not the queries?",
        [
            "Past keys and values serve every later token; a past query is never needed again.",
            "Queries depend on the whole sequence, so they change at each step and cannot be kept.",
            "Queries are cheap to recompute because they skip RoPE, while keys and values need it.",
            "Queries are cached as well, but inside the attention module rather than in the cache.",
        ],
        "A new token's output needs its own query against every earlier key and value. Earlier queries only "
        "produced earlier outputs, which are done; earlier keys and values are read again at every step.",
    ),
    "lm_cache_offset": (
        "A cache holds T positions. At which positions must RoPE rotate the next L tokens?",
        [
            "Positions 0 … L − 1: each call starts again, and the cache keeps its own positions.",
            "Positions T … T + L − 1: they continue from the cache, where earlier tokens stopped.",
            "Position T for every new token, since they all arrive together in the same forward pass.",
            "None: cached decoding turns RoPE off, because the cache already holds the order.",
        ],
        "The cached keys were rotated at their own positions; the new tokens come after them, so their offset is "
        "the cache's length. Restarting at 0 is a classic bug: full and cached decoding then disagree.",
    ),
    "lm_decode_bound": (
        "Generating one token at a time with a KV cache on a GPU, what usually limits the speed?",
        [
            "The softmax over the vocabulary, whose cost grows with the square of its size.",
            "The attention scores, because their cost grows with the square of the length.",
            "Memory bandwidth: each step reads every weight and the whole cache for little math.",
            "The random number generator, since every row draws a fresh token at every step.",
        ],
        "One token per row means matrix-vector products: the arithmetic per byte read is tiny, so the time is "
        "that of reading the weights and the cache. Batching rows and shrinking the cache (GQA, lower "
        "precision) are what help.",
    ),
    "lm_kv_cache_mib": (
        "A decoder with {num_layers} layers, dim = {dim}, {num_heads} query heads and {num_kv_heads} key/value "
        "head(s), in {dtype}: how many MiB does its KV cache hold after {seq_len} tokens for a batch of {batch}?",
        "2 (keys and values) · layers · batch · Hkv · tokens · Dh · bytes per number, with Dh = dim / heads: "
        "{answer} MiB (1 MiB = 2²⁰ bytes). Only the key/value heads are cached, not the query heads.",
    ),
    "lm_cache_after_generate": (
        "generate() with a prompt of {prompt_len} tokens and max_new_tokens = {max_new_tokens}: how many "
        "positions does each layer's KV cache hold when it returns?",
        "The prompt goes in at once, then every new token but the last is fed back: {prompt_len} + "
        "{max_new_tokens} − 1 = {answer}.",
    ),
    # -- sampling ----------------------------------------------------------------------------------------------
    "lm_temperature": (
        "What does sampling at temperature 0 mean in this contract?",
        [
            "Uniform sampling: every token of the vocabulary gets the same chance at each step.",
            "An error: dividing the logits by zero gives infinities that softmax cannot handle.",
            "Sampling from the top-k distribution only, with a k chosen from the logits.",
            "Greedy decoding: the argmax of the logits, with no filter and no random draw.",
        ],
        "As the temperature falls, softmax(logits / T) concentrates on the largest logit; at 0 the limit is the "
        "argmax, so the contract makes it greedy and leaves the generator untouched.",
    ),
    "lm_top_p_adapts": (
        "What does top-p (nucleus) sampling do that top-k cannot?",
        [
            "It adapts how many tokens survive: few when the model is sure, many when it is not.",
            "It guarantees that sampled text never repeats, by removing tokens already used.",
            "It keeps exactly p·V tokens, so the candidates grow with the size of the vocabulary.",
            "It reweights the tail, so rare tokens are drawn more often than their probability.",
        ],
        "Top-k keeps k tokens whatever the distribution looks like; top-p keeps the smallest set whose mass "
        "reaches p, so a peaked distribution leaves one or two candidates and a flat one many.",
    ),
    "lm_filter_order": (
        "Why must the temperature be applied before top-p, not after it?",
        [
            "Top-p needs whole-number logits, and only the division by the temperature gives them.",
            "The order does not matter: both steps are monotonic, so the result is the same.",
            "The temperature changes the probabilities, and so which tokens are in the nucleus.",
            "Dividing after filtering would turn the −∞ of the removed tokens back into numbers.",
        ],
        "Top-p's cut depends on the probabilities, and those depend on the temperature: a hot distribution is "
        "flatter and its nucleus larger. The contract fixes the order: temperature, top-k, top-p, softmax.",
    ),
    "lm_top_p_kept": (
        "Probabilities {probs} (sorted), top-p with p = {p}: how many tokens can still be sampled?",
        "A token stays while the mass of the tokens ahead of it is below p: {answer} token(s). The first one "
        "always stays.",
    ),
    "lm_top_k_kept": (
        "Logits {logits}, top-k with k = {k}: how many tokens can still be sampled?",
        "Every logit ≥ the k-th largest stays, and ties at the boundary all stay: {answer} token(s).",
    ),
    # -- training ----------------------------------------------------------------------------------------------
    "lm_adamw_decoupled": (
        "What is the difference between Adam with L2 regularisation and AdamW?",
        [
            "AdamW adds λθ to the gradient, so the decay is rescaled by Adam's adaptive step size.",
            "AdamW shrinks θ by lr·λ·θ directly; with L2 the term goes through Adam's rescaling.",
            "AdamW uses two learning rates: one for the weights, a smaller one for the decay.",
            "There is none: AdamW is PyTorch's name for Adam when weight_decay is not zero.",
        ],
        "Added to the gradient, λθ is divided by √v̂ like everything else, so weights with large gradients "
        "barely decay. AdamW multiplies θ by (1 − lr·λ) outside the adaptive step.",
    ),
    "lm_no_decay": (
        "Why do norm weights (and biases) usually get no weight decay?",
        [
            "They have no gradient, so AdamW would skip them anyway, and a group saves memory.",
            "They are tied to the embedding, so decaying them would decay the embedding twice.",
            "Decay makes the optimiser unstable on them, because their values are near zero.",
            "Pulling a gain or a bias toward 0 does not regularise: it only changes the function.",
        ],
        "Weight decay limits the size of the matrices that mix features; a norm's gain starts at one and a bias "
        "is a shift, so shrinking them is damage, not regularisation. Hence two parameter groups.",
    ),
    "lm_clip_global": (
        "Why does gradient clipping scale all gradients by one global norm, not each tensor by its own?",
        [
            "One factor for all keeps the direction of the whole update; per-tensor clips bend it.",
            "Per-tensor norms cannot be computed on a GPU without moving gradients to the CPU.",
            "A global norm is always below any one tensor's, so the gradients are clipped less.",
            "Per-tensor clipping would clip the optimiser's moments too, and they must not change.",
        ],
        "Scaling every gradient by the same factor shortens the update but keeps its direction; clipping tensors "
        "separately changes their proportions.",
    ),
    "lm_warmup_adam": (
        "Why does a warm-up still help with Adam-type optimisers?",
        [
            "Adam's bias correction is only defined after the first thousand steps.",
            "Warm-up fills the KV cache before the first real optimiser step is taken.",
            "The second-moment estimates are noisy at first, so early steps can be too large.",
            "It stops the weight decay from acting while the weights are still at their start.",
        ],
        "In the first steps v̂ rests on a handful of gradients, so m̂/√v̂ can be large in random directions; a "
        "small rate at first keeps those steps from wrecking the initialisation.",
    ),
    "lm_decay_tensors": (
        "A DecoderLM with {num_layers} layer(s): how many parameter tensors go into the weight-decay group?",
        "Every tensor of 2 or more dimensions: the embedding (the tied head is the same tensor) and, per layer, "
        "q, k, v, o and the three SwiGLU matrices: 1 + 7·{num_layers} = {answer}.",
    ),
    "lm_no_decay_numel": (
        "A DecoderLM with dim = {dim} and {num_layers} layers: how many parameters (numbers, not tensors) get no "
        "weight decay?",
        "The RMSNorm weights: two per layer and the final one, D each: (2·{num_layers} + 1)·{dim} = {answer}.",
    ),
    "lm_warmup_lr": (
        "cosine_lr with max_lr = {max_lr}, warmup_steps = {warmup_steps}, total_steps = {total_steps}: what is the "
        "rate at step {step} (steps count from 0)?",
        "During warm-up the rate is max_lr·(step + 1)/warmup_steps = {answer}.",
    ),
    "lm_cosine_lr": (
        "cosine_lr with max_lr = {max_lr}, min_lr = {min_lr}, warmup_steps = {warmup_steps}, total_steps = "
        "{total_steps}: what is the rate at step {step}?",
        "min_lr + ½(max_lr − min_lr)(1 + cos(π·(step − warmup)/(total − warmup))) = {answer}.",
    ),
    "lm_clip_value": (
        "Two gradients, [{a}, {b}] and [{c}], clipped together with max_norm = {max_norm}: what does the second "
        "one, {c}, become?",
        "The norm of all gradients together is √({a}² + {b}² + {c}²); every gradient is multiplied by "
        "min(1, max_norm / norm), so {c} becomes {answer}.",
    ),
    "lm_loss_targets": (
        "lm_loss over two rows of {length} tokens, the first ending in {pad1} padding token(s) and the second in "
        "{pad2}: over how many targets does the mean run?",
        "Each row has length − 1 targets (the first token is never a target, the last position predicts "
        "nothing), and padding targets are ignored: 2·({length} − 1) − {pad1} − {pad2} = {answer}.",
    ),
    "lm_uniform_loss": (
        "A fresh model gives each of its {vocab_size} tokens the same logit. What is its next-token loss "
        "(natural logarithm)?",
        "The cross-entropy of a uniform prediction is ln V = {answer}: where training starts (the demo prints it).",
    ),
    # -- sizes -------------------------------------------------------------------------------------------------
    "lm_swiglu_hidden": (
        "Llama-style models set SwiGLU's hidden size near 8/3·D rather than 4·D. Why?",
        [
            "The gate halves the useful width, and 8/3 is what restores a 4·D network's width.",
            "SiLU saturates above 8/3, so a wider hidden layer would only add dead units.",
            "It makes the hidden size a multiple of the number of heads, as attention needs.",
            "SwiGLU has three matrices, not two: 3·D·(8/3·D) keeps the 8·D² of a 4·D MLP.",
        ],
        "A classic MLP has two D × 4D matrices, 8·D² parameters; SwiGLU's gate adds a third, so the hidden size "
        "shrinks to about 8/3·D (rounded to a multiple of 64 or so) to keep the same budget.",
    ),
    "lm_tied_why": (
        "What does tying the output head to the input embedding do?",
        [
            "It makes the logits symmetric: token i after j is predicted as often as j after i.",
            "It saves V·D parameters, and one vector per token serves reading and predicting.",
            "It freezes the embedding, since the head may not change while the model trains.",
            "It removes the need for a final norm, since embedding rows already have unit norm.",
        ],
        "The head's weight is the embedding matrix itself: logits are h·Eᵀ. For a small model that matrix is "
        "often the largest, so tying saves a large share of the parameters.",
    ),
    "lm_params_total": (
        "How many parameters does DecoderLM(vocab_size={vocab_size}, dim={dim}, num_layers={num_layers}, "
        "num_heads={num_heads}, hidden_dim={hidden_dim}, num_kv_heads={num_kv_heads}) have (tied embeddings)?",
        "V·D + layers·(2·D + 2·D² + 2·D·Hkv·Dh + 3·D·F) + D = {answer}; the tied head adds nothing.",
    ),
    "lm_params_swiglu": (
        "How many parameters does SwiGLU(dim={dim}, hidden_dim={hidden_dim}) have (no biases)?",
        "Three matrices, gate, up and down: 3·D·F = {answer}.",
    ),
    "lm_tied_saving": (
        "vocab_size = {vocab_size}, dim = {dim}: how many parameters does tying the output head to the embedding save?",
        "Untied, the head would be another V × D matrix: {answer} parameters.",
    ),
}

MESSAGES = {
    # The same text as the first assignment's (one catalogue, one text per key); a decoder-only LM is a
    # Transformer too.
    "quiz.header": "Transformer interview quiz: {n} questions (`{replay}` asks them again).",
    **{f"quiz.topic.{k}": v for k, v in _TOPICS.items()},
    **{f"practice.title.{k}": v for k, v in _TITLES.items()},
    **{f"practice.hint.{task}.{level}": h for task, hints in _HINTS.items() for level, h in enumerate(hints, 1)},
    **quiz_messages(_QUIZ),
}
