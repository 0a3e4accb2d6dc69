"""The pytest plugin: ``pytest --submission PATH`` runs gradekit's checks as pytest items.

Each check becomes one item named by its check id, marked with its task id
(``pytest --submission sub -m mha``). Without ``--submission`` the plugin does
nothing, so it is safe to have installed.
"""

from pathlib import Path

import pytest

HELP_SUBMISSION = "grade the submission folder at PATH with gradekit's checks (instead of collecting tests)"
HELP_PROFILE = "gradekit profile: quick or full (default: full)"
HELP_SEED = "gradekit Hypothesis seed (default: the same examples every run)"
HELP_ALLOW_BANNED = "do not fail checks of tasks that use banned APIs"

_STATE = pytest.StashKey[dict]()
TASK_IDS = ("sdpa", "mha", "embedding", "positional", "layernorm", "feedforward", "masks", "encoder_layer",
            "decoder_layer", "model", "greedy", "training", "param_count", "overfit")


def pytest_addoption(parser):
    group = parser.getgroup("gradekit")
    group.addoption("--submission", metavar="PATH", default=None, help=HELP_SUBMISSION)
    group.addoption("--gradekit-profile", default="full", choices=("quick", "full"), help=HELP_PROFILE)
    group.addoption("--gradekit-seed", type=int, default=None, help=HELP_SEED)
    group.addoption("--gradekit-allow-banned", action="store_true", help=HELP_ALLOW_BANNED)


def _validate_submission(value):
    path = Path(value)
    if not path.is_dir():
        raise pytest.UsageError(f"--submission={value!r}: expected a folder holding the contract's files "
                                f"(a filled-in copy of skeleton/), but it {'is a file' if path.exists() else 'does not exist'}")
    return path.resolve()


def pytest_configure(config):
    for task in TASK_IDS:
        config.addinivalue_line("markers", f"{task}: gradekit checks of task {task}")
    config.addinivalue_line("markers", "gradekit: a gradekit check")
    value = config.getoption("--submission", default=None)
    if value:
        config.stash[_STATE] = {"path": _validate_submission(value)}


def pytest_ignore_collect(collection_path, config):
    if _STATE in config.stash:
        return True
    return None


def pytest_collection_modifyitems(session, config, items):
    if _STATE not in config.stash:
        return
    from grader.engine import select_checks

    collector = GradekitCollector.from_parent(session, name="gradekit")
    profile = config.getoption("--gradekit-profile")
    items[:] = [CheckItem.from_parent(collector, name=spec.id, spec=spec) for spec in select_checks(profile=profile)]
    for item in items:
        item.add_marker(item.spec.task)
        item.add_marker("gradekit")


def pytest_unconfigure(config):
    state = config.stash.get(_STATE, None)
    if state and "runners" in state:
        for runner in state["runners"]:
            runner.close()


class GradekitCollector(pytest.Collector):
    def collect(self):
        return []


class CheckFailed(Exception):
    """A gradekit check did not pass; carries its ``CheckResult``."""

    def __init__(self, result):
        super().__init__(result.id)
        self.result = result


class CheckItem(pytest.Item):
    def __init__(self, *, spec, **kwargs):
        super().__init__(**kwargs)
        self.spec = spec

    def _runners(self):
        state = self.config.stash[_STATE]
        if "runners" not in state:
            from grader.submission.banned import scan
            from grader.submission.runner import InProcessRunner, reference_namespace

            reference = reference_namespace()
            ref = InProcessRunner(reference.root, banned=(), namespace=reference)
            sub = InProcessRunner(state["path"])
            state["runners"] = (sub, ref)
            state["findings"] = scan(state["path"])
        return state["runners"]

    def runtest(self):
        import torch

        from grader.api import reproduce_command
        from grader.engine import available_devices, run_one

        sub, ref = self._runners()
        config = self.config
        seed = config.getoption("--gradekit-seed")
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            result = run_one(self.spec, sub=sub, ref=ref, profile=config.getoption("--gradekit-profile"), seed=seed,
                             devices=available_devices(),
                             reproduce=reproduce_command(config.stash[_STATE]["path"], self.spec, seed=seed))
        finally:
            torch.set_num_threads(threads)
        findings = [f for f in config.stash[_STATE]["findings"] if self.spec.task in f.task.split(",")]
        findings += [f for f in sub.banned_runtime() if self.spec.task in f.task.split(",")]
        if findings and not config.getoption("--gradekit-allow-banned"):
            result.status = "failed"
            result.banned = findings
        if result.status != "passed":
            raise CheckFailed(result)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CheckFailed):
            from grader.messages import render, text

            r = excinfo.value.result
            lines = [f"{r.id}: {r.status}", render(r.message)]
            for f in getattr(r, "banned", ()):
                lines.append(text("ui.banned", **f.to_dict()))
            if r.error and r.error.get("trace"):
                lines.append(r.error["trace"].rstrip())
            if r.example:
                lines.append(f"{text('ui.example')}: {r.example}")
            lines.append(f"{text('ui.reproduce')}: {r.reproduce}")
            from grader.safetext import clean_text

            return "\n".join(clean_text(line) for line in lines if line)  # the submission's text: no escape codes
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.config.stash[_STATE]["path"], None, f"gradekit {self.spec.id}"
