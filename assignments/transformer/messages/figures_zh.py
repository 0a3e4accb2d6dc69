"""zh sentences of the Transformer's report pictures (``assignments/transformer/figures.py``)."""

MESSAGES = {
    # -- attention ------------------------------------------------------------------------------------
    "transformer.fig.attention_title": "注意力权重",
    "transformer.fig.attention_note": "用语料中一个句子的音节构造的随机 query 和 key 向量，双方各用自己的 causal_mask"
    "（带斜线的格子被屏蔽）：",
    "transformer.fig.attention_yours": "你的 scaled_dot_product_attention",
    "transformer.fig.attention_reference": "参考实现",
    "transformer.fig.axis_key": "键（被关注的位置）",
    "transformer.fig.axis_query": "查询",
    "transformer.fig.attention_legend": "权重",
    "transformer.fig.attention_blocked": "被掩码屏蔽",
    "transformer.fig.attention_mask_differs": "你的 causal_mask({size}) 屏蔽的位置与参考实现不同：{total} 个元素中有 "
    "{count} 个不一致（对比带斜线的格子）。",
    "transformer.fig.mask_not_implemented": "你的 causal_mask 还没有实现，所以这里用参考实现的掩码画出你的注意力。",
    "transformer.fig.mask_returned": "它返回了 {got}，而不是张量",
    "transformer.fig.mask_dtype": "它返回的 dtype 是 {dtype}，不是 bool",
    "transformer.fig.mask_shape": "它的形状 {shape} 无法广播到 {expected}",
    "transformer.fig.mask_failed": "你的 causal_mask 无法使用（{detail}），所以这里用参考实现的掩码画出你的注意力。",
    "transformer.fig.attention_same": "你的权重与参考实现一致。",
    "transformer.fig.attention_differs": "你的权重与参考实现最多相差 {diff}。",
    # -- positional encoding --------------------------------------------------------------------------
    "transformer.fig.pe_title": "位置编码表",
    "transformer.fig.pe_caption": "PositionalEncoding(d_model={d_model}, max_len={max_len}) 的 buffer pe："
    "每行是一个位置，每列是一个维度。",
    "transformer.fig.axis_position": "位置",
    "transformer.fig.axis_dimension": "维度",
    "transformer.fig.pe_legend": "数值",
    "transformer.fig.pe_reference_note": "你的位置编码表无法构建，这里显示的是参考实现的表，供对照。",
    "transformer.fig.no_pe": "PositionalEncoding 没有名为 'pe' 的 buffer（找到的 buffer：{found}）。",
}
