"""Transformer 作业的练习与问答文字（中文）：练习标题、提示、主题、题目。"""

_TOPICS = {
    "attention": "注意力",
    "positions": "位置",
    "norm": "归一化与残差",
    "masks": "掩码",
    "training": "训练",
    "decoding": "解码",
    "sizes": "规模与开销",
}

_TITLES = {
    "sdpa": "缩放点积注意力",
    "mha": "多头注意力",
    "embedding": "词元嵌入",
    "positional": "正弦位置编码",
    "layernorm": "层归一化",
    "feedforward": "逐位置前馈网络",
    "masks": "填充、因果与目标掩码",
    "encoder_layer": "编码器层",
    "decoder_layer": "解码器层",
    "model": "编码器、解码器与完整 Transformer",
    "greedy": "贪心解码",
    "training": "损失、Noam 学习率与一步训练",
    "param_count": "按公式计算参数量",
    "attention20": "注意力：缩放点积与多头",
    "encoder30": "编码器的组成部件",
    "decoder30": "掩码、解码器层与解码",
    "classic45": "经典面试一轮",
    "train30": "训练循环与模型规模",
}

# 第 1 级：张量形状怎么流动。第 2 级：关键的那一步操作。永远不给代码答案。
_HINTS = {
    "sdpa": (
        "q [..., Lq, Dk] 乘以 kᵀ [..., Dk, Lk] 得到分数 [..., Lq, Lk]，每个（查询, 键）对一个分数。"
        "权重保持这个形状；权重 [..., Lq, Lk] 乘以 value [..., Lk, Dv] 得到 [..., Lq, Dv]。",
        "分数要乘以 1/√Dk，其中 Dk = query.size(-1)。在 softmax 之前，把保留掩码为 False 的位置填成一个很小的负数"
        "（masked_fill），softmax 沿最后一维（键）做；如果传入了 dropout 模块，它作用在权重上，返回的也正是这份权重。",
    ),
    "mha": (
        "[B, L, D] → 线性投影 → [B, L, D] → view 成 [B, L, H, Dh] → transpose → [B, H, L, Dh]；每个头各自做注意力，"
        "得到 [B, H, Lq, Dh] → 再 transpose 回 [B, Lq, H, Dh] → 合并成 [B, Lq, D] → 输出投影。",
        "做注意力之前，头这一维要挨着批次维，最后两维才是（长度, Dh）：只用 view 会把数字放错位置，transpose 才让它"
        "对。transpose 之后内存不再连续，合并时用 reshape，或先 contiguous() 再 view。直接复用 sdpa 函数；四维掩码本来"
        "就能在头这一维上广播。",
    ),
    "embedding": (
        "tokens [B, L]（long）→ 查表 → [B, L, D]。表里每个词元 id 对应一行 D 个数。",
        "查出来的向量要乘以 √D（是平方根，不是 D 本身），这样它们不会被随后加上的位置编码表盖过去。",
    ),
    "positional": (
        "只建一次表 [max_len, D]：位置 [max_len, 1] 与频率 [D/2] 组合出角度 [max_len, D/2]；存成 [1, max_len, D]。"
        "forward 中 x [B, L, D] + 表[:, :L] → [B, L, D]。",
        "第 (2i, 2i+1) 两列共用频率 1/10000^(2i/D)：偶数列放 sin，奇数列放 cos，位置从 0 开始数。用 register_buffer "
        "保存这张表，它才会跟着 .to() 移动且不会被训练；dropout 作用在相加之后的结果上。",
    ),
    "layernorm": (
        "x [..., D] → 沿最后一维求均值和方差，各为 [..., 1]（保留维度）→ 归一化后 [..., D] → 乘 weight [D] 加 bias [D]。",
        "方差是有偏的（偏差平方的均值，除以 D）；eps 加在平方根里面。weight 初始为全 1，bias 初始为全 0，两者都是 "
        "nn.Parameter。",
    ),
    "feedforward": (
        "[..., D] → linear1 → [..., F] → 激活 → dropout → linear2 → [..., D]。每个位置单独变换，用同一套权重。",
        "两个线性层之间的非线性才是关键：没有它，两个线性层会合并成一个。按 activation 参数选择 ReLU 或精确 GELU；"
        "dropout 放在激活之后。",
    ),
    "masks": (
        "padding：tokens [B, L] → 比较 → [B, L] → 加两个长度为 1 的维度 → [B, 1, 1, L]（键在最后一维）。"
        "causal：[L, L] → [1, 1, L, L]。target：[B, 1, 1, L] & [1, 1, L, L] 广播成 [B, 1, L, L]。",
        "保留掩码在允许注意的地方为 True：填充掩码对真实词元为 True，因果掩码对 j <= i（含对角线的下三角）为 True。"
        "因果掩码要建在给定的 device 上，target_mask 里则用 tgt.device。",
    ),
    "encoder_layer": (
        "x [B, L, D] 依次经过两个子层：自注意力，然后前馈；每一步都保持 [B, L, D]；掩码直接交给自注意力。",
        "每个子层外面包一层“残差 + LayerNorm”：Post-LN 先把输入加回来再归一化，Pre-LN 先归一化子层的输入、再把原始输入"
        "加回来。查询、键、值是同一个张量；dropout 作用在子层输出上，在相加之前。",
    ),
    "decoder_layer": (
        "x [B, Lt, D] → 带掩码的自注意力 → [B, Lt, D] → 对 memory [B, Ls, D] 做交叉注意力 → [B, Lt, D] → 前馈 → "
        "[B, Lt, D]。交叉注意力的权重是 [B, H, Lt, Ls]。",
        "自注意力用 tgt_mask；交叉注意力的查询来自 x，键和值来自 memory，掩码用 memory_mask。共有三个“残差 + 归一化”"
        "（norm1、norm2、norm3）；Pre-LN 只归一化查询这一侧，从不归一化 memory。",
    ),
    "model": (
        "src [B, Ls] → 嵌入 → 加位置 → N 个编码器层 → memory [B, Ls, D]；tgt [B, Lt] → 嵌入 → 加位置 → N 个解码器层"
        "（读取 memory）→ [B, Lt, D] → 输出投影 → logits [B, Lt, V_tgt]。",
        "层堆叠的每个位置都要新建一个层对象（列表乘以 N 会让 N 个位置共用同一层）。只有 norm_first 时才有最后的 "
        "LayerNorm。源掩码用两次：编码器自注意力，以及解码器的 memory 掩码。最后对所有维数大于 1 的参数做 Xavier 均匀"
        "初始化。",
    ),
    "greedy": (
        "ys 起初是 [B, 1] 的 BOS；每一步把 ys 解码成 [B, t, D]，取最后一个位置 [B, D] → logits [B, V] → argmax [B] → "
        "作为新的一列接上：[B, t + 1]。",
        "源序列只编码一次，放在循环外。每一步都要为当前的 ys 构造目标掩码。用一个 bool [B] 记录哪些行已经生成了 EOS；"
        "已结束的行之后填 padding，所有行都结束或生成满 max_len 个新词元时停止。",
    ),
    "training": (
        "tgt [B, Lt] → 解码器输入 tgt[:, :-1]、目标 tgt[:, 1:]，都是 [B, Lt - 1]；logits [B, Lt - 1, V] → 展平成 "
        "[B·(Lt - 1), V]，与目标 [B·(Lt - 1)] 计算损失。",
        "损失忽略填充目标（ignore_index），只在真实词元上取平均。学习率取两项中较小的那个：step^-0.5 和 "
        "step·warmup^-1.5，step 为 0 时按 1 算。一步训练：梯度清零、反向传播、需要时裁剪、优化器更新，返回 Python "
        "float 形式的损失。",
    ),
    "param_count": (
        "分块计数：两张嵌入表、N 个编码器层、N 个解码器层、可能有的最终归一化，以及输出投影。Linear(a, b) 有 a·b 个"
        "权重加 b 个偏置。",
        "注意力有四个带偏置的 D×D 投影；前馈有 D×F + F + F×D + D；每个 LayerNorm 有 2·D。编码器层含一个注意力和两个"
        "归一化，解码器层含两个注意力和三个归一化。头数不影响参数量。",
    ),
}

_QUIZ = {
    "scale_why": (
        "为什么注意力分数要除以 √d_k？",
        ("为了让每一行注意力权重之和为 1",
         "为了减少矩阵乘法的计算量",
         "d_k 个随机项的点积，方差随 d_k 增长；分数过大会让 softmax 饱和、梯度消失",
         "因为 d_k 是头的个数"),
        "若各分量方差为 1，q·k 是 d_k 个乘积之和，标准差约为 √d_k。除以它把分数拉回到单位量级，softmax 不会接近 "
        "one-hot，梯度也能传下去。让每行之和为 1 的是 softmax，不是缩放。",
    ),
    "softmax_axis": (
        "分数形状为 [B, H, Lq, Lk]。softmax 沿哪一维做？",
        ("查询维（-2）", "键维（-1）", "头维（1）", "对所有元素一起做"),
        "每个查询把一份注意力分配给所有键，所以归一化沿键，也就是最后一维。沿查询维（-2）做是常见错误：每行之和不再是 1。",
    ),
    "mask_neg_inf": (
        "为什么被屏蔽的分数要填 -inf（或很小的负数），而不是 0？",
        ("exp(-inf) = 0，被屏蔽的键权重恰好为 0；分数为 0 时归一化前仍有 exp(0) = 1 的权重",
         "填 0 会让 softmax 除以零",
         "-inf 能让训练更快",
         "没有区别，两者得到同样的权重"),
        "softmax 只看分数。0 是个普通的值，常常还比真实分数大，被屏蔽的位置照样分到注意力。-inf（或 -1e9、finfo.min "
        "这样的大负数）让它的指数变为 0。注意 -1e9 在 float16 下会溢出。",
    ),
    "multihead_cost": (
        "与一个宽度为 d_model 的单头相比，H 个宽度为 d_model/H 的多头注意力开销如何？",
        ("参数和计算量都是 H 倍",
         "计算量 H 倍，参数不变",
         "参数是 1/H",
         "参数和计算量大致相同：宽度被拆分，而不是成倍增加"),
        "投影合起来仍是 D×D，分数的计算是 H × (L² · D/H) = L² · D。得到的好处是 H 种独立的注意力模式（每个子空间一种），"
        "代价几乎不变。",
    ),
    "cross_attn_qkv": (
        "解码器的交叉注意力中，查询、键、值分别来自哪里？",
        ("三者都来自编码器输出",
         "查询来自解码器这一路；键和值来自编码器输出（memory）",
         "查询来自编码器输出；键和值来自解码器",
         "三者都来自解码器这一路"),
        "每个目标位置用查询去问哪些源位置相关（键），再读取它们的内容（值）。因此权重是 [Lt, Ls]，源序列的填充掩码作用在"
        "键上。",
    ),
    "head_dim": (
        "d_model = {d_model}，{num_heads} 个头：每个头的维度 Dh 是多少？",
        "Dh = d_model / H = {answer}。模型宽度被平分给各个头，所以 H 必须整除 d_model。",
    ),
    "scale_value": (
        "d_model = {d_model}，{num_heads} 个头：单个头的分数要除以多少？",
        "缩放用的是单个头的键维度：√Dh = √(d_model / H) = {answer}，不是 √d_model。",
    ),
    "score_entries": (
        "自注意力，批大小 {batch}，{heads} 个头，序列长度 {length}：注意力权重张量一共有多少个数？",
        "权重是 [B, H, L, L] = {batch} × {heads} × {length} × {length} = {answer}，每个头、每个查询、每个键各一个。"
        "正是这个平方级的张量限制了长序列。",
    ),
    "cross_shape": (
        "交叉注意力，目标长度 {lt}，源长度 {ls}：注意力权重最后一维有多大？",
        "权重形状是 [.., Lt, Ls]：{lt} 个目标查询各自分配到 {ls} 个源键上，所以最后一维是 {answer}。",
    ),
    "sincos_why": (
        "原始 Transformer 为什么用正弦、余弦位置编码？",
        ("对任意偏移 k，PE(pos + k) 是 PE(pos) 的一个固定线性变换（旋转），便于利用相对位置；而且公式能算出训练时没见过的长度",
         "它们比可学习的位置嵌入参数少，但训练方式相同",
         "它们让注意力权重之和为 1",
         "它们对嵌入做归一化"),
        "同一频率的一对 (sin, cos) 在位置移动 k 时转过一个固定角度，与位置本身无关。它不需要学习，任何长度都能算出来。"
        "可学习的位置嵌入效果相当，但只覆盖训练过的最大长度。",
    ),
    "no_position": (
        "没有位置编码的编码器会怎样？",
        ("无法训练",
         "只关注第一个词元",
         "它对排列等变：打乱输入词元，输出也以同样方式被打乱，词序完全看不见",
         "没有影响：注意力本身就知道顺序"),
        "自注意力和逐位置前馈都把序列当作集合处理。只有加上的位置信号，才能区分“狗咬人”和“人咬狗”。",
    ),
    "embed_scale_why": (
        "为什么词元嵌入要乘以 √d_model？",
        ("让 softmax 更尖锐",
         "让模型不需要预热就能训练",
         "抵消注意力里除以的 √d_k",
         "让嵌入与随后加上的位置表（元素在 [-1, 1] 之间）大小相当，位置信息不至于淹没词义"),
        "用较小数值初始化的嵌入，会被元素可达 1 的位置表压过；乘以 √d_model 把两者重新平衡（论文中这张矩阵还与输出层共享）。",
    ),
    "embed_scale": (
        "d_model = {d_model}：词元嵌入把查到的向量乘以多少？",
        "√d_model = √{d_model} = {answer}。",
    ),
    "ln_vs_bn": (
        "为什么 Transformer 用 LayerNorm 而不用 BatchNorm？",
        ("LayerNorm 没有参数",
         "LayerNorm 对每个词元的向量单独归一化，不依赖批次、填充和序列长度，训练和推理时行为一致",
         "BatchNorm 不能在 GPU 上运行",
         "LayerNorm 算得更快"),
        "BatchNorm 的统计量会把不同句子的位置（以及填充）混在一起，推理时还要用滑动平均，批次小或长度多变时效果差。"
        "LayerNorm 每次只用一个长度为 D 的向量求统计量。",
    ),
    "pre_post_ln": (
        "Post-LN（论文做法）与 Pre-LN 有什么区别？",
        ("Pre-LN 去掉了残差连接",
         "Post-LN 只归一化模型的输入",
         "Post-LN 在加上残差之后归一化，x = LN(x + F(x))；Pre-LN 归一化子层的输入，x = x + F(LN(x))，残差通路保持干净，"
         "深层堆叠训练更稳定（通常再加一个最终 LayerNorm）",
         "两者计算上没有区别"),
        "Post-LN 中每个梯度都要穿过后面所有层的归一化，深模型需要仔细预热。Pre-LN 不动恒等通路；由于这条主干从不被归一化，"
        "堆叠末尾要再接一个 LayerNorm。",
    ),
    "residual_why": (
        "每个子层外面的残差连接起什么作用？",
        ("为梯度提供一条穿过整个深度的恒等通路，让深层堆叠能够训练，并让每个子层学习对输入的修正",
         "对激活值做归一化",
         "减少参数数量",
         "阻止对填充位置的注意"),
        "x + F(x) 的导数是 1 + F'(x)：即使 F 还没训练好，信号和梯度也能通过。这也解释了为什么输入处加的位置信号在深层仍然可用。",
    ),
    "padding_mask_what": (
        "填充掩码做什么？",
        ("把含填充的序列从批次中移除",
         "把填充位置的嵌入置零",
         "让填充的查询不计入损失",
         "阻止每个查询注意填充的键位置，使填充不会改变真实词元的输出"),
        "填充只是为了把批次凑成矩形。把它作为键屏蔽（[B, 1, 1, L]）就够了：填充查询算出的结果之后会被丢弃，损失也另外忽略"
        "填充目标。",
    ),
    "encoder_decoder_masks": (
        "编码器-解码器 Transformer 的各个注意力分别用什么掩码？",
        ("三者都用因果掩码",
         "编码器自注意力：源填充掩码；解码器自注意力：目标填充加因果；交叉注意力：源填充掩码",
         "编码器用因果掩码；解码器只用填充掩码",
         "只有解码器用掩码"),
        "编码器能看到整个源序列，只需隐藏填充。解码器既不能看到未来的目标（因果），也不能看填充。交叉注意力的键是源位置，"
        "所以用源填充掩码。",
    ),
    "train_infer_masks": (
        "训练和推理时，解码器的掩码有什么不同？",
        ("训练时一次喂入整个右移后的目标，由因果掩码挡住未来位置；推理时逐个生成词元，掩码只覆盖已经生成的部分",
         "推理时不用任何掩码",
         "训练时目标已知，所以不需要因果掩码",
         "推理用因果掩码，训练不用"),
        "教师强制让所有位置并行计算，前提是位置 i 看不到 i+1 及之后；推理时未来根本还不存在，但同一个掩码让计算与训练保持一致。",
    ),
    "causal_true": (
        "{length} × {length} 的因果保留掩码中有多少个 True？",
        "第 i 行允许位置 0..i，共 1 + 2 + … + {length} = {answer}（含对角线的下三角）。",
    ),
    "target_true": (
        "一行目标长度为 {length}，最后 {pads} 个是填充。它的 [{length}, {length}] 目标掩码中有多少个 True？",
        "第 i 行允许 j <= i 且不是填充的键；填充位置作为查询仍能看到它之前的真实键。合计 {answer}。",
    ),
    "right_shift": (
        "训练时为什么把目标右移一位（BOS y1 y2 …）喂给解码器？",
        ("为了让序列变长",
         "为了跳过总是很容易的第一个词元",
         "让位置 i 的输出根据之前的词元预测第 i+1 个词元：输入 tgt[:, :-1]，目标 tgt[:, 1:]",
         "因为编码器输出也右移了"),
        "这就是教师强制：解码器拿到真实前缀，在每个位置同时预测下一个词元。不右移的话，模型只会学会照抄输入。",
    ),
    "label_smoothing_why": (
        "标签平滑（例如 ε = 0.1）改变了什么？",
        ("从数据里删掉有噪声的标签",
         "目标分布在真实词元上放 1 - ε（再加上它分到的那份 ε），其余的 ε 均匀分给整个词表，抑制模型过度自信",
         "让学习率曲线更平滑",
         "对相邻位置的 logits 取平均"),
        "困惑度会变差，但准确率和 BLEU 通常变好：模型为其他候选保留一些概率，而不是把 logits 推向无穷大。",
    ),
    "warmup_why": (
        "Transformer 的学习率为什么要先预热？",
        ("让 dropout 逐渐生效",
         "因为必须先训练嵌入",
         "为了在开始时节省显存",
         "训练初期 Adam 的矩估计不可靠，Post-LN 堆叠也很脆弱：一开始学习率太大会导致训练发散"),
        "Noam 学习率在 warmup 步内线性上升，之后按 1/√step 衰减。Pre-LN 模型对预热的依赖要小得多。",
    ),
    "dropout_where": (
        "原始 Transformer 在哪里使用 dropout？",
        ("只在最终的 logits 上",
         "只在输入嵌入上",
         "每个子层输出在加残差之前、嵌入加位置之后的和、注意力权重，以及前馈内部",
         "在 LayerNorm 的参数上"),
        "论文中的“残差 dropout”作用于每个子层输出（相加之前）和嵌入与位置之和；常见实现还在注意力权重上、前馈激活之后加 dropout。",
    ),
    "eval_mode": (
        "推理时同一个输入得到不同输出，最可能的原因是？",
        ("没有调用 model.eval()，dropout 仍在起作用",
         "位置表错了",
         "softmax 的维度错了",
         "标签平滑"),
        "train() 模式下 dropout 会随机置零激活。eval() 关闭它（torch.no_grad() 还能省显存）；自己调用 F.dropout 的模块"
        "必须传 training=self.training。",
    ),
    "logits_not_probs": (
        "模型输出层在交叉熵损失之前要做 softmax 吗？",
        ("要，损失需要概率",
         "不要：返回 logits；cross_entropy 自己做 log-softmax，再做一次 softmax 会扭曲损失和梯度",
         "要，但只在推理时",
         "只有用标签平滑时才要"),
        "F.cross_entropy 把 log_softmax 和负对数似然合成一步，数值稳定。贪心解码时，logits 的 argmax 本来就等于概率的 argmax。",
    ),
    "noam_peak": (
        "Noam 学习率，d_model = {d_model}，warmup = {warmup}：第几步学习率最大？",
        "step^-0.5 与 step·warmup^-1.5 两项在 step = warmup 处相交，所以峰值在第 {answer} 步。",
    ),
    "noam_value": (
        "Noam 学习率，factor 为 1：d_model = {d_model}、warmup = {warmup} 时，第 {step} 步的学习率是多少？",
        "lr = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) = {answer}。",
    ),
    "smoothed_true": (
        "词表有 {vocab} 个词元，标签平滑 ε = {eps}：平滑后的目标分布在真实词元上的概率是多少？",
        "1 - ε + ε / V = {answer}：ε 均匀分给全部 {vocab} 个词元，真实词元也分到一份。",
    ),
    "kv_cache": (
        "自回归解码时，KV 缓存存的是什么？",
        ("之前各步的注意力权重",
         "之前各步的 logits",
         "每一层中已处理词元的键和值，这样每一步只需投影最新的词元，再对缓存的键值做注意力",
         "编码器的输入嵌入"),
        "没有缓存时，每一步都要重算整个前缀。因果掩码保证旧的键和值不会再变，所以可以保存下来；缓存的显存随 长度 × 层数 × D 增长。",
    ),
    "greedy_last": (
        "贪心解码中，用哪个位置的 logits 选下一个词元？",
        ("解码器输出的最后一个位置",
         "第一个位置",
         "所有位置的平均",
         "编码器的最后一个位置"),
        "解码器在位置 t 的输出预测第 t+1 个词元，所以最新的预测在最后一个位置。读位置 0 会一直重复同一个猜测。",
    ),
    "dff_4x": (
        "为什么 d_ff 通常是 4 × d_model？",
        ("残差连接要求如此",
         "这是经验选择：更宽的隐藏层让每个位置有更多非线性特征组合的能力，4 倍在原论文实验中兼顾了效果与开销",
         "因为注意力里有四个投影矩阵",
         "为了让参数量与注意力相等"),
        "没有什么强制这个倍数；论文用 512 → 2048，后来的模型大多沿用（门控变体约为 8/3）。这样前馈约占一层参数的三分之二。",
    ),
    "complexity": (
        "序列长度 L 增长时（宽度 D 固定），自注意力的时间和显存如何增长？",
        ("线性，O(L)", "O(L log L)", "只有 O(D²)，与 L 无关", "平方级：时间 O(L²·D)，权重显存 O(L²)"),
        "每个查询都要给每个键打分：每个头一个 L × L 矩阵。长度翻倍，它就变成 4 倍，所以长上下文需要分块、稀疏或省显存的注意力等技巧。",
    ),
    "score_growth": (
        "序列长度从 {length} 增加到两倍，注意力权重张量变为原来的几倍？",
        "每个头是 L × L，长度翻倍就乘以 {answer}。",
    ),
    "params_total": (
        "Transformer(src_vocab={src_vocab}, tgt_vocab={tgt_vocab}, d_model={d_model}, heads={num_heads}, "
        "d_ff={d_ff}, layers={num_layers}, norm_first={norm_first}) 有多少参数（两张独立的嵌入表，输出投影带偏置）？",
        "嵌入 (V_src + V_tgt)·D；每个编码器层 4(D² + D) + (2DF + F + D) + 4D；每个解码器层 8(D² + D) + (2DF + F + D) "
        "+ 6D；Pre-LN 再加 4D 的最终归一化；再加 D·V_tgt + V_tgt。合计 {answer}。",
    ),
    "params_mha": (
        "一个 d_model = {d_model}、{num_heads} 个头的多头注意力块有多少参数（Q、K、V 和输出投影，都带偏置）？",
        "4 · (D² + D) = {answer}；头数不影响。",
    ),
    "params_ffn": (
        "d_model = {d_model}、d_ff = {d_ff} 的前馈块有多少参数（带偏置）？",
        "D·F + F + F·D + D = {answer}。",
    ),
    "params_layernorm": (
        "LayerNorm(d_model = {d_model}) 有多少参数？",
        "每个特征一个增益一个偏置：2 · {d_model} = {answer}。",
    ),
}


def _quiz_messages(quiz):
    out = {}
    for qid, entry in quiz.items():
        out[f"quiz.{qid}.q"] = entry[0]
        out[f"quiz.{qid}.why"] = entry[-1]
        if len(entry) == 3:
            for letter, option in zip("abcd", entry[1]):
                out[f"quiz.{qid}.{letter}"] = option
    return out


MESSAGES = {
    "quiz.header": "Transformer 面试问答：共 {n} 题（`{replay}` 可重做同一组题）。",
    **{f"quiz.topic.{k}": v for k, v in _TOPICS.items()},
    **{f"practice.title.{k}": v for k, v in _TITLES.items()},
    **{f"practice.hint.{task}.{level}": h for task, pair in _HINTS.items() for level, h in enumerate(pair, start=1)},
    **_quiz_messages(_QUIZ),
}
