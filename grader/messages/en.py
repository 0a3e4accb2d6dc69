"""English messages. Keys: ``fail.*`` wrong results, ``error.*`` code that raised or broke the contract,
``ui.*`` interface text, ``report.*`` the HTML report's. An assignment's own sentences are in its
``messages/`` folder (a check's title is the first line of its docstring)."""

MESSAGES = {
    # -- wrong results ------------------------------------------------------------------------------
    "fail.shape": "{what} has shape {got}, expected {expected}.",
    "fail.dtype": "{what} has dtype {got}, expected {expected}.",
    "fail.device": "{what} came back on device {got}, expected {expected}: build new tensors on the input's device "
                   "(device=x.device).",
    "fail.values_exact": "{what}: {count} of {total} entries differ from the expected values; the first is at "
                         "index {index}.",
    "fail.nonfinite": "{what} has NaN or inf at {count} of {total} entries (first at index {index}) where the "
                      "expected values are finite.",
    "fail.mismatch": "{what}: {count} of {total} entries differ from the expected values; the first is at index "
                     "{index} (where yours is {got_at}); max abs error {max_abs}, max rel error {max_rel}.",
    "fail.mismatch_abs": "{what}: {count} of {total} entries differ from the expected values, each of which is 0; "
                         "the first is at index {index} (got {got_at}); max abs error {max_abs}.",
    "fail.mismatch_value": "{what} is {got_at}, {max_abs} away from the expected value.",
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
    "fail.not_equivariant": "{what} without a mask is not permutation-equivariant: permuting the input positions "
                            "should permute the output the same way. Positions or heads are being mixed.",
    "fail.batch_mixing": "{what}: a batch row's output changes when other rows change; rows are being mixed "
                         "(a view without transpose, or a reduction over the batch).",
    "fail.not_tensor": "{what} returned {got}, expected a torch.Tensor.",
    "fail.padding_leak": "{what}: changing the values at padded positions changed the output at real positions; "
                         "the padding mask is not applied to the keys.",
    "fail.future_leak": "{what}: the output at position {position} changed when only positions >= {future_from} "
                        "changed: information leaks from the future.",
    "fail.future_grad": "{what}: outputs before position {future_from} have a non-zero gradient with respect to "
                        "later inputs: information leaks from the future.",
    "fail.flaky": "the result changed between two runs on the same input: {detail}",
    # -- code that raised ---------------------------------------------------------------------------
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
    "error.timeout_in_total": "your code did not finish within the {seconds} s left of the {total} s all calls may "
                              "take together.",
    "error.timeout_at": "your code did not finish within {seconds} s (it was at {file}:{line}: {code}).",
    "error.timeout_in_slow": "your code did not finish within {seconds} s, where the reference took {reference} s on "
                             "the same call: a call this much slower is stopped early (an endless loop?).",
    "error.timeout_at_slow": "your code did not finish within {seconds} s, where the reference took {reference} s on "
                             "the same call (it was at {file}:{line}: {code}): a call this much slower is stopped "
                             "early (an endless loop?).",
    "error.timeout_again": "not run: the same code ran out of time ({seconds} s) in {check} already, and is not "
                           "waited for again in this grading; once {check} finishes, this check runs as usual.",
    "error.timeout_at_total": "your code did not finish within the {seconds} s left of the {total} s all calls may "
                              "take together (it was at {file}:{line}: {code}).",
    "error.timeout_used_up": "not run: the calls before it used up the {total} s all calls of your code may take "
                             "together.",
    "error.crashed": "{detail}.",
    "error.banned": "{detail}.",
    "error.reference": "the reference implementation raised {detail} ({file}:{line}) on this check's input: the assignment (its reference or this check) is at fault, not your code; please report it.",
    "error.internal": "the grader itself failed on this check ({detail}); please report it.",
    # -- interface ---------------------------------------------------------------------------------
    "ui.note": "note",
    "ui.report_written": "{kind} report written to {path}",
    "ui.report_not_written": "the {kind} report could not be written to {path}: {detail}",
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
    "plugin.banned_cost": "banned API used in this task: its points are withheld (use --gradekit-allow-banned to "
                          "ignore).",
    "ui.reproduce": "reproduce",
    "ui.diagnosis": "Looks like",
    "ui.hint": "Hint",
    "ui.example": "Minimal failing example",
    "ui.all_passed": "All checks passed.",
    "ui.public_passed": "All public checks passed ({hidden} hidden checks are graded later).",
    "ui.some_failed": "{failed} of {total} checks did not pass.",
    "ui.todo": "Checks waiting for code not written yet: {count}.",
    "ui.todo_word": "to do",
    "ui.same_error": "the same error as under {check} above.",
    "ui.same_mistake": "the same mistake as under {check} above.",
    "ui.load_error": "{file} could not be imported: {detail}",
    "ui.seed": "seed",
    "ui.derandomized": "the same examples every run",
    "ui.duration": "time",
    "ui.profile": "profile",
    # -- gradekit watch ------------------------------------------------------------------------------
    "watch.title": "gradekit watch: {path}  (profile {profile})",
    "watch.grading": "grading…",
    "watch.more": "{count} more checks did not pass (each is told when it comes first, or all by gradekit check).",
    "watch.waiting": "Graded again as you save; Ctrl-C stops.",
    # -- the HTML, JUnit and Gradescope reports ------------------------------------------------------
    "ui.submission": "submission",
    "ui.when": "graded",
    "ui.mode": "mode",
    "ui.mode_isolated": "worker process (isolated)",
    "ui.mode_unsealed": "worker process, not sealed: it ran as the grading user, not in a jail of its own "
                        "(grade as root for a sealed grade)",
    "ui.mode_in_process": "in process",
    "report.environment": "Environment",
    "report.load_errors": "Files that could not be imported",
    "report.tasks": "Tasks",
    "report.not_implemented_tasks": "Not implemented yet: {tasks}.",
    "report.figures": "Pictures",
    "report.axis_step": "training step",
    "report.axis_loss": "loss",
    "report.axis_last": "last axis",
    "report.axis_second_last": "second-to-last axis",
    "report.mismatch_title": "Where the values of {what} differ from the expected ones",
    "report.mismatch_legend": "|yours - expected|",
    "report.legend_differs": "differs",
    "report.legend_matches": "matches",
    "report.legend_nonfinite": "NaN or inf",
    "report.mismatch_note": "The error of the minimal failing example on its last two axes (largest over the "
                            "other axes).",
    "report.mismatch_note_exact": "Where the minimal failing example differs from the expected values, on its "
                                  "last two axes (an entry differs when it differs anywhere along the others).",
    "report.error_heading": "Where your code raised",
    "report.error_where": "at",
    "report.trace": "Traceback (your files only)",
    "report.at": "at",
    "report.passed_checks": "passed: {count}",
    "report.banned_heading": "Banned APIs",
    "report.banned_allowed": "Banned APIs are allowed in this run: no points were withheld.",
    "report.footer": "Generated by gradekit {version} on {when}. This file makes no network requests.",
    "report.figure_failed": "Your code could not draw this picture: {detail}",
    "report.figure_not_implemented": "This picture needs code that is not implemented yet: {detail}",
    "report.count.passed": "{count} passed",
    "report.count.failed": "{count} failed",
    "report.count.error": "{count} raised an error",
    "report.count.skipped": "{count} skipped",
    "report.count.todo": "{count} wait for code not written yet",
    "report.visibility.hidden": "hidden from students",
    "report.visibility.after_due_date": "shown after the due date",
    "report.visibility.after_published": "shown after grades are published",
    # The loss curve of any check that leaves one (grader.checks.common.judge_losses' artifacts).
    "report.loss_title": "Overfitting 10 samples: loss per step",
    "report.loss_target": "target {target}",
    "report.loss_summary": "The loss went from {first} to {last} in {steps} steps.",
    "report.loss_nonfinite": "The loss became {value} at step {step}; the curve stops there.",
    "report.loss_stop": "{value} at step {step}",
    "report.figure_shape": "Your code returned {what} with shape {got}, expected {expected}.",
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
