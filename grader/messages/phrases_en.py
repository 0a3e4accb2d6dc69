"""Phrases passed as parameters (``messages.phrase``): what a sentence is about, in the sentence's language."""

MESSAGES = {
    "what.output_word": "output",
    "what.weights_word": "weights",
    "what.output": "{name} output",
    "what.logits": "{name} logits",
    "what.in_dtype": "{what} in {dtype}",
    "what.with_dtype": "{what} ({dtype})",
    "what.on_input": "{call} on {dtype} input",
    "what.output_call": "{name} output (call {call}, offset {offset})",
    "what.output_train_dropout": "{name} output in train() with dropout=1.0",
    "what.logits_cached": "{name} logits with caches (step {step}, positions {first}..{last})",
    "what.after_steps": "{name} after {steps} steps",
    "what.param_after_step": "parameter {index} (shape {shape}) after step {step}",
    "what.norm_returned": "the norm {name} returned",
    "what.grad_after": "the gradient of parameter {index} after {name}",
    "what.update": "{what} (update {update})",
    "what.sample_on": "{name} on {shape} logits",
}

MESSAGES.update({
    # what went wrong, when the kit words it (errors.said): said inside the error's sentence
    "say.params_mismatch": "the parameters of {what} do not match the contract",
    "say.not_module": "{call} is a {type}, not a torch.nn.Module",
    "say.not_tensor": "{what} returned {type}, expected a torch.Tensor",
    "say.tensor_subclass": "the code returned a {type}, a subclass of torch.Tensor; return a plain torch.Tensor",
    "say.too_deep": "the result is nested too deeply",
    "say.not_plain": "the result holds a {type}, which is not plain data",
    "say.sys_exit": "the code called {call}",
})
