"""English messages for how a check adapted to a submission (notes) and the fairness checks."""

MESSAGES = {
    "note.partly_isolated": "your {task} code does not use the contract's {names} (it has its own): this check graded your own version of it too, not the reference's.",
    "note.charged_beneath_whole": "failed with your own parts and passes with the reference's parts of {parts} "
                                  "and your own code for the rest: the defects are in {tasks}, charged there, not "
                                  "here.",
    "note.charged_beneath": "failed with your own parts beneath and passes over the reference's: the defect is in {tasks}, charged there, not here.",
    "note.not_isolated": "graded with your own parts: run over the reference's parts, your code raised "
                         "({detail}; {file}:{line}), because it relies on something of its own parts that the "
                         "contract does not fix. A mistake in a part beneath would show here too; its own task "
                         "names it.",
    "note.float32_inside": "{what} differs from the float64 reference by no more than a float32 computation does (statistics in float32, the result cast back): compared at float32 precision.",
    "note.zero_bias": "{what} has no {names}: compared with the reference's set to zero (the missing parameters "
                      "are charged once, in the contract check).",
    "note.output_dropped": "{n} call(s) printed more than the output cap; the rest of their output was dropped "
                           "(printing costs no points).",
    "fail.defaults": "{what} built without {argument} behaves differently from the contract's default "
                     "{argument}={default}: {detail}",
    "fail.defaults_spelled": "{what} built without {arguments} does not behave as when the contract's defaults "
                             "are passed ({defaults}): {detail}",
    "fail.default_left_out": "{what} called without {argument} does not give what passing the contract's default "
                             "{argument}={default} gives (the same inputs and seeds): {where} is {got} without it, "
                             "{expected} with it ({count} differ).",
    "fail.default_left_out_raised": "{what} called without {argument} (the contract's default is {argument}={default}) "
                                    "raised: {detail}",
    "fail.dropout_zero": "{what} built with dropout=0.0 in train() mode does not give its eval() output: some dropout "
                         "ignores the dropout argument (a fixed probability?).",
    "check.defaults": "constructor defaults are the contract's",
}
