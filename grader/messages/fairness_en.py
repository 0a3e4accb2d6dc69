"""English messages for how a check adapted to a submission (notes) and the fairness checks (issue 12)."""

MESSAGES = {
    "note.partly_isolated": "your {task} code does not use the contract's {names} (it has its own): this check graded your own version of it too, not the reference's.",
    "fail.residual_dropout": "{what}: with dropout=1.0 in train() mode (and the sublayers' own dropout off) the output is not the reference's: each sublayer's output must pass through a dropout with the layer's probability before the residual add (missing, or a fixed probability?).",
    "note.charged_beneath": "failed with your own parts beneath and passes over the reference's: the defect is in {tasks}, charged there, not here.",
    "note.not_isolated": "graded with your own parts: run over the reference's parts, your code raised "
                         "({detail}; {file}:{line}), because it relies on something of its own parts that the "
                         "contract does not fix. A mistake in a part beneath would show here too; its own task "
                         "names it.",
    "note.zero_bias": "{what} has no {names}: compared with the reference's set to zero (the missing parameters "
                      "are charged once, in the contract check).",
    "note.output_dropped": "{n} call(s) printed more than the output cap; the rest of their output was dropped "
                           "(printing costs no points).",
    "fail.defaults": "{what} built without {argument} behaves differently from the contract's default "
                     "{argument}={default}: {detail}",
    "fail.dropout_zero": "{what} built with dropout=0.0 in train() mode does not give its eval() output: some dropout "
                         "ignores the dropout argument (a fixed probability?).",
    "fail.padding_row": "{what}: the embedding row of token {token} {detail}; the contract's nn.Embedding(V, D) has "
                        "no padding_idx, every row trains.",
    "check.defaults": "constructor defaults are the contract's",
}
