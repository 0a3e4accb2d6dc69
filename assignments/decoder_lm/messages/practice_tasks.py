"""The drills' task text in Chinese: the skeleton's docstrings, translated (``practice.TASK_TEXTS``).

The English task text is the skeleton itself, so these are not catalogue sentences (a ``<part>_<lang>`` module
would need an English twin that copies the skeleton). Each text keeps the skeleton's sections, with the
headers in Chinese (``参数：``, ``返回：``, and ``提示：``, the ``practice.doc.hints`` header that no-hints mode
removes), and every double-backquoted span of the English one unchanged: ``tests/corpus/test_lm_practice.py``
compares them.
"""

ZH = {
    "RMSNorm": """
        把每个向量缩放到均方根为 1，再乘以逐特征可学习的 ``weight``。

        参数：
            dim: 最后一维的大小 D。
            eps: 加在均方上，位于平方根之内（默认 ``1e-6``）。

        参数 ``weight``：形状 ``[D]``，初始为 1。没有偏置。

        ``forward(x [..., D]) -> [..., D]``，保持 ``x`` 的 dtype 和设备。

        提示：
            平方的均值只沿最后一维求（用 ``keepdim=True`` 以便广播回去）。
            半精度输入平方后会溢出：至少用 ``float32`` 计算，再把结果转回输入的 dtype。
        """,
    "RotaryEmbedding": """
        按随位置增长的角度旋转每个头向量。

        参数：
            head_dim: 一个头的大小 Dh；必须是偶数（否则抛出 ``ValueError``）。
            base: 波长的底数（默认 ``10000.0``）：θ_i = base^(-2i/Dh)。

        没有参数。``forward(x [..., L, Dh], offset=0) -> [..., L, Dh]`` 把第 ``l`` 行（倒数第二维）
        按位置 ``offset + l`` 的角度旋转；配对方式为前后半配对：坐标 ``i`` 与 ``i + Dh/2`` 一对。

        提示：
            在 ``x.device`` 上用 ``torch.arange`` 构造位置，角度是位置与 θ 的外积。
            ``offset`` 是位置的起点：解码时就是 KV 缓存的长度。
            角度至少用 ``float32`` 计算（``float16`` 分不清位置 2049 和 2050）。
        """,
    "SwiGLU": """
        Llama 一类模型中的门控前馈网络。

        参数：
            dim: 模型宽度 D。
            hidden_dim: 隐藏宽度 F，按给定值使用。

        参数矩阵都是不带偏置的 ``nn.Linear``：``gate_proj``（D -> F）、``up_proj``（D -> F）、
        ``down_proj``（F -> D）。

        ``forward(x [..., D]) -> [..., D]`` = ``down_proj(silu(gate_proj(x)) * up_proj(x))``。

        提示：
            SiLU 只作用在门控分支上；乘积是逐元素的。
        """,
    "causal_attention": """
        带分组键值头的因果缩放点积注意力。

        参数：
            q: ``[B, H, Lq, Dh]`` 查询。
            k: ``[B, Hkv, Lk, Dh]`` 键，``Hkv`` 整除 ``H``，``Lq <= Lk``。
            v: ``[B, Hkv, Lk, Dh]`` 值。

        返回：
            ``[B, H, Lq, Dh]``：查询头 ``h`` 使用键值头 ``h // (H // Hkv)``；权重是沿键做的
            ``softmax(q kᵀ / √Dh)``；查询 ``i`` 只看到键 ``0 … Lk - Lq + i``
            （它在之后的键上的权重恰好为 0）。

        提示：
            ``repeat_interleave(H // Hkv, dim=1)`` 给每个查询头配上它的键值头（用 ``repeat``
            会配错）。``torch.ones(Lq, Lk).tril(diagonal=Lk - Lq)`` 就是按末尾对齐的因果模式。
            在 softmax 之前把被屏蔽的分数填成 ``-inf``。
        """,
    "CausalSelfAttention": """
        多头因果自注意力：H 个查询头、Hkv 个键值头、RoPE，以及可选的缓存。

        参数：
            dim: 模型宽度 D。
            num_heads: 查询头数 H；必须整除 ``dim``。
            num_kv_heads: 键值头数 Hkv（默认 ``None``：等于 H）；必须整除 ``num_heads``。
            rope_base: RoPE 的 ``base``。
        除不尽时，或头大小 ``Dh = dim // num_heads`` 为奇数时，抛出 ``ValueError``。

        参数矩阵都是不带偏置的 ``nn.Linear``：``q_proj``（D -> H·Dh）、``k_proj``（D -> Hkv·Dh）、
        ``v_proj``（D -> Hkv·Dh）、``o_proj``（H·Dh -> D）。第 ``h`` 个头是投影输出的第
        ``h·Dh … (h+1)·Dh - 1`` 列。

        ``forward(x [B, L, D], cache=None) -> [B, L, D]``：投影；拆分多头；用 ``RotaryEmbedding``
        在位置 ``offset … offset + L - 1`` 上旋转 ``q`` 和 ``k``（不旋转 ``v``），其中 ``offset`` =
        本次调用之前的 ``cache.length``（没有缓存时为 0）；有缓存时，把旋转后的键和值追加进去
        （``cache.update``），并对它保存的全部内容做注意力；``causal_attention``；合并多头；``o_proj``。

        提示：
            用 ``view(B, L, heads, Dh).transpose(1, 2)`` 拆分多头。在更新缓存之前读出偏移。
            缓存保存的是 ``Hkv`` 个头：只在注意力内部为查询头重复它们。
        """,
    "KVCache": """
        一层到目前为止见过的键和值；模型每层持有一个。

        属性 ``keys`` 和 ``values``：为空时是 ``None``，之后是张量 ``[B, Hkv, T, Dh]``：RoPE 之后的键
        和值，使用该层的 ``Hkv`` 个键值头（不重复到 ``H``），包含至今见过的每个位置，最早的在前。

        ``length``（属性）：``T``，``int`` 类型，为空时为 0。

        ``update(keys [B, Hkv, L, Dh], values [B, Hkv, L, Dh]) -> (keys, values)``：沿序列维
        （第 2 维）追加，并返回整个缓存，两者各为 ``[B, Hkv, T + L, Dh]``。

        提示：
            存旋转之后的键：缓存里的键在之后的步骤中不能再被旋转一次。下一个词元的位置就是 ``length``。
        """,
    "DecoderBlock": """
        因果自注意力和 SwiGLU 前馈网络，各自位于一个前置归一化的残差分支中。

        参数：
            dim: 模型宽度 D。
            num_heads: 查询头数 H。
            hidden_dim: SwiGLU 的隐藏宽度 F。
            num_kv_heads: 键值头数（默认 ``None``：等于 H）。
            eps: 两个 RMSNorm 的 ``eps``。
            rope_base: RoPE 的 ``base``。

        子模块 ``attn_norm``（RMSNorm）、``attn``（CausalSelfAttention）、``ffn_norm``（RMSNorm）、
        ``ffn``（SwiGLU）。

        ``forward(x [B, L, D], cache=None) -> [B, L, D]``：``h = x + attn(attn_norm(x), cache)``，然后
        ``h + ffn(ffn_norm(h))``。``cache`` 是这一层的 ``KVCache``（或 ``None``）。

        提示：
            残差加的是未归一化的 ``x``：只有分支的输入被归一化。
        """,
    "top_k_filter": """
        保留每行最大的 ``k`` 个 logits；其余设为 ``-inf``。

        参数：
            logits: ``[..., V]``。
            k: 整数，``>= 1``；``k >= V`` 时全部保留。

        返回：
            ``[..., V]``，一个新张量：一个 logit 当且仅当 ``>=`` 所在行第 ``k`` 大的值时保留
            （边界上并列的全部保留）。

        提示：
            ``torch.topk(...).values[..., -1:]`` 就是每行的阈值。``torch.topk`` 不接受 ``k > V``。
        """,
    "top_p_filter": """
        保留每行最可能的词元，直到总概率达到 ``p``；其余设为 ``-inf``。

        参数：
            logits: ``[..., V]``（可能含有 ``-inf``）。
            p: ``0 < p``；``p >= 1`` 时全部保留。

        返回：
            ``[..., V]``，一个新张量：设 ``probs = softmax(logits)``，词元 ``j`` 当且仅当比 ``j``
            严格更可能的词元的总概率 ``< p`` 时保留。最可能的词元总会保留；并列的词元同进同退。

        提示：
            把概率降序排序；每个排序后词元*之前*的概率和，是它的累积和减去它自己。被保留的最小概率
            就是阈值，再把它用到未排序的行上。
        """,
    "sample_next": """
        每行的下一个词元：先温度，再 top-k，再 top-p，最后抽样一次。

        参数：
            logits: ``[B, V]``，最后一个位置的 logits。
            temperature: ``>= 0``；0 表示贪心。
            top_k: ``None``（关闭）或传给 ``top_k_filter`` 的整数。
            top_p: ``None``（关闭）或传给 ``top_p_filter`` 的浮点数。
            generator: 用来抽样的 ``torch.Generator``（``None``：全局生成器）。

        返回：
            ``long [B]``。``temperature == 0`` 时：每行的 argmax（多个最大值并列时取最小下标）；
            不过滤，也不抽样。否则：``logits / temperature``，``top_k_filter``（若给了 ``top_k``），
            ``top_p_filter``（若给了 ``top_p``），softmax，然后对所有行只调用一次
            ``torch.multinomial(probs, num_samples=1, generator=generator)``。

        提示：
            先除以温度再过滤：top-p 依赖温度。对 ``[B, V]`` 的概率只调用一次 multinomial，
            同一个种子下抽出的词元才与参考实现一致。
        """,
    "generate": """
        给每个提示追加 ``max_new_tokens`` 个采样出的词元，用 KV 缓存逐步解码。

        参数：
            model: 一个 ``DecoderLM``（``model(tokens, caches)`` 和 ``model.new_cache()``）。
            prompt: ``long [B, L0]``，``L0 >= 1``。
            max_new_tokens: 要追加的词元数（不在句末符处停止）。
            temperature, top_k, top_p, generator: 传给 ``sample_next``。

        返回：
            ``long [B, L0 + max_new_tokens]``：提示，然后是新词元，位于提示所在的设备上。

        先用 ``caches = model.new_cache()`` 对整个提示做一次前向，然后每个新词元单独做一次前向
        （``[B, 1]``）；最后一个新词元不再送回模型，所以正好做 ``max_new_tokens`` 次前向。
        每一步对最后一个位置的 logits 调用一次 ``sample_next``。不记录梯度；``model.training``
        保持原样。

        提示：
            处理完提示之后，只送入最新的词元：其余的由缓存提供，位置从缓存的长度接着往下数。
        """,
    "param_groups": """
        把模型的参数分成 AdamW 的两组：做衰减的和不做衰减的。

        参数：
            model: 任意 ``nn.Module``。
            weight_decay: 衰减组的 λ。

        返回：
            ``[{"params": [...], "weight_decay": weight_decay}, {"params": [...], "weight_decay": 0.0}]``：
            先是所有 2 维及以上的参数（线性层权重、嵌入，因而也包括共享的输出头），再是其余参数
            （归一化权重、偏置）。每个列表按 ``model.named_parameters()`` 的顺序；共享的参数只出现一次；
            ``requires_grad=False`` 的参数不列入。

        提示：
            ``named_parameters()`` 本来就只列出一次共享的张量。把归一化的缩放或偏置往 0 收缩
            不是正则化，而是破坏：它们不做衰减。
        """,
    "AdamW": """
        手写的、权重衰减解耦的 Adam（更新与 ``torch.optim.AdamW`` 相同）。

        参数：
            params: 张量的可迭代对象，或参数组字典的可迭代对象（``param_groups(...)``），与任何优化器一样。
            lr: 学习率（默认 ``1e-3``）。
            betas: (β1, β2)，默认 ``(0.9, 0.999)``。
            eps: 加在 √v̂ 上（默认 ``1e-8``）。
            weight_decay: λ（默认 ``1e-2``）；参数组自己的值优先。

        ``step(closure=None)`` 返回 closure 的损失（或 ``None``）。对每个有梯度 g 的参数 θ，设
        ``t`` 为它自己的步数（第一次更新时为 1），``lr`` 和 λ 在这一步从它所在的组读取：
        ``θ ← θ − lr·λ·θ``；``m ← β1·m + (1 − β1)·g``；``v ← β2·v + (1 − β2)·g²``（两者都从 0 开始）；
        ``θ ← θ − lr · (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + eps)``。没有梯度的参数跳过。

        提示：
            继承 ``torch.optim.Optimizer``：把默认值作为字典传给 ``super().__init__``，遍历
            ``self.param_groups``，把 m、v 和 t 存在 ``self.state[p]`` 里。在 ``torch.no_grad()`` 下
            原地更新。衰减在 Adam 步之前乘到 θ 上；它从不碰 m 或 v。
        """,
    "cosine_lr": """
        第 ``step`` 步的学习率：线性预热，然后从 ``max_lr`` 余弦衰减到 ``min_lr``。

        参数：
            step: 优化器的步数，从 0 开始。
            max_lr: 峰值学习率，在预热结束时达到。
            min_lr: 下限，在 ``total_steps`` 时达到。
            warmup_steps: 预热步数，``0 <= warmup_steps < total_steps``。
            total_steps: 余弦结束的位置。

        返回：
            一个浮点数：``step < warmup_steps`` 时为 ``max_lr·(step + 1)/warmup_steps``；之后直到
            ``step == total_steps`` 为
            ``min_lr + ½(max_lr − min_lr)(1 + cos(π·(step − warmup_steps)/(total_steps − warmup_steps)))``；
            再往后为 ``min_lr``。

        提示：
            用 ``step + 1``，第 0 步就已经在学习。余弦的进度从 0（预热结束）走到 1（``total_steps``）。
        """,
    "clip_grad_norm_": """
        把所有梯度一起缩放，使它们合起来的 L2 范数不超过 ``max_norm``，原地进行。

        参数：
            parameters: 张量的可迭代对象；没有梯度的跳过。
            max_norm: 允许的最大范数。

        返回：
            裁剪前的范数，一个 0 维张量：
            ``total = sqrt(sum of every gradient's squared entries)``；每个梯度乘以
            ``min(1, max_norm / (total + 1e-6))``。与 ``torch.nn.utils.clip_grad_norm_(parameters, max_norm)`` 相同。

        提示：
            对所有梯度算一个范数（如同拼接成一个向量），而不是每个张量一个：裁剪必须保持整体更新的
            方向。``parameters`` 可能是一个生成器：只读一遍。
        """,
    "lm_loss": """
        下一个词元的平均交叉熵，目标错开一位，并忽略填充。

        参数：
            logits: ``[B, L, V]``，模型在 ``tokens`` 上的输出。
            tokens: ``[B, L]`` 词元 id，``L >= 2``。
            pad_id: 等于这个 id 的目标不计入（忽略的下标）；``None`` 表示每个目标都计入。

        返回：
            一个标量张量：对每个计入的目标，计算 ``logits[:, t]`` 与 ``tokens[:, t + 1]`` 的交叉熵，
            再取平均（按词元平均，不是按行；最后一个位置不预测任何东西）。

        提示：
            去掉 logits 的最后一个位置和词元的第一个。填充既不能增加损失，也不能稀释均值。
        """,
    "train_step": """
        在一批词元行上做一步优化。

        参数：
            model: 一个 ``DecoderLM``。
            tokens: ``long [B, L]``，末尾用 ``pad_id`` 填充（如果有的话）。
            optimizer: 作用于模型参数的任意 ``torch.optim`` 优化器。
            pad_id: 传给 ``lm_loss``。
            max_grad_norm: 给出时用 ``clip_grad_norm_(model.parameters(), max_grad_norm)`` 裁剪。
            lr: 给出时，在这一步之前把每个参数组的 ``lr`` 设为它（学习率调度在这一步的值）。

        返回：
            更新之前的损失，Python 浮点数。

        提示：
            在 ``backward()`` 之前把梯度清零；在它之后、``optimizer.step()`` 之前裁剪。
        """,
}
