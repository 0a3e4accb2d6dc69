"""zh sentences of the decoder-only LM (sampling, the optimiser, training)."""

MESSAGES = {
    "fail.lm_top_k_kept": "top_k_filter(k={k}) 在第 {row} 行保留了 {got} 个元素，应保留 {expected} 个（第一个出错的位置是 "
    "{index}）：一个 logit 当且仅当不小于该行第 k 大的值时保留，因此边界上的并列值全部保留；"
    "k >= V 时全部保留。",
    "fail.lm_top_p_kept": "top_p_filter(p={p}) 在第 {row} 行保留了 {got} 个词元，应保留 {expected} 个（第一个出错的词元是 "
    "{index}）：词元 j 当且仅当概率严格大于它的词元的总概率 < p 时保留。越过 p 的那个词元要保留"
    "（在累计和第一次超过 p 处截断会早一个词元截掉它）；并列的词元同去同留，概率最大的词元总是保留，"
    "p >= 1 时全部保留。",
    "fail.lm_sample_range": "sample_next 返回了 {count} 个超出 0 … {V} - 1 的词元编号。",
    "fail.lm_sample_outside": "sample_next(temperature={temperature}, top_k={top_k}, top_p={top_p}) 在 {n} 次抽样中"
    "抽到了第 {row} 行的词元 {token} 共 {count} 次，但过滤器已把它去掉，它绝不应被抽到。"
    "请先过滤 logits（温度，然后 top-k，然后 top-p），再做 softmax，并从这些概率中抽样。",
    "fail.lm_sample_distribution": "sample_next(temperature={temperature}, top_k={top_k}, top_p={top_p}) 的 {n} "
    "次抽样在第 {row} 行的频率不符合 softmax(top_p(top_k(logits / temperature)))："
    "卡方统计量 {stat}，自由度 {df}，p 值 {pvalue}。词元 {token} 出现了 {observed} 次，"
    "期望约 {expected} 次。（这是固定随机种子的卡方检验：正确的采样器不通过本检查的概率"
    "低于 {alpha}。）常见原因：温度在 softmax 之后才用或根本没用，top-p 在 top-k 之前"
    "执行，或 top-p 用的是未除以温度的 logits。",
    "fail.lm_multinomial": "sample_next 调用了 {calls} 次 torch.multinomial（{shapes}）。契约要求对所有行的概率一次性"
    "调用恰好一次 torch.multinomial(probs, num_samples=1, generator=generator)，形状为 "
    "{expected}：这样同一个生成器种子才能得到与参考实现相同的词元。用别的方式抽样（逐行调用、"
    "Gumbel 噪声、torch.distributions）违反了契约的这一条，会失去本检查的分数；抽样分布是否正确"
    "由分布检查另行评分。",
    "fail.lm_global_generator": "调用 {what} 时不传 generator，没有像约定的 generator=None 那样使用 torch 的全局随机数生成器"
    "（torch.multinomial(..., generator=None)）：全局种子相同时，与参考实现的词元在 {index} 处不同。",
    "fail.lm_no_generator": "sample_next 没有用传入的生成器抽样（它的状态没有变化）：请把 generator=generator 传给 "
    "torch.multinomial。",
    "fail.lm_same_seed": "生成器种子相同时，sample_next 在 {total} 行中有 {count} 行抽到了不同的词元（第一处是第 {row} "
    "行）。你传给 torch.multinomial 的概率与期望值最多相差 {max_abs}（你的 dtype 是 {dtype}，"
    "期望 {expected_dtype}）：先除以温度，再 top_k_filter，再 top_p_filter，最后 softmax。",
    "fail.lm_greedy": "temperature=0 时 sample_next 在第 {row} 行选了词元 {got}；应选该行 logits 的 argmax"
    "（有多个相等最大值时取最小下标，与 torch.argmax 相同）。",
    "fail.lm_greedy_rng": "temperature=0 时 sample_next 抽取了随机数（{which} 的状态变了）；贪心选择不用随机性："
    "在任何过滤和抽样之前直接返回 argmax。",
    "fail.lm_gen_forwards": "generate(max_new_tokens={n}) 调用了模型 {got} 次，应恰好 {n} 次：先对整个提示做一次前向，"
    "之后每个新词元只用它自己做一次前向。最后抽出的词元不再送回模型，max_new_tokens=0 时不调用模型。",
    "fail.lm_gen_forward_shape": "generate 的第 {call} 次前向收到的词元形状是 {got}，应为 {expected}：第一次前向输入整个"
    "提示 [B, L0]，之后每次只输入最新的词元 [B, 1]（其余由缓存提供）。",
    "fail.lm_gen_no_cache": "generate 的第 {call} 次前向没有传入缓存：用 model.new_cache() 创建一次缓存，并在每次前向"
    "时传入。",
    "fail.lm_gen_cache_length": "generate 第 {call} 次前向时缓存中有 {got} 个位置，应为 {expected}：在循环之前只创建一次"
    "缓存，每一步都传入同一组缓存。",
    "fail.lm_gen_grad": "generate 在记录梯度的情况下执行了第 {call} 次前向：请放在 torch.no_grad() 中"
    "（@torch.no_grad() 装饰器即可）。",
    "fail.lm_gen_output_grad": "generate 返回的张量需要梯度：请在 torch.no_grad() 下生成。",
    "fail.lm_gen_training": "generate 把 model.training 从 {before} 改成了 {after}：请保持模型原来的模式"
    "（模型没有 dropout，不需要 eval()）。",
    "fail.lm_gen_prompt": "generate 的输出不是以提示开头的（第一处不同在 {index}）：返回提示后接新生成的词元。",
    "fail.lm_groups_count": "param_groups 返回了 {got} 个参数组，应为 2 个：先是需要权重衰减的参数，然后是不需要的。",
    "fail.lm_groups_decay": "param_groups 的第 {group} 组 weight_decay 为 {got}，应为 {expected}（第一组用给定的 "
    "weight_decay，第二组用 0.0）。",
    "fail.lm_groups_params": "param_groups 的第 {group} 组包含 {got}，应为 {expected}：第一组是所有 2 维及以上的参数，"
    "第二组是其余参数，各自按 named_parameters() 的顺序；共享（权重绑定）的张量只出现一次，"
    "requires_grad=False 的参数不放入。",
    "fail.lm_not_optimizer": "AdamW(...) 不是 torch.optim.Optimizer：请继承 torch.optim.Optimizer。",
    "fail.lm_adamw_closure": "AdamW.step(closure) 返回了 {got}，而不是 closure 的返回值。",
    "fail.lm_adamw_none": "不带 closure 的 AdamW.step() 返回了 {got}，应返回 None。",
    "fail.lm_cosine": "cosine_lr(step={step}, max_lr={max_lr}, min_lr={min_lr}, warmup_steps={warmup}, "
    "total_steps={total}) = {got}，与公式不符。",
    "fail.lm_cosine_type": "cosine_lr 返回了 {got}，应返回 Python float。",
    "fail.lm_clip_created": "clip_grad_norm_ 给原本没有梯度的参数 {param} 加上了梯度：请跳过 grad 为 None 的参数。",
    "fail.lm_clip_inplace": "clip_grad_norm_ 用新张量替换了参数 {params} 的梯度：请原地缩放（grad.mul_(...)）。",
    "fail.lm_train_loss": "train_step 在第 {step} 步返回了 {got}，不是相同权重和批次下更新之前的损失。",
    "fail.lm_train_lr": "第 {step} 步 train_step(lr={lr}) 之后，优化器各参数组的学习率是 {got}，而不是 {expected}：给定 lr 时要设置每一组"
    "的 lr，lr 为 None 时保持不变。",
    "fail.lm_overfit_loss": "在 10 首诗上训练 {steps} 步后损失是 {last}，没有低于 {target}：整个模型、优化器、学习率"
    "调度和 train_step 合在一起学不会正确实现能学会的内容。如果下面的某个任务没有通过，先修它；"
    "否则看它们之间的衔接（lr 是否设到每个参数组、梯度是否清零、损失的目标是否错位一位）。",
    "fail.lm_overfit_nonfinite": "在 10 首诗上训练到第 {step} 步（共 {steps} 步）时损失变成了 {value}，训练在此停止："
    "找找除以零或对零取对数（RMSNorm 没有 eps、整行都是 -inf 的 softmax），或过大的学习率。",
    "fail.lm_overfit_recite": "损失降下来了，但贪心 generate 从首字出发背错了 {total} 首诗中的 {wrong} 首（{examples}）："
    "模型已经学会了，所以看 temperature 为 0 时的 generate 和缓存（位置要从缓存长度接着算）。",
    # -- words inside a failure's example (what a call was given), said in the reader's language --------------
    "lm.example.a_list": "列表",
    "lm.example.a_generator": "生成器",
    "lm.example.tensor_list": "张量列表",
    "lm.example.the_defaults": "（全部用默认值）",
    "lm.example.default": "{value}（默认值）",
}
