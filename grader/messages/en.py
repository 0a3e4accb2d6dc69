"""English messages. Keys: ``fail.*`` wrong results, ``error.*`` code that raised or broke the contract,
``ui.*`` interface text, ``task.*`` task titles, ``check.*`` check titles."""

MESSAGES = {
    # -- wrong results ------------------------------------------------------------------------------
    "fail.shape": "{what} has shape {got}, expected {expected}.",
    "fail.dtype": "{what} has dtype {got}, expected {expected}.",
    "fail.device": "{what} came back on device {got}, expected {expected}: build new tensors on the input's device "
                   "(device=x.device).",
    "fail.values_exact": "{what} differs at {count} of {total} entries; the first is at index {index}.",
    "fail.nonfinite": "{what} has NaN or inf at {count} of {total} entries (first at index {index}) where the "
                      "expected values are finite.",
    "fail.mismatch": "{what} differs from the expected values at {count} of {total} entries; first at index "
                     "{index}; max abs error {max_abs}, max rel error {max_rel}.",
    "fail.inplace": "{what} modified its input(s) {inputs} in place; the contract says inputs are never modified.",
    "fail.shared_params": "{what} shares parameters between submodules ({groups}): build a new layer for each "
                          "position instead of repeating one object.",
    "fail.param_names": "the parameters of {what} do not match the contract. Missing: {missing}. Unexpected: "
                        "{unexpected}. Wrong shape: {wrong_shape}.",
    "fail.half_overflow": "{what} raised in {dtype}: {detail} ({file}:{line}). A fill value like -1e9 does not fit "
                          "in float16; use float('-inf') or torch.finfo(scores.dtype).min.",
    "fail.half_nonfinite": "{what} produced NaN or inf in {dtype}.",
    "fail.eval_random": "{what} gives different outputs for the same input in eval() mode: dropout must be off in "
                        "eval (use nn.Dropout, or F.dropout(..., training=self.training)).",
    "fail.train_no_dropout": "{what} with dropout={p} in train() mode gives exactly the eval() output: dropout is "
                             "never applied.",
    "fail.blocked_nonzero": "the attention weight at {index} is {value} although the mask blocks it; blocked "
                            "weights must be exactly 0.",
    "fail.rows_not_normalised": "attention weight rows do not sum to 1 (worst error {error}) or are negative: the "
                                "softmax must run over the keys (last dimension).",
    "fail.sdpa_dropout_unused": "the dropout module passed to scaled_dot_product_attention was not applied to the "
                                "weights.",
    "fail.sdpa_dropout_mismatch": "the returned weights are not the ones that multiplied value: return the weights "
                                  "after dropout.",
    "fail.mha_divisible": "MultiHeadAttention(d_model={d_model}, num_heads={num_heads}) raised {raised}; expected "
                          "ValueError because {num_heads} does not divide {d_model}.",
    "fail.not_equivariant": "{what} without a mask is not permutation-equivariant: permuting the input positions "
                            "should permute the output the same way. Positions or heads are being mixed.",
    "fail.batch_mixing": "{what}: a batch row's output changes when other rows change; rows are being mixed "
                         "(a view without transpose, or a reduction over the batch).",
    "fail.pe_parameter": "PositionalEncoding has trainable parameters {names}; the table must be a buffer "
                         "(register_buffer), never trained.",
    "fail.pe_missing": "PositionalEncoding has no buffer named 'pe' (buffers found: {found}); register the table "
                       "with self.register_buffer('pe', ...).",
    "fail.pe_not_moved": "the table 'pe' did not follow .to(dtype) / .to(device): keep it in a registered buffer, "
                         "not a plain attribute.",
    "fail.ln_init": "LayerNorm must start with weight = 1 and bias = 0.",
    "fail.not_tensor": "{what} returned {got}, expected a torch.Tensor.",
    "fail.padding_leak": "{what}: changing the values at padded positions changed the output at real positions; "
                         "the padding mask is not applied to the keys.",
    "fail.future_leak": "{what}: the output at position {position} changed when only positions >= {future_from} "
                        "changed: information leaks from the future.",
    "fail.future_grad": "{what}: outputs before position {future_from} have a non-zero gradient with respect to "
                        "later inputs: information leaks from the future.",
    "fail.not_xavier": "parameter {name} is not Xavier-uniform initialised (expected |w| <= {bound} and std about "
                       "{expected_std}, got std {std}).",
    "fail.no_positions": "the encoder's output is permutation-equivariant: the positional encoding has no effect.",
    "fail.greedy_too_long": "greedy_decode generated {got} tokens although max_len={max_len}.",
    "fail.train_loss": "the loss returned by train_step at step {step} is {got}, different from the expected "
                       "loss for the same weights and batch.",
    "fail.noam": "noam_lr(step={step}, d_model={d_model}, warmup_steps={warmup}) = {got}, which does not match "
                 "the formula.",
    "fail.param_count": "count_parameters returned {got}, off by {difference} from the real parameter count.",
    "fail.overfit_loss": "after {steps} training steps on 10 samples the loss is {last}, not below {target}: the "
                         "model does not learn.",
    "fail.overfit_decode": "the loss fell, but greedy_decode reproduces only {wrong} fewer than all 10 training "
                           "targets (for example: {examples}).",
    "fail.flaky": "the result changed between two runs on the same input: {detail}",
    # -- code that raised ---------------------------------------------------------------------------
    "error.missing_file": "{detail}.",
    "error.import_error": "importing the submission failed: {detail} ({file}:{line}).",
    "error.missing_name": "{detail}.",
    "error.not_implemented": "not implemented yet ({detail}).",
    "error.exception": "your code raised {detail} ({file}:{line}: {code}).",
    "error.contract": "{detail}. Missing: {missing}. Unexpected: {unexpected}. Wrong shape: {wrong_shape}. "
                      "Shared: {shared}.",
    "error.bad_output": "{detail}.",
    "error.timeout": "{detail}.",
    "error.crashed": "{detail}.",
    "error.banned": "{detail}.",
    "error.internal": "the grader itself failed on this check ({detail}); please report it.",
    # -- interface ---------------------------------------------------------------------------------
    "ui.note": "note",
    "ui.title": "gradekit report",
    "ui.score": "Score",
    "ui.task": "Task",
    "ui.points": "Points",
    "ui.check": "Check",
    "ui.status": "Status",
    "ui.passed": "passed",
    "ui.failed": "failed",
    "ui.error": "error",
    "ui.skipped": "skipped",
    "ui.not_implemented": "not implemented yet",
    "ui.blocked_by": "fails only because a task it builds on fails: {tasks}",
    "ui.banned": "banned API {name} at {file}:{line}: {code}",
    "ui.banned_withheld": "All checks passed, but points are withheld for banned APIs in: {tasks}.",
    "ui.banned_cost": "banned API used in this task: its points are withheld (use --allow-banned to ignore).",
    "ui.reproduce": "reproduce",
    "ui.diagnosis": "Looks like",
    "ui.hint": "Hint",
    "ui.example": "Minimal failing example",
    "ui.all_passed": "All checks passed.",
    "ui.public_passed": "All public checks passed ({hidden} hidden checks are graded later).",
    "ui.some_failed": "{failed} of {total} checks did not pass.",
    "ui.load_error": "{file} could not be imported: {detail}",
    "ui.seed": "seed",
    "ui.derandomized": "derandomized",
    "ui.duration": "time",
    "ui.profile": "profile",
    # -- the HTML, JUnit and Gradescope reports ------------------------------------------------------
    "ui.submission": "submission",
    "ui.when": "graded",
    "ui.mode": "mode",
    "ui.mode_isolated": "worker process (isolated)",
    "ui.mode_in_process": "in process",
    "report.environment": "Environment",
    "report.load_errors": "Files that could not be imported",
    "report.tasks": "Tasks",
    "report.not_implemented_tasks": "Not implemented yet: {tasks}.",
    "report.figures": "Pictures",
    "report.attention_title": "Attention weights",
    "report.attention_note": "Made-up query and key vectors for the syllables of one corpus sentence, causal mask:",
    "report.attention_yours": "Your scaled_dot_product_attention",
    "report.attention_reference": "Reference",
    "report.attention_legend": "weight",
    "report.attention_same": "Your weights match the reference's.",
    "report.attention_differs": "Your weights differ from the reference's by up to {diff}.",
    "report.axis_key": "key (attended to)",
    "report.axis_query": "query",
    "report.axis_position": "position",
    "report.axis_dimension": "dimension",
    "report.axis_step": "training step",
    "report.axis_loss": "loss",
    "report.axis_last": "last axis",
    "report.axis_second_last": "second-to-last axis",
    "report.pe_title": "Positional-encoding table",
    "report.pe_caption": "PositionalEncoding(d_model={d_model}, max_len={max_len}): the buffer pe, one column per "
                         "position, one row per dimension.",
    "report.pe_legend": "value",
    "report.pe_reference_note": "Your table could not be built, so this is the reference's table, for comparison.",
    "report.loss_title": "Overfitting 10 samples: loss per step",
    "report.loss_target": "target {target}",
    "report.loss_summary": "The loss went from {first} to {last} in {steps} steps.",
    "report.loss_nonfinite": "The loss became NaN or inf at step {step}; the curve stops there.",
    "report.mismatch_title": "Where {what} differs",
    "report.mismatch_legend": "|yours - expected|",
    "report.mismatch_legend_exact": "1 = differs",
    "report.mismatch_note": "The error of the minimal failing example on its last two axes (largest over the "
                            "other axes); grey means NaN or inf.",
    "report.mismatch_note_exact": "The entries of the minimal failing example that differ (1) or match (0), "
                                  "on its last two axes.",
    "report.error_heading": "Where your code raised",
    "report.error_where": "at",
    "report.trace": "Traceback (your files only)",
    "report.at": "at",
    "report.passed_checks": "{count} passed checks",
    "report.banned_heading": "Banned APIs",
    "report.banned_allowed": "Banned APIs are allowed in this run: no points were withheld.",
    "report.footer": "Generated by gradekit {version} on {when}. This file makes no network requests.",
    "report.figure_failed": "Your code could not draw this picture: {detail}",
    "report.figure_not_implemented": "This picture needs code that is not implemented yet: {detail}",
    "report.count.passed": "{count} passed",
    "report.count.failed": "{count} failed",
    "report.count.error": "{count} raised an error",
    "report.count.skipped": "{count} skipped",
    "report.visibility.hidden": "hidden from students",
    "report.visibility.after_due_date": "shown after the due date",
    "report.visibility.after_published": "shown after grades are published",
    "report.figure_shape": "Your code returned {what} with shape {got}, expected {expected}.",
    "report.figure_no_pe": "PositionalEncoding has no buffer named 'pe' (buffers found: {found}).",
    "report.example.config": "configuration",
    "report.example.shapes": "input shapes",
    "report.example.first_index": "first differing index",
    "report.example.max_abs_error": "max abs error",
    "report.example.max_rel_error": "max rel error",
    "report.example.mismatched": "differing entries",
    "report.example.total": "entries",
    "report.example.device": "device",
    "report.example.dtype": "dtype",
    "report.example.permutation": "permutation",
    "report.example.first_loss": "first loss",
    "report.example.last_loss": "last loss",
}
