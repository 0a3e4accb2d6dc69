"""en sentences of the decoder-only LM (its modules: rmsnorm ... model, param_count)."""

MESSAGES = {
    # -- rmsnorm --------------------------------------------------------------------------------------
    "fail.lm_rms_init": "RMSNorm's weight must start at ones.",
    "fail.lm_rms_centred": "RMSNorm's output is what you get after subtracting the mean of each vector: RMSNorm "
    "does not centre. Divide x itself by sqrt(mean(x^2) + eps).",
    "fail.lm_rms_eps_outside": "RMSNorm's output is x / (sqrt(mean(x^2)) + eps): eps belongs inside the square root, "
    "x / sqrt(mean(x^2) + eps).",
    "fail.lm_rms_scale": "{what}(a x) differs from {what}(x) for a = {factor}: the output must not depend on the "
    "scale of the input (divide by the root of the mean square, not by the mean square).",
    # -- rope -----------------------------------------------------------------------------------------
    "fail.lm_rope_odd": "RotaryEmbedding(head_dim={head_dim}) raised {raised}; an odd head_dim cannot be split into "
    "pairs and must raise ValueError.",
    "fail.lm_rope_interleaved": "RotaryEmbedding pairs coordinate i with i xor 1 (the paper's interleaved pairs "
    "(2i, 2i + 1)); the contract pairs i with i + Dh/2 (half-split, as Llama does): "
    "rotate_half(x) = cat([-x2, x1]) with x1, x2 the two halves.",
    "fail.lm_rope_pairing": "RotaryEmbedding turns the unit vector e_{coordinate} into coordinates {found}; the "
    "half-split pairing turns it within coordinates {expected} only.",
    "fail.lm_rope_norm": "RotaryEmbedding changed the norm of the vector at position {position}: each pair must be "
    "turned by a rotation (cos and sin of one angle per pair, with the signs of the contract).",
    "fail.lm_rope_relative": "after shifting every position by {shift}, the dot products of the rotated queries and "
    "keys changed: they must depend only on the distance between positions (the same angle "
    "for both members of a pair, rotation signs as in the contract).",
    "fail.lm_rope_offset": "forward(x, offset={offset}) differs from rotating the same rows at positions {offset} "
    "onward of a longer input: row l must be turned by the angles of position offset + l.",
    # -- swiglu ---------------------------------------------------------------------------------------
    "fail.lm_swiglu_swapped": "SwiGLU applies silu to up_proj(x) and multiplies by gate_proj(x): gate and up are "
    "swapped. The output is down_proj(silu(gate_proj(x)) * up_proj(x)).",
    # -- gqa ------------------------------------------------------------------------------------------
    "fail.lm_gqa_tiled": "with {heads} query heads and {kv_heads} key/value heads, query head h reads key/value "
    "head h % {kv_heads} (repeat tiles the heads); it must read head h // (H // Hkv): "
    "consecutive query heads share one (repeat_interleave).",
    "fail.lm_gqa_grouping": "with {heads} query heads and {kv_heads} key/value heads, the output differs from "
    "attention over the key/value heads repeated with repeat_interleave: query head h must "
    "read key/value head h // (H // Hkv).",
    "fail.lm_gqa_future_grad": "the output of query {query} has a non-zero gradient with respect to {input} at "
    "positions >= {future_from}, which it must not see: the attention weights on later "
    "keys must be exactly 0 (fill the blocked scores with -inf before the softmax).",
    # -- kv_cache -------------------------------------------------------------------------------------
    "fail.lm_cache_not_empty": "a new KVCache() must have keys = None and values = None.",
    "fail.lm_cache_length": "after call {step} the cache's length is {got}, expected {expected} (the number of "
    "positions it holds, the size of dim 2).",
    "fail.lm_cache_none": "{what} is None after update {update}; it must hold every position seen so far.",
    # -- attention ------------------------------------------------------------------------------------
    "fail.lm_attn_value_error": "CausalSelfAttention(dim={dim}, num_heads={num_heads}, num_kv_heads={num_kv_heads}) "
    "raised {raised}; expected ValueError (num_heads must divide dim, num_kv_heads must "
    "divide num_heads, and the head size must be even).",
    "fail.lm_attn_cache_heads": "the cache holds {heads} key heads; it must hold the {kv_heads} key/value heads "
    "before any repetition (that saving is the point of grouped-query attention).",
    "fail.lm_attn_cache_unrotated": "the cache holds the keys before RoPE; store them after the rotation, so that "
    "later steps can use them as they are.",
    # -- block ----------------------------------------------------------------------------------------
    "fail.lm_block_residual": "with both branches' output projections zero, DecoderBlock did not return its input: "
    "in a pre-norm block only the branch inputs are normalised; the residual adds x "
    "itself (h = x + attn(attn_norm(x)), then h + ffn(ffn_norm(h))).",
    # -- model ----------------------------------------------------------------------------------------
    "fail.lm_not_tied": "lm_head.weight and embed.weight must be one tensor (tied: self.lm_head.weight = "
    "self.embed.weight); shared groups found: {groups}.",
    "fail.lm_tied_name": "named_parameters() lists the tied weight under another name; it must be listed once, as "
    "embed.weight (found {names}): build embed before lm_head and assign the embedding's "
    "parameter to the head.",
    "fail.lm_default_shapes": "the parameters {names} have other shapes than with the defaults passed (their shapes "
    "then in brackets; missing: None).",
    "fail.lm_init_norm": "{name} must start at ones.",
    "fail.lm_init_std": "{name} starts with std {std} and mean {mean}; every nn.Linear weight and the embedding "
    "must start N(0, 0.02^2) (nn.init.normal_(w, mean=0.0, std=0.02)).",
    "fail.lm_init_normal": "the linear and embedding weights have std 0.02 but {fraction} of their entries lie beyond "
    "2 std, where a normal law puts 0.0455: draw them from a normal law "
    "(nn.init.normal_), not a uniform or truncated one.",
    "fail.lm_embed_scaled": "the first block does not receive the embedding rows themselves (norm ratio {ratio}, "
    "dim = {dim}): this model does not scale the embeddings by sqrt(dim) nor add positions "
    "(RoPE places the tokens).",
    "fail.lm_new_cache": "new_cache() must return a list of {layers} empty KVCache (one per layer); got {count}, or "
    "not all empty.",
    "fail.lm_cache_not_used": "after decoding step {step} the caches' lengths are {lengths}, expected {expected} for "
    "every layer: pass caches[i] to layers[i].",
    "fail.lm_step_work": "at decoding step {step} the layers received inputs of shapes {shapes}; with caches only the "
    "new token ({expected}) goes through the layers.",
    # -- param_count ----------------------------------------------------------------------------------
    "fail.lm_param_count": "count_parameters returned {got}, off by {difference} from the model's parameter count "
    "(the tied embedding counts once; k_proj and v_proj have num_kv_heads heads).",
}
