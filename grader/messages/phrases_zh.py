"""Phrases passed as parameters (``messages.phrase``): what a sentence is about, in the sentence's language."""

MESSAGES = {
    "what.output_word": "输出",
    "what.weights_word": "注意力权重",
    "what.output": "{name} 的输出",
    "what.logits": "{name} 的 logits",
    "what.in_dtype": "{what}（{dtype}）",
    "what.with_dtype": "{what}（{dtype}）",
    "what.on_input": "{call} 在 {dtype} 输入上的结果",
    "what.output_call": "{name} 的输出（第 {call} 次调用，偏移 {offset}）",
    "what.output_train_dropout": "{name} 在 train() 且 dropout=1.0 时的输出",
    "what.logits_cached": "{name} 使用缓存时的 logits（第 {step} 步，位置 {first}..{last}）",
    "what.after_steps": "{steps} 步之后的 {name}",
    "what.param_after_step": "第 {step} 步之后的参数 {index}（形状 {shape}）",
    "what.norm_returned": "{name} 返回的范数",
    "what.grad_after": "{name} 之后参数 {index} 的梯度",
    "what.update": "{what}（第 {update} 次 update）",
    "what.sample_on": "{name} 在 {shape} 的 logits 上的结果",
}

MESSAGES.update({
    # what went wrong, when the kit words it (errors.said): said inside the error's sentence
    "say.params_mismatch": "{what} 的参数与接口约定不符",
    "say.not_module": "{call} 是一个 {type}，不是 torch.nn.Module",
    "say.not_tensor": "{what} 返回了 {type}，应返回 torch.Tensor",
    "say.tensor_subclass": "代码返回了 {type}，它是 torch.Tensor 的子类；请返回普通的 torch.Tensor",
    "say.too_deep": "返回结果嵌套层数过深",
    "say.not_plain": "返回结果中含有 {type}，它不是普通数据",
    "say.sys_exit": "SystemExit：代码调用了 {call}",
})
