"""The Transformer assignment's own sentences (Chinese): its checks' failures."""

MESSAGES = {
    "fail.blocked_nonzero": "位置 {index} 的注意力权重是 {value}，但掩码屏蔽了它；被屏蔽的权重必须恰好为 0。",
    "fail.rows_not_normalised": "注意力权重每行之和不为 1（最大误差 {error}）或出现负数：softmax 应作用在键的维度（最后一维）上。",
    "fail.sdpa_dropout_unused": "传给 scaled_dot_product_attention 的 dropout 模块没有作用在权重上。",
    "fail.sdpa_dropout_mismatch": "返回的权重不是与 value 相乘的那个：请返回 dropout 之后的权重。",
    "fail.mha_divisible": "MultiHeadAttention(d_model={d_model}, num_heads={num_heads}) 抛出了 {raised}；"
    "{num_heads} 不能整除 {d_model}，应抛出 ValueError。",
    "fail.pe_parameter": "PositionalEncoding 含有可训练参数 {names}；位置表应注册为 buffer（register_buffer），不参与训练。",
    "fail.pe_missing": "PositionalEncoding 没有名为 'pe' 的 buffer（找到的 buffer：{found}）；"
    "请用 self.register_buffer('pe', ...) 注册位置表。",
    "fail.pe_not_moved": "位置表 'pe' 没有随 .to(dtype) / .to(device) 移动：请放在注册的 buffer 里，而不是普通属性。",
    "fail.ln_init": "LayerNorm 的初始值应为 weight = 1、bias = 0。",
    "fail.not_xavier": "参数 {name} 不是 Xavier 均匀初始化（应满足 |w| <= {bound}，标准差约 {expected_std}，实际 {std}）。",
    "fail.no_positions": "编码器输出对位置置换等变：位置编码没有起作用。",
    "fail.greedy_too_long": "max_len={max_len}，greedy_decode 却生成了 {got} 个词元。",
    "fail.train_loss": "train_step 在第 {step} 步返回的损失是 {got}，与相同权重和批次下的期望损失不一致。",
    "fail.train_loss_nonfinite": "train_step 在第 {step} 步返回的损失是 {value}；相同权重和批次下的期望损失是一个有限的数。",
    "fail.noam": "noam_lr(step={step}, d_model={d_model}, warmup_steps={warmup}) = {got}，与公式不符。",
    "fail.param_count": "count_parameters 返回 {got}，与真实参数量相差 {difference}。",
    "fail.overfit_loss": "在 10 个样本上训练 {steps} 步后损失为 {last}，没有降到 {target} 以下：模型学不会。",
    "fail.overfit_nonfinite": "在 10 个样本上训练时，损失在第 {step} 步（共 {steps} 步）变成 {value}，训练就此停止。"
    "常见原因：某一行注意力分数全是 -inf（某个位置什么都不能关注）、除以零、对 0 取对数。",
    "fail.overfit_decode": "损失下降了，但 greedy_decode 有 {wrong} 个训练目标没能复现（例如：{examples}）。",
    "fail.residual_dropout": "{what}：train() 模式下 dropout=1.0（且子层自身的 dropout 关闭）时，每个子层的输出都被丢弃，只剩残差通路，而输出与参考实现不同。原因可能是某个子层的输出在残差相加前没有经过概率为该层 dropout 参数的 dropout（缺失，或写死了概率），也可能是残差通路本身不同（少了一处残差相加，或 norm 放错了位置）：如果这一层的其他检查也失败，请先看那一项。",
    "fail.padding_row": "{what}：词元 {token} 的嵌入行初始全为零（padding_idx？）；约定中的 nn.Embedding(V, D) 没有 padding_idx，每一行都要训练。",
    # -- what a default changed, said inside fail.defaults
    "transformer.detail.smoothing": "损失与不做标签平滑时的不同",
    "transformer.detail.pe_shape": "缓冲区 pe 的形状是 {got}，应为 {expected}",
    "transformer.detail.params_differ": "有 {count} 个参数或缓冲区不同，例如 {first}",
    "transformer.detail.param_differs": "{name}：{got}（应为 {expected}）",
}
