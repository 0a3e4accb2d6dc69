"""What a check says about the submission's code: its verdicts (``fail.*``), the errors of running it
(``error.*``), notes on how it was graded (``note.*``), and the phrases passed into them (``what.*``, ``say.*``)."""

MESSAGES = {
    'fail.shape': '{what} 的形状是 {got}，应为 {expected}。',
    'fail.dtype': '{what} 的 dtype 是 {got}，应为 {expected}。',
    'fail.device': '{what} 返回在设备 {got} 上，应在 {expected} 上：新建张量时请放在输入所在的设备上（device=x.device）。',
    'fail.values_exact': '{what} 在 {total} 个元素中有 {count} 个不同；第一个位于下标 {index}。',
    'fail.nonfinite': '{what} 在 {total} 个元素中有 {count} 个为 NaN 或 inf（第一个位于下标 {index}），而期望值是有限数。',
    'fail.mismatch': '{what} 与期望值在 {total} 个元素中有 {count} 个不一致；第一'
                     '个位于下标 {index}（你的值是 {got_at}）；最大绝对误差 {max_a'
                     'bs}，最大相对误差 {max_rel}。',
    'fail.mismatch_abs': '{what} 与期望值在 {total} 个元素中有 {count} 个不一致，'
                         '这些位置的期望值都是 0；第一个位于下标 {index}（得到 {got_at}'
                         '）；最大绝对误差 {max_abs}。',
    'fail.mismatch_value': '{what} 是 {got_at}，与期望值相差 {max_abs}。',
    'fail.inplace': '{what} 原地修改了输入 {inputs}；约定要求不修改输入。',
    'fail.shared_params': '{what} 的子模块共享了参数（{groups}）：每一层都要新建一个对象，不要重复同一个对象。',
    'fail.param_names': '{what} 的参数与约定不符。缺少：{missing}。多出：{unexpected}。形状不对：{wrong_shape}。',
    'fail.half_overflow': '{what} 在 {dtype} 下报错：{detail}（{file}:{line}）。-1e9 这样的填充值超出 float16 的范围；请用 '
                          "float('-inf') 或 torch.finfo(scores.dtype).min。",
    'fail.half_nonfinite': '{what} 在 {dtype} 下产生了 NaN 或 inf。',
    'fail.eval_random': '{what} 在 eval() 模式下同一输入给出不同输出：eval 时必须关闭 dropout（用 nn.Dropout，或 F.dropout(..., '
                        'training=self.training)）。',
    'fail.train_no_dropout': '{what} 设置 dropout={p} 并处于 train() 模式，输出却与 eval() 完全相同：dropout 没有生效。',
    'fail.not_equivariant': '{what} 在无掩码时不满足置换等变：输入位置重排后，输出应按同样方式重排。位置或头被混在了一起。',
    'fail.batch_mixing': '{what}：改变其他样本时，某个样本的输出也变了；批次之间发生了混合（例如 view 前缺少 transpose）。',
    'fail.not_tensor': '{what} 返回了 {got}，应返回 torch.Tensor。',
    'fail.padding_leak': '{what}：改变填充位置上的值，真实位置的输出也变了；填充掩码没有作用在键上。',
    'fail.future_leak': '{what}：只改变了位置 >= {future_from} 的输入，位置 {position} 的输出却变了：信息从未来泄露。',
    'fail.future_grad': '{what}：位置 {future_from} 之前的输出对之后的输入梯度不为零：信息从未来泄露。',
    'fail.flaky': '同一输入两次运行结果不同：{detail}',
    'error.missing_file': '{detail}。',
    'error.import_error': '导入提交的代码失败：{detail}。',
    'error.missing_name': '{detail}。',
    'error.not_implemented': '尚未实现（{detail}）。',
    'error.exception': '你的代码抛出了 {detail}（{file}:{line}：{code}）。',
    'error.contract': '{detail}。缺少：{missing}。多出：{unexpected}。形状不对：{wrong_shape}。共享：{shared}。',
    'error.contract_detail': '{detail}。',
    'error.bad_output': '{detail}。',
    'error.timeout': '{detail}。',
    'error.timeout_in': '你的代码没有在 {seconds} 秒内完成。',
    'error.timeout_in_total': '你的代码没有在剩下的 {seconds} 秒内完成（所有调用合计最多 {total} 秒）。',
    'error.timeout_at': '你的代码没有在 {seconds} 秒内完成（当时运行到 {file}:{line}：{code}）。',
    'error.timeout_in_slow': '你的代码没有在 {seconds} 秒内完成，而参考实现在同一次调用上只用了 {reference} 秒：慢这么多的调用会被提前停止（是否有死循环？）。',
    'error.timeout_at_slow': '你的代码没有在 {seconds} 秒内完成，而参考实现在同一次调用上只用了'
                             ' {reference} 秒（当时运行到 {file}:{line}：{co'
                             'de}）：慢这么多的调用会被提前停止（是否有死循环？）。',
    'error.timeout_again': '未运行：同一段代码已在 {check} 中超时（{seconds} 秒），本次评分不再重复等待；{check} 能按时完成后，这项检查会照常运行。',
    'error.timeout_at_total': '你的代码没有在剩下的 {seconds} 秒内完成（所有调用合计最多 {total} 秒；当时运行到 {file}:{line}：{code}）。',
    'error.timeout_used_up': '未运行：之前的调用已用完你的代码所有调用合计可用的 {total} 秒。',
    'error.crashed': '{detail}。',
    'error.banned': '{detail}。',
    'error.reference': '参考实现在本检查的输入上抛出 {detail}（{file}:{line}）：问题出在作业本身（参考实现或本检查），不是你的代码；请报告。',
    'error.internal': '评分器自身在此检查上出错（{detail}），请反馈给我们。',
    'note.partly_isolated': '你的 {task} 代码没有使用约定中的 {names}（它有自己的实现）：本项检查也评了你自己的这部分，而不是参考实现。',
    'note.charged_beneath_whole': '使用你自己的部件时失败；把 {parts} 换成参考实现、其余仍用你的代码后通过：问题出在 {tasks}，已在那里扣分，这里不再扣分。',
    'note.charged_beneath': '使用你自己的下层部件时失败，换成参考实现的部件后通过：问题出在 {tasks}，已在那里扣分，这里不再扣分。',
    'note.not_isolated': '改用你自己的各部分评分：在参考实现的部件之上运行时，你的代码报错（{detail'
                         '}；{file}:{line}），因为它依赖自己部件上某个约定之外的属性。下层部'
                         '件中的错误也会在这里显现；该错误由其所属任务指出。',
    'note.float32_inside': '{what} 与 float64 参考实现的差异不超过一次 float32 计'
                           '算的舍入（在 float32 中计算统计量再转回原 dtype）：按 floa'
                           't32 精度比较。',
    'note.zero_bias': '{what} 没有 {names}：比较时把参考实现中的对应参数设为零（缺少的参数只在约定检查中扣分一次）。',
    'note.output_dropped': '有 {n} 次调用打印的内容超过输出上限，超出部分已丢弃（打印不扣分）。',
    'fail.defaults': '{what} 不传 {argument} 时的行为与约定的默认值 {argument}={default} 不同：{detail}',
    'fail.defaults_spelled': '{what} 不传 {arguments} 时，与显式传入约定默认值（{defaults}）时的行为不同：{detail}',
    'fail.default_left_out': '调用 {what} 时不传 {argument}，结果与传入约定默认值 {a'
                             'rgument}={default} 时不同（输入与随机种子相同）：{whe'
                             're} 不传时为 {got}，传入时为 {expected}（{count}'
                             ' 不同）。',
    'fail.default_left_out_raised': '调用 {what} 时不传 {argument}（约定默认值为 {argument}={default}）抛出了异常：{detail}',
    'fail.dropout_zero': '{what} 以 dropout=0.0 构造并处于 train() 模式时，输出与 eval() 不同：某个 dropout 没有使用 dropout 参数（写死了概率？）。',
    'check.defaults': '构造函数的默认值符合约定',
    'what.output_word': '输出',
    'what.weights_word': '注意力权重',
    'what.output': '{name} 的输出',
    'what.logits': '{name} 的 logits',
    'what.in_dtype': '{what}（{dtype}）',
    'what.with_dtype': '{what}（{dtype}）',
    'what.on_input': '{call} 在 {dtype} 输入上的结果',
    'what.output_call': '{name} 的输出（第 {call} 次调用，偏移 {offset}）',
    'what.output_train_dropout': '{name} 在 train() 且 dropout=1.0 时的输出',
    'what.logits_cached': '{name} 使用缓存时的 logits（第 {step} 步，位置 {first}..{last}）',
    'what.after_steps': '{steps} 步之后的 {name}',
    'what.param_after_step': '第 {step} 步之后的参数 {index}（形状 {shape}）',
    'what.norm_returned': '{name} 返回的范数',
    'what.grad_after': '{name} 之后参数 {index} 的梯度',
    'what.update': '{what}（第 {update} 次 update）',
    'what.sample_on': '{name} 在 {shape} 的 logits 上的结果',
    'say.params_mismatch': '{what} 的参数与接口约定不符',
    'say.not_module': '{call} 是一个 {type}，不是 torch.nn.Module',
    'say.not_tensor': '{what} 返回了 {type}，应返回 torch.Tensor',
    'say.tensor_subclass': '代码返回了 {type}，它是 torch.Tensor 的子类；请返回普通的 torch.Tensor',
    'say.too_deep': '返回结果嵌套层数过深',
    'say.not_plain': '返回结果中含有 {type}，它不是普通数据',
    'say.sys_exit': 'SystemExit：代码调用了 {call}',
}
