"""en sentences of the decoder-only LM's report pictures (``assignments/decoder_lm/figures.py``)."""

MESSAGES = {
    # -- attention ------------------------------------------------------------------------------------
    "lm.fig.attention_title": "Causal attention weights",
    "lm.fig.attention_note": "Made-up query and key vectors for the characters of one line of a poem, one head. The "
    "values are the identity matrix, so what causal_attention returns is its weights. "
    "Hatched cells are later positions, which the causal rule blocks: their weights must "
    "be exactly 0. The line:",
    "lm.fig.attention_yours": "Your causal_attention",
    "lm.fig.attention_reference": "Reference",
    "lm.fig.axis_key": "key (attended to)",
    "lm.fig.axis_query": "query",
    "lm.fig.attention_legend": "weight",
    "lm.fig.attention_blocked": "a later position (blocked)",
    "lm.fig.attention_same": "Your weights match the reference's.",
    "lm.fig.attention_differs": "Your weights differ from the reference's by up to {diff}.",
    "lm.fig.attention_leaks": "{count} of the {total} hatched cells of your weights are not 0: those queries "
    "see later positions.",
    "lm.fig.not_tensor": "{what} returned {got}, expected a tensor.",
    # -- RoPE: scores ---------------------------------------------------------------------------------
    "lm.fig.rope_scores_title": "RoPE: a query and a key at every pair of positions",
    "lm.fig.rope_scores_note": "One random query vector q and one random key vector k (head size {head_dim}), "
    "rotated by your RotaryEmbedding to every position 0 to {last}. The cell in row m, "
    "column n is the dot product of q at position m with k at position n. RoPE makes it "
    "depend only on the distance m − n, so each diagonal (top left to bottom right) has "
    "one colour. The queries are rotated in one call, the keys {chunk} at a time with "
    "offset {offsets}, as a KV cache feeds them: a RoPE that ignores the offset repeats "
    "itself every {chunk} columns.",
    "lm.fig.rope_yours": "Your RotaryEmbedding",
    "lm.fig.rope_reference": "Reference",
    "lm.fig.rope_axis_key": "key position n",
    "lm.fig.rope_axis_query": "query position m",
    "lm.fig.rope_legend": "score",
    "lm.fig.rope_diagonals_constant": "Each of your diagonals has one value: the score depends only on m − n.",
    "lm.fig.rope_diagonals_broken": "Your scores change along a diagonal by up to {spread}: they depend on the "
    "positions themselves, not only on their distance m − n.",
    "lm.fig.rope_nonfinite": "Some of your scores are NaN or inf (grey cells).",
    "lm.fig.rope_same": "Your scores match the reference's.",
    "lm.fig.rope_differs": "Your scores differ from the reference's by up to {diff}.",
    # -- RoPE: angles ---------------------------------------------------------------------------------
    "lm.fig.rope_angles_title": "RoPE: the angle each pair turns by",
    "lm.fig.rope_angles_note": "Each unit vector e_i (head size {head_dim}) rotated by your RotaryEmbedding: the "
    "angle, in degrees, it turns within the plane of coordinates i and i + {half} (the "
    "half-split pairs), at positions 0 to {run} (one call) and at {far} (each one call "
    "with that offset). At position p, pair i turns by p·θ_i with "
    "θ_i = base^(−2i/{head_dim}): the first pairs turn fast, the last ones only far out. "
    "A hatched cell is a vector that left that plane: another pairing, such as the "
    "interleaved pairs (2i, 2i + 1).",
    "lm.fig.axis_position": "position",
    "lm.fig.rope_axis_pair": "pair i (coordinates i and i + {half})",
    "lm.fig.rope_angle_legend": "angle (°)",
    "lm.fig.rope_off_plane": "left the plane of i and i + {half}",
    "lm.fig.rope_angles_off_plane": "In {count} of {total} cells your rotation moved e_i out of the plane of "
    "coordinates i and i + {half}: pair i with i + {half}.",
    "lm.fig.rope_angles_same": "Your angles match the reference's.",
    "lm.fig.rope_angles_differ": "Your angles differ from the reference's by up to {diff}°: check the frequencies "
    "θ_i and the direction of the turn.",
}
