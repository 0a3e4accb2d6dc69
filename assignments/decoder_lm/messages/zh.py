"""zh sentences of the decoder-only LM (its modules: rmsnorm ... model, param_count)."""

MESSAGES = {
    # -- rmsnorm --------------------------------------------------------------------------------------
    "fail.lm_rms_init": "RMSNorm 的 weight 初始值必须全为 1。",
    "fail.lm_rms_centred": "RMSNorm 的输出等于先减去每个向量的均值后的结果：RMSNorm 不做中心化，"
    "应直接用 x 除以 sqrt(mean(x^2) + eps)。",
    "fail.lm_rms_eps_outside": "RMSNorm 的输出是 x / (sqrt(mean(x^2)) + eps)：eps 应放在平方根里面，"
    "即 x / sqrt(mean(x^2) + eps)。",
    "fail.lm_rms_scale": "当 a = {factor} 时 {what}(a x) 与 {what}(x) 不同：输出不应依赖输入的尺度"
    "（应除以均方的平方根，而不是均方本身）。",
    # -- rope -----------------------------------------------------------------------------------------
    "fail.lm_rope_odd": "RotaryEmbedding(head_dim={head_dim}) 抛出了 {raised}；奇数的 head_dim 无法两两配对，"
    "应抛出 ValueError。",
    "fail.lm_rope_interleaved": "RotaryEmbedding 把坐标 i 与 i xor 1 配对（论文中的相邻配对 (2i, 2i + 1)）；"
    "约定要求 i 与 i + Dh/2 配对（前后两半配对，与 Llama 相同）："
    "rotate_half(x) = cat([-x2, x1])，x1、x2 为前后两半。",
    "fail.lm_rope_pairing": "RotaryEmbedding 把单位向量 e_{coordinate} 变到了坐标 {found} 上；"
    "按前后两半配对，它只应在坐标 {expected} 构成的平面内旋转。",
    "fail.lm_rope_norm": "RotaryEmbedding 改变了位置 {position} 上向量的范数：每一对坐标必须做旋转"
    "（同一个角度的 cos 与 sin，符号按约定）。",
    "fail.lm_rope_relative": "把所有位置平移 {shift} 之后，旋转后的查询与键的点积变了：它们只应依赖两个位置之间的距离"
    "（一对坐标共用同一个角度，旋转的符号按约定）。",
    "fail.lm_rope_offset": "forward(x, offset={offset}) 与把同样的行放在更长输入的第 {offset} 个位置起旋转的结果不同："
    "第 l 行应按位置 offset + l 的角度旋转。",
    # -- swiglu ---------------------------------------------------------------------------------------
    "fail.lm_swiglu_swapped": "SwiGLU 把 silu 作用在了 up_proj(x) 上再乘以 gate_proj(x)：gate 与 up 弄反了。"
    "输出应为 down_proj(silu(gate_proj(x)) * up_proj(x))。",
    # -- gqa ------------------------------------------------------------------------------------------
    "fail.lm_gqa_tiled": "在 {heads} 个查询头、{kv_heads} 个键值头时，查询头 h 读取了键值头 h % {kv_heads}"
    "（repeat 是整体平铺）；它应读取键值头 h // (H // Hkv)：相邻的查询头共享同一个键值头"
    "（repeat_interleave）。",
    "fail.lm_gqa_grouping": "在 {heads} 个查询头、{kv_heads} 个键值头时，输出与用 repeat_interleave 复制键值头后的"
    "注意力不同：查询头 h 应读取键值头 h // (H // Hkv)。",
    "fail.lm_gqa_future_grad": "查询 {query} 的输出对 {input} 在位置 >= {future_from} 处的梯度不为零，而它不应看到这些位置："
    "对后面的键的注意力权重必须恰好为 0（在 softmax 之前用 -inf 填充被屏蔽的分数）。",
    # -- kv_cache -------------------------------------------------------------------------------------
    "fail.lm_cache_not_empty": "新建的 KVCache() 必须满足 keys = None 且 values = None。",
    "fail.lm_cache_length": "第 {step} 次调用之后缓存的 length 为 {got}，应为 {expected}（缓存中的位置数，即第 2 维的大小）。",
    "fail.lm_cache_none": "第 {update} 次更新之后 {what} 为 None；它应保存到目前为止的所有位置。",
    # -- attention ------------------------------------------------------------------------------------
    "fail.lm_attn_value_error": "CausalSelfAttention(dim={dim}, num_heads={num_heads}, num_kv_heads={num_kv_heads}) "
    "抛出了 {raised}；应抛出 ValueError（num_heads 必须整除 dim，num_kv_heads 必须整除 "
    "num_heads，且每个头的维度必须为偶数）。",
    "fail.lm_attn_cache_heads": "缓存中保存了 {heads} 个键头；应保存复制之前的 {kv_heads} 个键值头"
    "（这正是分组查询注意力节省显存之处）。",
    "fail.lm_attn_cache_unrotated": "缓存中保存的是 RoPE 之前的键；应保存旋转之后的键，以便后续步骤直接使用。",
    # -- block ----------------------------------------------------------------------------------------
    "fail.lm_block_residual": "两个分支的输出投影都为零时，DecoderBlock 没有原样返回输入：在 pre-norm 块中只对分支的输入做"
    "归一化，残差加的是 x 本身（h = x + attn(attn_norm(x))，然后 h + ffn(ffn_norm(h))）。",
    # -- model ----------------------------------------------------------------------------------------
    "fail.lm_not_tied": "lm_head.weight 与 embed.weight 必须是同一个张量（权重共享：self.lm_head.weight = "
    "self.embed.weight）；找到的共享组：{groups}。",
    "fail.lm_tied_name": "named_parameters() 以另一个名字列出了共享的权重；它应只以 embed.weight 出现一次"
    "（找到 {names}）：先构建 embed 再构建 lm_head，并把嵌入的参数赋给输出头。",
    "fail.lm_default_shapes": "参数 {names} 的形状与显式传入默认值时不同（括号里是显式传入时的形状；None 表示没有该参数）。",
    "fail.lm_init_norm": "{name} 的初始值必须全为 1。",
    "fail.lm_init_std": "{name} 初始的标准差为 {std}、均值为 {mean}；所有 nn.Linear 的权重和嵌入都应按 N(0, 0.02^2) 初始化"
    "（nn.init.normal_(w, mean=0.0, std=0.02)）。",
    "fail.lm_init_normal": "线性层和嵌入的权重标准差为 0.02，但有 {fraction} 的元素超出 2 倍标准差，正态分布应约为 0.0455："
    "请从正态分布采样（nn.init.normal_），而不是均匀分布或截断分布。",
    "fail.lm_embed_scaled": "第一个块收到的不是嵌入向量本身（范数之比 {ratio}，dim = {dim}）：本模型不把嵌入乘以 "
    "sqrt(dim)，也不加位置表（位置由 RoPE 给出）。",
    "fail.lm_new_cache": "new_cache() 应返回 {layers} 个空的 KVCache 组成的列表（每层一个）；实际得到 {count} 个，"
    "或并非全部为空。",
    "fail.lm_cache_not_used": "解码第 {step} 步之后各层缓存的长度为 {lengths}，每层都应为 {expected}："
    "请把 caches[i] 传给 layers[i]。",
    "fail.lm_step_work": "解码第 {step} 步时各层收到的输入形状为 {shapes}；使用缓存时只有新的词元（{expected}）经过各层。",
    # -- param_count ----------------------------------------------------------------------------------
    "fail.lm_param_count": "count_parameters 返回 {got}，与模型的参数量相差 {difference}"
    "（共享的嵌入只计一次；k_proj 和 v_proj 只有 num_kv_heads 个头）。",
}
