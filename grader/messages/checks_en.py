"""What a check says about the submission's code: its verdicts (``fail.*``), the errors of running it
(``error.*``), notes on how it was graded (``note.*``), and the phrases passed into them (``what.*``, ``say.*``)."""

MESSAGES = {
    "fail.shape": "{what} has shape {got}, expected {expected}.",
    "fail.dtype": "{what} has dtype {got}, expected {expected}.",
    "fail.device": "{what} came back on device {got}, expected {expected}: build new tensors on the input's "
    "device (device=x.device).",
    "fail.values_exact": "{what}: {count} of {total} entries differ from the expected values; the first is "
    "at index {index}.",
    "fail.nonfinite": "{what} has NaN or inf at {count} of {total} entries (first at index {index}) where "
    "the expected values are finite.",
    "fail.mismatch": "{what}: {count} of {total} entries differ from the expected values; the first is at "
    "index {index} (where yours is {got_at}); max abs error {max_abs}, max rel error "
    "{max_rel}.",
    "fail.mismatch_abs": "{what}: {count} of {total} entries differ from the expected values, each of which "
    "is 0; the first is at index {index} (got {got_at}); max abs error {max_abs}.",
    "fail.mismatch_value": "{what} is {got_at}, {max_abs} away from the expected value.",
    "fail.inplace": "{what} modified its input(s) {inputs} in place; the contract says inputs are never modified.",
    "fail.shared_params": "{what} shares parameters between submodules ({groups}): build a new layer for "
    "each position instead of repeating one object.",
    "fail.param_names": "the parameters of {what} do not match the contract. Missing: {missing}. Unexpected: "
    "{unexpected}. Wrong shape: {wrong_shape}.",
    "fail.half_overflow": "{what} raised in {dtype}: {detail} ({file}:{line}). A fill value like -1e9 does "
    "not fit in float16; use float('-inf') or torch.finfo(scores.dtype).min.",
    "fail.half_nonfinite": "{what} produced NaN or inf in {dtype}.",
    "fail.eval_random": "{what} gives different outputs for the same input in eval() mode: dropout must be "
    "off in eval (use nn.Dropout, or F.dropout(..., training=self.training)).",
    "fail.train_no_dropout": "{what} with dropout={p} in train() mode gives exactly the eval() output: "
    "dropout is never applied.",
    "fail.not_equivariant": "{what} without a mask is not permutation-equivariant: permuting the input "
    "positions should permute the output the same way. Positions or heads are being "
    "mixed.",
    "fail.batch_mixing": "{what}: a batch row's output changes when other rows change; rows are being mixed "
    "(a view without transpose, or a reduction over the batch).",
    "fail.not_tensor": "{what} returned {got}, expected a torch.Tensor.",
    "fail.padding_leak": "{what}: changing the values at padded positions changed the output at real "
    "positions; the padding mask is not applied to the keys.",
    "fail.future_leak": "{what}: the output at position {position} changed when only positions >= "
    "{future_from} changed: information leaks from the future.",
    "fail.future_grad": "{what}: outputs before position {future_from} have a non-zero gradient with respect "
    "to later inputs: information leaks from the future.",
    "fail.flaky": "the result changed between two runs on the same input: {detail}",
    "error.missing_file": "{detail}.",
    "error.import_error": "importing the submission failed: {detail}.",
    "error.missing_name": "{detail}.",
    "error.not_implemented": "not implemented yet ({detail}).",
    "error.exception": "your code raised {detail} ({file}:{line}: {code}).",
    "error.contract": "{detail}. Missing: {missing}. Unexpected: {unexpected}. Wrong shape: {wrong_shape}. "
    "Shared: {shared}.",
    "error.contract_detail": "{detail}.",
    "error.bad_output": "{detail}.",
    "error.timeout": "{detail}.",
    "error.timeout_in": "your code did not finish within {seconds} s.",
    "error.timeout_in_total": "your code did not finish within the {seconds} s left of the {total} s all "
    "calls may take together.",
    "error.timeout_at": "your code did not finish within {seconds} s (it was at {file}:{line}: {code}).",
    "error.timeout_in_slow": "your code did not finish within {seconds} s, where the reference took "
    "{reference} s on the same call: a call this much slower is stopped early (an "
    "endless loop?).",
    "error.timeout_at_slow": "your code did not finish within {seconds} s, where the reference took "
    "{reference} s on the same call (it was at {file}:{line}: {code}): a call this "
    "much slower is stopped early (an endless loop?).",
    "error.timeout_again": "not run: the same code ran out of time ({seconds} s) in {check} already, and is "
    "not waited for again in this grading; once {check} finishes, this check runs as "
    "usual.",
    "error.timeout_at_total": "your code did not finish within the {seconds} s left of the {total} s all "
    "calls may take together (it was at {file}:{line}: {code}).",
    "error.timeout_used_up": "not run: the calls before it used up the {total} s all calls of your code may "
    "take together.",
    "error.crashed": "{detail}.",
    "error.banned": "{detail}.",
    "error.reference": "the reference implementation raised {detail} ({file}:{line}) on this check's input: "
    "the assignment (its reference or this check) is at fault, not your code; please "
    "report it.",
    "error.internal": "the grader itself failed on this check ({detail}); please report it.",
    "note.partly_isolated": "your {task} code does not use the contract's {names} (it has its own): this "
    "check graded your own version of it too, not the reference's.",
    "note.charged_beneath_whole": "failed with your own parts and passes with the reference's parts of "
    "{parts} and your own code for the rest: the defects are in {tasks}, "
    "charged there, not here.",
    "note.blocked_by": "failed while {tasks} beneath it fails: without the reference's parts this kit cannot tell "
    "whether the defect is here or there, so it is not judged here: it earns nothing here and loses nothing for good; fix {tasks} "
    "first (the final grade isolates this check over the reference's parts).",
    "note.blocked_by_own": "failed while another check of this task fails: the final grade runs this check over "
    "the reference's {names}, which this kit does not have, so it cannot tell whether the defect is here or in "
    "your {names}; it is not judged here: it earns nothing here and loses nothing for good. Fix the task's other failing checks first.",
    "note.not_in_bank": "not judged: this kit cannot judge this check on this machine, since it needs the "
    "reference's answer to a question ({probe}) that the kit's answer bank does not hold. Its points are not "
    "counted here; the final grade, which has the reference, judges it.",
    "note.failed_in_bank": "some examples needed the reference's answers to questions this kit's answer bank does "
    "not hold and were left out: the failing example shown is the smallest one the bank holds (the final grade, "
    "which has the reference, may show a smaller one).",
    "note.held_back_failed": "passed on the student kit's examples and failed on held-back examples (examples "
    "the kit never saw, drawn the same way): the example shown is one of those. A check earns its points only "
    "where it passes on both.",
    "note.undiagnosed_in_kit": "this kit cannot tell which known mistake, if any, this failure is: the answers of "
    "the known mistakes it recorded do not cover this example, so it names none here (nor in this task); the full "
    "grader names it.",
    "note.charged_beneath": "failed with your own parts beneath and passes over the reference's: the defect "
    "is in {tasks}, charged there, not here.",
    "note.not_isolated": "graded with your own parts: run over the reference's parts, your code raised "
    "({detail}; {file}:{line}), because it relies on something of its own parts that "
    "the contract does not fix. A mistake in a part beneath would show here too; its "
    "own task names it.",
    "note.float32_inside": "{what} differs from the float64 reference by no more than a float32 computation "
    "does (statistics in float32, the result cast back): compared at float32 "
    "precision.",
    "note.zero_bias": "{what} has no {names}: compared with the reference's set to zero (the missing "
    "parameters are charged once, in the contract check).",
    "note.devices_unusable": "Not graded on {devices}: the worker that ran your code could not compute there (a jail hides the GPU); the device checks ran on the CPU alone, and cost you nothing.",
    "note.output_dropped": "{n} call(s) printed more than the output cap; the rest of their output was "
    "dropped (printing costs no points).",
    "fail.defaults": "{what} built without {argument} behaves differently from the contract's default "
    "{argument}={default}: {detail}",
    "fail.defaults_spelled": "{what} built without {arguments} does not behave as when the contract's "
    "defaults are passed ({defaults}): {detail}",
    "fail.default_left_out": "{what} called without {argument} does not give what passing the contract's "
    "default {argument}={default} gives (the same inputs and seeds): {where} is "
    "{got} without it, {expected} with it ({count} differ).",
    "fail.default_left_out_raised": "{what} called without {argument} (the contract's default is "
    "{argument}={default}) raised: {detail}",
    "fail.dropout_zero": "{what} built with dropout=0.0 in train() mode does not give its eval() output: "
    "some dropout ignores the dropout argument (a fixed probability?).",
    "check.defaults": "constructor defaults are the contract's",
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
    "what.a_type": "a {type}",
    "what.an_type": "an {type}",
    "what.a_tuple": "a tuple of {count}",
    "what.none": "{value}",
    "what.default": "(default)",
    "what.nothing_dropped": "in train() mode nothing is dropped",
    "say.params_mismatch": "the parameters of {what} do not match the contract",
    "say.not_module": "{call} is a {type}, not a torch.nn.Module",
    "say.not_tensor": "{what} returned {type}, expected a torch.Tensor",
    "say.tensor_subclass": "the code returned a {type}, a subclass of torch.Tensor; return a plain torch.Tensor",
    "say.too_deep": "the result is nested too deeply",
    "say.not_plain": "the result holds a {type}, which is not plain data",
    "say.sys_exit": "the code called {call}",
    "say.timeout_again": "{probe} ran out of time in {check} already",
    "say.reference_failed": "ReferenceFailed (the grader's own exception, raised by your code): {error}",
    "say.missing_name": "{file} defines no {name}; expected it at the top level of the file",
    "say.missing_file": "no file {file} in {folder}",
    "say.not_output_weights": "{what} returned {type}, expected a tuple (output, weights)",
    "say.not_keys_values": "{what} returned {type}, expected a tuple (keys, values)",
    "say.loss_tensor": "{name} returned a tensor; expected a Python float (use loss.item())",
    "say.loss_not_float": "{name} returned {type}, expected a float",
    "say.length_not_int": "{what}.length is {type}, expected an int",
    "say.no_submodule": "{name} has no submodule {sub}",
    "say.not_cache_list": "{what} returned {type}, expected a list of KVCache",
    "say.not_group_list": "{what} returned {type}, expected a list of dicts",
    "say.group_not_dict": "{what} returned a list holding {type}, expected dicts",
    "say.worker_serves": "this worker serves {variant} only",
    "say.worker_serves_not": "this worker serves {variant}, not {asked}",
    "say.reply_tensors": "the result holds {size} bytes of tensors, more than the {cap} bytes that graded results "
    "ever need",
    "say.reply_unsendable": "the result could not be sent back: {error}",
    "say.reply_too_large": "a reply of {size} bytes, more than the {cap} bytes that graded results ever need (a "
    "result far larger than the inputs asked for)",
    "say.worker_bad_reply": "the worker sent back a reply that is not plain data while running {probe}: {why}",
    "say.reply_standin_unserved": "a stand-in's message from a worker that serves no reference parts",
    "say.reply_not_ready": "no ready message",
    "say.reply_undecodable": "cannot be decoded ({error})",
    "say.reply_not_dict": "a {type} instead of a dict",
    "say.reply_standin_not_dict": "a stand-in's message that is not a dict",
    "say.reply_findings_not_list": "findings is not a list",
    "say.reply_error_not_dict": "the error is not a dict",
    "say.reply_empty": "neither a result nor an error",
    "wire.key_type": "a dict key of type {type}",
    "wire.dtype": "the dtype {dtype}",
    "wire.layout": "a tensor with layout {layout} (only strided tensors cross)",
    "wire.tensor_dtype": "a tensor of dtype {dtype}",
    "say.worker_ended": "the worker process running the code {how} while running {probe}",
    "say.worker_ended_output": "the worker process running the code {how} while running {probe}; its last "
    "output:\n{output}",
    "say.exited": "exited with code {code}",
    "say.exited_os_exit": "exited with code {code} (the code called os._exit)",
    "say.killed": "was killed by {signal}",
    "say.killed_hint": "was killed by {signal} ({hint})",
    "say.signal.SIGSEGV": "a segmentation fault",
    "say.signal.SIGBUS": "a bus error",
    "say.signal.SIGABRT": "the process aborted",
    "say.signal.SIGFPE": "a floating-point exception",
    "say.signal.SIGKILL": "killed, possibly for using too much memory",
    "say.signal.SIGXCPU": "the CPU time limit of {seconds} s was reached",
    "say.signal.SIGXFSZ": "the file size limit was reached",
}
