"""zh sentences of the decoder-only LM's report pictures (``assignments/decoder_lm/figures.py``)."""

MESSAGES = {
    # -- attention ------------------------------------------------------------------------------------
    "lm.fig.attention_title": "因果注意力权重",
    "lm.fig.attention_note": "用一句诗的每个字构造的随机 query 和 key 向量，单个注意力头。value 取单位矩阵，所以 "
    "causal_attention 的输出就是它的权重。带斜线的格子是之后的位置，因果规则屏蔽它们："
    "那里的权重必须恰好为 0。这句诗：",
    "lm.fig.attention_yours": "你的 causal_attention",
    "lm.fig.attention_reference": "参考实现",
    "lm.fig.axis_key": "键（被关注的位置）",
    "lm.fig.axis_query": "查询",
    "lm.fig.attention_legend": "权重",
    "lm.fig.attention_blocked": "之后的位置（被屏蔽）",
    "lm.fig.attention_same": "你的权重与参考实现一致。",
    "lm.fig.attention_differs": "你的权重与参考实现最多相差 {diff}。",
    "lm.fig.attention_leaks": "你的权重在 {total} 个带斜线的格子中有 {count} 个不为 0：这些 query 看到了之后的位置。",
    "lm.fig.not_tensor": "{what} 返回了 {got}，应当返回张量。",
    # -- RoPE: scores ---------------------------------------------------------------------------------
    "lm.fig.rope_scores_title": "RoPE：一个 query 与一个 key 在每对位置上的得分",
    "lm.fig.rope_scores_note": "一个随机 query 向量 q 和一个随机 key 向量 k（head 大小 {head_dim}），由你的 "
    "RotaryEmbedding 旋转到 0 到 {last} 的每个位置。第 m 行第 n 列的格子是位置 m 上的 q "
    "与位置 n 上的 k 的点积。RoPE 让它只取决于距离 m − n，所以每条对角线（从左上到右下）"
    "只有一种颜色。query 一次旋转完；key 每次 {chunk} 个，offset 依次为 {offsets}，"
    "和 KV 缓存送入的方式一样：忽略 offset 的 RoPE 每 {chunk} 列重复一次。",
    "lm.fig.rope_yours": "你的 RotaryEmbedding",
    "lm.fig.rope_reference": "参考实现",
    "lm.fig.rope_axis_key": "key 位置 n",
    "lm.fig.rope_axis_query": "query 位置 m",
    "lm.fig.rope_legend": "得分",
    "lm.fig.rope_diagonals_constant": "你的每条对角线上只有一个值：得分只取决于 m − n。",
    "lm.fig.rope_diagonals_broken": "你的得分沿同一条对角线最多变化 {spread}：它取决于位置本身，而不只是距离 m − n。",
    "lm.fig.rope_nonfinite": "你的部分得分是 NaN 或 inf（灰色格子）。",
    "lm.fig.rope_same": "你的得分与参考实现一致。",
    "lm.fig.rope_differs": "你的得分与参考实现最多相差 {diff}。",
    # -- RoPE: angles ---------------------------------------------------------------------------------
    "lm.fig.rope_angles_title": "RoPE：每对坐标转过的角度",
    "lm.fig.rope_angles_note": "每个单位向量 e_i（head 大小 {head_dim}）由你的 RotaryEmbedding 旋转后，在坐标 i 与 "
    "i + {half} 构成的平面内转过的角度（度；前后两半配对）：位置 0 到 {run} 一次调用，"
    "位置 {far} 各调用一次、offset 取该位置。在位置 p，第 i 对转过 p·θ_i，"
    "θ_i = base^(−2i/{head_dim})：前面几对转得快，后面几对要到很远的位置才转得明显。"
    "带斜线的格子表示向量离开了这个平面：用了别的配对，例如交错配对 (2i, 2i + 1)。",
    "lm.fig.axis_position": "位置",
    "lm.fig.rope_axis_pair": "第 i 对（坐标 i 与 i + {half}）",
    "lm.fig.rope_angle_legend": "角度（°）",
    "lm.fig.rope_off_plane": "离开了 i 与 i + {half} 的平面",
    "lm.fig.rope_angles_off_plane": "在 {total} 个格子中有 {count} 个，你的旋转把 e_i 移出了坐标 i 与 i + {half} "
    "的平面：应当把 i 与 i + {half} 配对。",
    "lm.fig.rope_angles_same": "你的角度与参考实现一致。",
    "lm.fig.rope_angles_differ": "你的角度与参考实现最多相差 {diff}°：检查频率 θ_i 和旋转方向。",
}
