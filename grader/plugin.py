"""The pytest plugin: ``pytest --submission PATH`` runs an assignment's checks as pytest items.

A thin adapter over the engine: each check becomes one item named by its check id, marked with its task id
(``pytest --submission sub -m mha``), and runs as ``gradekit check`` runs it (``engine.run_one`` on the same
runners). Without ``--submission`` the plugin does nothing, so it is safe to have installed.
"""

from pathlib import Path

import pytest

HELP_SUBMISSION = "grade the submission folder at PATH with gradekit's checks (instead of collecting tests)"
HELP_PROFILE = "gradekit profile: quick or full (default: full)"
HELP_SEED = "gradekit Hypothesis seed (default: the same examples every run)"
HELP_ALLOW_BANNED = "do not fail checks of tasks that use banned APIs"
HELP_ASSIGNMENT = "gradekit assignment: a built-in name, an import path or a folder (default: transformer)"

_STATE = pytest.StashKey[dict]()


def pytest_addoption(parser):
    group = parser.getgroup("gradekit")
    group.addoption("--submission", metavar="PATH", default=None, help=HELP_SUBMISSION)
    group.addoption("--gradekit-profile", default="full", choices=("quick", "full"), help=HELP_PROFILE)
    group.addoption("--gradekit-seed", type=int, default=None, help=HELP_SEED)
    group.addoption("--gradekit-allow-banned", action="store_true", help=HELP_ALLOW_BANNED)
    group.addoption("--gradekit-assignment", default=None, help=HELP_ASSIGNMENT)


def _validate_submission(value):
    path = Path(value)
    if not path.is_dir():
        raise pytest.UsageError(f"--submission={value!r}: expected a folder holding the contract's files "
                                f"(a filled-in copy of skeleton/), but it {'is a file' if path.exists() else 'does not exist'}")
    return path.resolve()


def pytest_configure(config):
    config.addinivalue_line("markers", "gradekit: a gradekit check")
    value = config.getoption("--submission", default=None)
    if value:
        from grader.api import UsageError, resolve_assignment

        try:
            assignment = resolve_assignment(config.getoption("--gradekit-assignment", default=None))
        except UsageError as exc:
            raise pytest.UsageError(f"--gradekit-assignment: {exc}") from None
        for task in assignment.task_ids:
            config.addinivalue_line("markers", f"{task}: gradekit checks of task {task}")
        config.stash[_STATE] = {"path": _validate_submission(value), "assignment": assignment}


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
    specs = select_checks(config.stash[_STATE]["assignment"], profile=profile)
    items[:] = [CheckItem.from_parent(collector, name=spec.id, spec=spec) for spec in specs]
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

            a = state["assignment"]
            reference = reference_namespace(a)
            ref = InProcessRunner(reference.root, assignment=a, banned=(), namespace=reference)
            sub = InProcessRunner(state["path"], assignment=a)
            state["runners"] = (sub, ref)
            state["findings"] = scan(state["path"], a)
        return state["runners"]

    def runtest(self):
        import torch

        from grader.api import reproduce_command
        from grader.engine import Grading, available_devices, run_one

        sub, ref = self._runners()
        config = self.config
        state = config.stash[_STATE]
        seed = config.getoption("--gradekit-seed")
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            g = Grading(state["assignment"], sub, ref, profile=config.getoption("--gradekit-profile"), seed=seed,
                        devices=available_devices(),
                        reproduce=lambda spec: reproduce_command(state["path"], spec, seed=seed))
            result, _calls = run_one(g, self.spec)
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
