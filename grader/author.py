"""The kit's face for assignment authors: everything an assignment (``assignments/<name>/``) may import from the
kit, in one place. An assignment imports ``from grader.author import ...`` and nothing else of ``grader``
(``tests/unit/test_author_api.py`` says so); what is not here is the kit's own and may change.

Each name is imported from its module on first use, so an assignment's checks do not pull in the practice, demo or
report machinery they never use (``gradekit check`` starts as fast as before). ``docs/ASSIGNMENTS.md`` says how
the pieces fit together."""

import importlib

_WHERE = {
    # declaring an assignment
    "Assignment": "grader.assignment",
    "Task": "grader.assignment",
    # the catalogue of known mistakes
    "bug": "grader.bugs.catalogue",
    # writing a check
    "Fail": "grader.checks.base",
    "check": "grader.checks.base",
    # what the reference answered, kept for every grading of the process
    "reference_memo": "grader.checks.base",
    # comparing a result with the reference's
    "check_tensor": "grader.checks.compare",
    "MISMATCH": "grader.checks.compare",
    "TOL": "grader.checks.compare",
    # drawing examples (Hypothesis strategies)
    "seeds": "grader.strategies",
    "randn": "grader.strategies",
    "random_state": "grader.strategies",
    "random_tokens": "grader.strategies",
    "distinct_ints": "grader.strategies",
    # the cases a check draws, and the example a report shows
    "Case": "grader.checks.cases",
    "shown_example": "grader.checks.cases",
    # checks every assignment's parts need (contract, equivalence, devices, low precision, defaults)
    "contract_params": "grader.checks.common",
    "defaults_agree": "grader.checks.common",
    "equivalent": "grader.checks.common",
    "float32_close": "grader.checks.common",
    "low_precision": "grader.checks.common",
    "meta_runs": "grader.checks.common",
    "ref_state": "grader.checks.common",
    "defaults_called": "grader.checks.common",
    "float32_runs": "grader.checks.common",
    "run_low_precision": "grader.checks.common",
    "same_params": "grader.checks.common",
    "judge_losses": "grader.checks.common",
    "dropout_behaviour": "grader.checks.common",
    "method_defaults": "grader.checks.common",
    "no_inplace": "grader.checks.common",
    "nonfinite_name": "grader.checks.common",
    # sentences in the student's language
    "text": "grader.messages",
    "quiz_messages": "grader.messages",
    # the demo
    "demo": "grader",
    # text for a terminal
    "columns": "grader.safetext",
    "for_terminal": "grader.safetext",
    "pad": "grader.safetext",
    # what student code did wrong, as data
    "SubmissionError": "grader.errors",
    "said": "grader.errors",
    "SAY": "grader.errors",
    # words passed into a sentence, said in its language
    "phrase": "grader.messages",
    # the report's pictures
    "failure": "grader.figure_data",
    "rows": "grader.figure_data",
    # interview drills
    "Drill": "grader.practice.drills",
    # quiz questions
    "Question": "grader.practice.quiz",
    # probes: the only door to student code
    "DTYPES": "grader.probes",
    "was_modified": "grader.probes",
    "snapshot_inputs": "grader.probes",
    "to_device": "grader.probes",
    "type_name": "grader.probes",
    "returned": "grader.probes",
    "as_tensor": "grader.probes",
    "build": "grader.probes",
    "plain": "grader.probes",
    "probe": "grader.probes",
    "seed_rng": "grader.probes",
    "default_dtype": "grader.probes",
    "passed": "grader.probes",
    "params": "grader.probes",
}
"""Name -> the module it comes from."""

__all__ = sorted(_WHERE)


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"grader.author has no {name!r}; an assignment may use: {', '.join(__all__)}")
    value = (
        getattr(importlib.import_module(module), name)
        if module != "grader"
        else importlib.import_module(f"grader.{name}")
    )
    globals()[name] = value
    return value


def __dir__():
    return __all__
