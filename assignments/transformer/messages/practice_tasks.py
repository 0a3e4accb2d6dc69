"""The drills' task text in Chinese: the skeleton's docstrings, translated (``practice.TASK_TEXTS``).

The English task text is the skeleton itself, so these are not catalogue sentences (a ``<part>_<lang>`` module
would need an English twin that copies the skeleton). Each text keeps the skeleton's sections, with the
headers in Chinese (``参数：``, ``返回：``, and ``提示：``, the ``practice.doc.hints`` header that no-hints mode
removes), and every double-backquoted span of the English one unchanged: ``tests/integration/test_practice.py`` compares
them.
"""

ZH = {
    "scaled_dot_product_attention": """
        让每个查询位置注意到每个键位置。

        参数：
            query: ``[..., Lq, Dk]``。
            key: ``[..., Lk, Dk]``。
            value: ``[..., Lk, Dv]``。
            mask: 可选的 bool 保留掩码，可广播到 ``[..., Lq, Lk]``；
                ``True`` = 可以注意，``False`` = 屏蔽。
            dropout: 可选的 ``nn.Dropout``，作用在注意力权重上，
                在权重乘以 ``value`` 之前。

        返回：
            ``(output [..., Lq, Dv], weights [..., Lq, Lk])``：权重是沿键做的
            softmax(q kᵀ / √Dk)，被屏蔽处恰好为 0，并且就是与 ``value`` 相乘的
            那份权重（如有 dropout，则是 dropout 之后的）。

        提示：
            按*键*的维度（``query`` 的最后一维）开平方来缩放，不是按 d_model。
            在 softmax 之前把被屏蔽的分数填成很小的负数，绝不能填 0。softmax
            沿最后一维（键）做。
        """,
    "MultiHeadAttention": """
        H 个大小为 Dh = D / H 的注意力头，并行计算后合并。

        参数：
            d_model: 模型宽度 D。
            num_heads: 头数 H；必须整除 ``d_model``
                （否则抛出 ``ValueError``）。
            dropout: 注意力权重上的 dropout 概率。

        参数矩阵 ``w_q``、``w_k``、``w_v``、``w_o``：带偏置的 ``nn.Linear(D, D)``。

        ``forward(query [B, Lq, D], key [B, Lk, D], value [B, Lk, D], mask=None)``
        返回 ``[B, Lq, D]``。``mask`` 是 bool 保留掩码，四维
        ``[B or 1, 1, Lq or 1, Lk]`` 或二维 ``[Lq, Lk]``。

        提示：
            用 ``view(B, L, H, Dh).transpose(1, 2)`` 拆分头：只用 view
            （不 transpose）会把位置和头混在一起。合并回去时先
            ``transpose(1, 2)``，再 ``contiguous()``，然后 ``view``
            （或直接 ``reshape``）。别忘了输出投影 ``w_o``。
        """,
    "TokenEmbedding": """
        为每个词元查出一个向量，并乘以 √D。

        参数：
            vocab_size: V，词元 id 的个数。
            d_model: D，向量的大小。

        参数 ``embed``：``nn.Embedding(V, D)``。
        ``forward(tokens [B, L] long)`` 返回 ``[B, L, D]``。

        提示：
            乘以 √D（``math.sqrt(d_model)``），不是乘以 D：这个缩放让嵌入
            与位置编码表处在同一量级。
        """,
    "PositionalEncoding": """
        加上固定的正弦位置编码表，再做 dropout。

        参数：
            d_model: D，偶数。
            max_len: 表能覆盖的最长序列。
            dropout: 相加之后的 dropout 概率。

        这张表放在名为 ``pe`` 的 buffer（不是参数）里，形状为
        ``[1, max_len, D]``，所以它会跟着 ``.to()`` 移动，且从不参与训练。
        ``forward(x [B, L, D])`` 返回 ``dropout(x + pe[:, :L])``。

        提示：
            偶数列（0, 2, 4, ...）用 sin，奇数列用 cos，第 (2i, 2i+1) 两列
            共用一个频率 1 / 10000^(2i/D)。位置从 0 开始。
            ``register_buffer`` 才能让一个张量成为 buffer。
        """,
    "LayerNorm": """
        把每个向量归一化为零均值、单位方差，再缩放和平移。

        参数：
            d_model: D，最后一维的大小。
            eps: 加在方差上，位于平方根*里面*。

        参数 ``weight``（全 1）和 ``bias``（全 0），形状都是 ``[D]``。
        ``forward(x [..., D])`` 返回形状相同的张量。

        提示：
            ``x.var(-1)`` 默认是无偏的（除以 D - 1）：要传
            ``unbiased=False``，或自己求偏差平方的均值。
            保留被约简的维度（``keepdim=True``），才能广播。
        """,
    "FeedForward": """
        两个线性变换，中间夹一个非线性。

        参数：
            d_model: D，输入和输出的大小。
            d_ff: F，隐藏层大小。
            dropout: 激活之后的 dropout 概率。
            activation: ``"relu"`` 或 ``"gelu"``（基于 erf 的精确 GELU）。

        参数 ``linear1``：``nn.Linear(D, F)``，``linear2``：``nn.Linear(F, D)``。
        ``forward(x [..., D])`` 返回 ``linear2(dropout(act(linear1(x))))``。

        提示：
            激活函数位于两个线性层之间；没有它，整个网络会退化成一个线性
            变换。``F.gelu`` 默认就是精确 GELU（``approximate="none"``）。
        """,
    "padding_mask": """
        屏蔽填充的*键*。

        参数：
            tokens: ``[B, L]`` 词元 id。
            pad_idx: 填充 id。

        返回：
            bool ``[B, 1, 1, L]``，在 ``tokens != pad_idx`` 处为 ``True``。两个
            长度为 1 的维度在头和查询位置上广播。

        提示：
            填充屏蔽的是键（最后一维），不是查询。
        """,
    "causal_mask": """
        让位置 i 看到位置 0..i，看不到之后的位置。

        参数：
            size: 序列长度 L。
            device: 在哪个设备上构造掩码。

        返回：
            bool ``[1, 1, L, L]``，对角线及其下方为 ``True``。

        提示：
            位置总能看到自己（对角线为 ``True``）。
            在 ``device`` 上构造掩码：放在 CPU 上的掩码遇到 GPU 上的输入
            会出错。
        """,
    "target_mask": """
        解码器自注意力的掩码：不看填充的键，也不看未来。

        参数：
            tgt: ``[B, L]`` 目标词元 id。
            pad_idx: 填充 id。

        返回：
            bool ``[B, 1, L, L]`` = ``padding_mask(tgt) & causal_mask(L)``，位于
            ``tgt.device`` 上。
        """,
    "EncoderLayer": """
        先自注意力，再前馈，每一步都带残差 + 归一化。

        参数：
            d_model: D。
            num_heads: H。
            d_ff: F，前馈的隐藏层大小。
            dropout: dropout 概率（注意力权重、前馈、残差）。
            norm_first: ``False`` 为 Post-LN（论文做法），``True`` 为 Pre-LN。
            activation: ``"relu"`` 或 ``"gelu"``。

        子模块 ``self_attn``（MultiHeadAttention）、``ffn``（FeedForward）、
        ``norm1``、``norm2``（LayerNorm）。
        ``forward(x [B, L, D], mask=None)`` 返回 ``[B, L, D]``。

        提示：
            Post-LN：``x = norm1(x + drop(self_attn(x, x, x, mask)))``，然后
            ``x = norm2(x + drop(ffn(x)))``。Pre-LN：``n = norm1(x)``，
            ``x = x + drop(self_attn(n, n, n, mask))``，然后
            ``x = x + drop(ffn(norm2(x)))``。保留残差：把输入加回来。
        """,
    "DecoderLayer": """
        带掩码的自注意力、对编码器的交叉注意力、前馈。

        参数：
            d_model: D。
            num_heads: H。
            d_ff: F。
            dropout: dropout 概率。
            norm_first: ``False`` 为 Post-LN，``True`` 为 Pre-LN。
            activation: ``"relu"`` 或 ``"gelu"``。

        子模块 ``self_attn``、``cross_attn``、``ffn``、``norm1``、``norm2``、``norm3``。
        ``forward(x [B, Lt, D], memory [B, Ls, D], tgt_mask=None, memory_mask=None)``
        返回 ``[B, Lt, D]``。

        提示：
            交叉注意力的查询来自 ``x``，键和值来自 ``memory``，掩码用
            ``memory_mask``。Pre-LN 只归一化查询这一侧，从不归一化 ``memory``。
        """,
    "Encoder": """
        嵌入，加上位置，再经过 ``num_layers`` 个编码器层。

        参数：
            vocab_size: 源词表大小。
            d_model, num_heads, d_ff, num_layers: 各项尺寸。
            max_len: 位置编码表覆盖的最长序列。
            dropout: dropout 概率。
            norm_first: 为 ``True`` 时是 Pre-LN；此时最后一层之后还有一个 ``norm``。
            activation: ``"relu"`` 或 ``"gelu"``。

        子模块 ``embed``（TokenEmbedding）、``pos_enc``（PositionalEncoding）、
        ``layers``（EncoderLayer 组成的 ``nn.ModuleList``）和 ``norm``（LayerNorm），
        最后这个只在 ``norm_first`` 时存在。
        ``forward(src [B, Ls] long, src_mask=None)`` 返回 ``memory [B, Ls, D]``。

        提示：
            堆叠中的每个位置都要新建一层：``[layer] * N`` 只是对同一层的
            N 个引用，它们共享权重。
        """,
    "Decoder": """
        嵌入，加上位置，再在 memory 上经过 ``num_layers`` 个解码器层。

        参数：与 ``Encoder`` 相同，``vocab_size`` 是目标词表大小。

        子模块 ``embed``、``pos_enc``、``layers``（DecoderLayer 组成的
        ``nn.ModuleList``），以及只在 ``norm_first`` 时存在的 ``norm``。
        ``forward(tgt [B, Lt] long, memory [B, Ls, D], tgt_mask=None, memory_mask=None)``
        返回 ``[B, Lt, D]``。
        """,
    "Transformer": """
        编码器、解码器，以及把输出投影到目标词表 logits 的输出层。

        参数：
            src_vocab_size, tgt_vocab_size: 词表大小。
            d_model, num_heads, d_ff, num_layers, max_len, dropout, norm_first,
            activation: 与 ``Encoder`` 相同。

        子模块 ``encoder``、``decoder``、``output_proj``：``nn.Linear(D, V_tgt)``。
        所有维数大于 1 的参数都以 Xavier 均匀分布初始化。

        ``encode(src, src_mask=None)`` 返回 ``memory [B, Ls, D]``；
        ``decode(tgt, memory, tgt_mask=None, memory_mask=None)`` 返回 ``[B, Lt, D]``；
        ``forward(src, tgt, src_mask=None, tgt_mask=None)`` 返回
        ``logits [B, Lt, V_tgt]``；``src_mask`` 同时也是解码器的 ``memory_mask``。

        提示：
            返回 logits，不是概率：softmax 由损失函数来做。
        """,
    "greedy_decode": """
        对一批序列做贪心解码。

        参数：
            model: 一个 ``Transformer``（用到 ``encode``、``decode`` 和 ``output_proj``）。
            src: ``[B, Ls]`` 源词元 id。
            max_len: 最多生成多少个新词元。
            bos_idx, eos_idx, pad_idx: 特殊词元 id。

        返回：
            long ``[B, 1 + T]``，其中 ``T <= max_len``：第 0 列是 ``bos_idx``；
            某一行生成 EOS 之后，该行其余位置为 ``pad_idx``。

        提示：
            下一个词元取自*最后一个*位置的 logits（``logits[:, -1]``）。
            源序列只编码一次，放在循环外。记录哪些行已经结束。
        """,
    "sequence_loss": """
        词元交叉熵的平均值，忽略填充的目标。

        参数：
            logits: ``[B, L, V]`` 未归一化的分数。
            targets: ``[B, L]`` 词元 id。
            pad_idx: 等于这个 id 的目标不计入。
            label_smoothing: 含义同 ``F.cross_entropy(label_smoothing=...)``。

        返回：
            一个标量张量。

        提示：
            只在真实（非填充）词元上取平均：填充既不能增加损失，也不能
            稀释平均值。
        """,
    "noam_lr": """
        "Attention Is All You Need" 的学习率：先线性预热，再按 1/√step 衰减。

        参数：
            step: 优化器步数（0 按 1 处理）。
            d_model: D。
            warmup_steps: 线性预热的步数。
            factor: 整体缩放系数。

        返回：
            ``factor * D**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)``，类型为 float。
        """,
    "train_step": """
        用教师强制做一步优化。

        参数：
            model: 一个 ``Transformer``。
            src: ``[B, Ls]`` 源 id。
            tgt: ``[B, Lt]`` 目标 id，BOS ... EOS，用 ``pad_idx`` 填充。
            optimizer: 任意作用于模型参数的 ``torch.optim`` 优化器。
            pad_idx: 填充 id。
            label_smoothing: 传给 ``sequence_loss``。
            max_grad_norm: 给定时，把梯度的总范数裁剪到这个值。

        返回：
            更新之前的损失，Python float。

        提示：
            解码器输入 ``tgt[:, :-1]``，目标 ``tgt[:, 1:]``。在 ``backward()``
            之前把梯度清零。两个掩码都用 ``masks.py`` 构造。
        """,
    "count_parameters": """
        ``Transformer(...)`` 的参数个数，按公式计算。

        参数：``Transformer`` 的各项尺寸（``num_heads`` 不影响参数量）。

        返回：
            一个 ``int``，不构建模型。

        提示：
            偏置和 LayerNorm 的两个向量都要算。每个模块：
            注意力 4·(D² + D)，前馈 2·D·F + F + D，LayerNorm 2·D。
            Pre-LN 在每个堆叠末尾多一个 LayerNorm。
        """,
}
