"""English sentences of ``gradekit demo --submission``: the student's model beside the reference's."""

MESSAGES = {
    "demo.reference": "reference",
    "demo.yours": "yours",
    "demo.step": "step",
    "demo.training": "Training your code ({path}) and the reference the same way, each in a process of its own: "
    "{steps} steps each, seed {seed}.",
    "demo.progress": "reference: {reference}  ·  yours: {yours}",
    "demo.losses": "Training loss (the mean over the steps since the line before):",
    "demo.final_loss": "Final training loss: yours {yours}, the reference {reference}.",
    "demo.seconds": "Yours took {yours} s, the reference {reference} s (side by side).",
    "demo.learns_less": "After the same steps your model's loss is clearly higher than the reference's (or not a "
    "number): some piece of it does not do what the contract says. The full check tells which:",
    "demo.not_implemented": "The demo cannot run your code yet: {name} (task {task}, {file}) is not implemented yet.",
    "demo.missing_name": "The demo cannot run your code yet: {file} defines no {name} (task {task}) at its top level.",
    "demo.missing_file": "The demo cannot run your code yet: there is no {file} in {path}, where {name} (task {task}) "
    "belongs.",
    "demo.import_error": "The demo cannot run your code yet: {file} cannot be imported, so it cannot take {name} "
    "(task {task}) from it:",
    "demo.needs": "The demo runs your {names}: it needs the tasks {tasks} done (and what they build on).",
    "demo.check_task": "Finish task {task} and check it with:",
    "demo.run_again": "then run the demo again:",
    "demo.raised": "Your {name} (task {task}) raised an error:",
    "demo.raised_while": "Your {name} (task {task}) raised an error while the demo ran your {piece}:",
    "demo.bad_output": "The demo could not use what your {name} (task {task}) returned:",
    "demo.check_verbose": "Check that task (-v shows your own traceback):",
    "demo.timeout": "Your code did not finish training and decoding in {limit} s, where the reference took {reference} "
    "s for the same {steps} steps, and was stopped.",
    "demo.timeout_first": "Your code did not finish its first training step and decoding in {limit} s, and was "
    "stopped.",
    "demo.timeout_at": "It was in your {name} (task {task}):",
    "demo.timeout_progress": "Its last progress line: {line}",
    "demo.timeout_hint": "Something in it is much slower than it needs to be (an endless loop, or a Python loop over "
    "positions or rows?). The check times each piece:",
    "demo.crashed": "The process running your code ended without an answer ({how}).",
    "demo.crashed_output": "Its last output:",
    "demo.exit_code": "exit code {code}",
    "demo.signal": "killed by signal {signal}",
    "demo.unreadable": "The demo could not read the answer of the process running your code: {detail}",
}
