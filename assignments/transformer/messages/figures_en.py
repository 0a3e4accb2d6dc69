"""en sentences of the Transformer's report pictures (``assignments/transformer/figures.py``)."""

MESSAGES = {
    # -- attention ------------------------------------------------------------------------------------
    "transformer.fig.attention_title": "Attention weights",
    "transformer.fig.attention_note": "Made-up query and key vectors for the syllables of one corpus sentence, each "
    "side under its own causal_mask (hatched cells are blocked):",
    "transformer.fig.attention_yours": "Your scaled_dot_product_attention",
    "transformer.fig.attention_reference": "Reference",
    "transformer.fig.axis_key": "key (attended to)",
    "transformer.fig.axis_query": "query",
    "transformer.fig.attention_legend": "weight",
    "transformer.fig.attention_blocked": "blocked by the mask",
    "transformer.fig.attention_mask_differs": "Your causal_mask({size}) blocks other positions than the reference's: "
    "{count} of {total} entries differ (compare the hatched cells).",
    "transformer.fig.mask_not_implemented": "Your causal_mask is not implemented yet, so your attention is drawn under "
    "the reference's mask.",
    "transformer.fig.mask_failed": "Your causal_mask could not be used ({detail}), so your attention is drawn under "
    "the reference's mask.",
    "transformer.fig.mask_returned": "it returned {got}, not a tensor",
    "transformer.fig.mask_dtype": "it returned dtype {dtype}, not bool",
    "transformer.fig.mask_shape": "its shape {shape} does not broadcast to {expected}",
    "transformer.fig.attention_same": "Your weights match the reference's.",
    "transformer.fig.attention_differs": "Your weights differ from the reference's by up to {diff}.",
    # -- positional encoding --------------------------------------------------------------------------
    "transformer.fig.pe_title": "Positional-encoding table",
    "transformer.fig.pe_caption": "PositionalEncoding(d_model={d_model}, max_len={max_len}): the buffer pe, one row "
    "per position, one column per dimension.",
    "transformer.fig.axis_position": "position",
    "transformer.fig.axis_dimension": "dimension",
    "transformer.fig.pe_legend": "value",
    "transformer.fig.pe_reference_note": "Your table could not be built, so this is the reference's table, for "
    "comparison.",
    "transformer.fig.no_pe": "PositionalEncoding has no buffer named 'pe' (buffers found: {found}).",
}
