"""The speed file: ``docs/SPEED.md``, written by the bench scripts, never by hand.

Each figure is one row, kept by its key in ``docs/speed.json`` (the data) and rendered into ``docs/SPEED.md`` (the
page the README links): what was measured, the latest value, the target and whether it was met, the command that
measured it, the machine (cores, accelerator, load average when the script started) and the date. A bench script
calls ``record`` for each figure it prints; a row it does not record keeps its last value and date.

``--no-record`` on a bench script (or ``GRADEKIT_SPEED_FILE=`` empty) leaves the file alone;
``GRADEKIT_SPEED_FILE=PATH`` writes the data elsewhere (the page beside it).
"""

import datetime
import json
import os
import platform
import resource
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "speed.json"
_START_LOAD = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
"""The load average when the bench script started (this module is imported at its start)."""

HEADER = """# Speed

The latest figure of each measurement, one row each, written by the scripts in `bench/` (`bench/speed.py`; do not
edit this page by hand: run the command in the row). None asserts a time: speed targets live in the scripts, not in
the test suite. The machine column says where each was measured; a machine's speed varies from day to day and with
load, so compare ratios measured in one sitting, not seconds across days.
"""
FIELDS = ("figure", "value", "target", "met", "command", "machine", "date")


def data_path():
    """Where the data goes: ``$GRADEKIT_SPEED_FILE`` if set (empty: nowhere), else ``docs/speed.json``; the page is
    rendered beside it (``page``)."""
    if "GRADEKIT_SPEED_FILE" in os.environ:
        value = os.environ["GRADEKIT_SPEED_FILE"]
        return Path(value) if value else None
    return DATA


def children_cpu_seconds():
    """CPU seconds (user and system) of every child process this one has waited for, and of the descendants each of
    them waited for (judges, fork servers, workers): take it before and after a command for what the command cost."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def users_env():
    """The environment for a command timed as a user runs it: this one's, less ``PYTHONDONTWRITEBYTECODE``, which a
    user's Python does not set (some sandboxes and CI images do). With it set, every process compiles the kit's
    modules again on each run (a sealed command's judge and fork server alike), a cost no user's second run pays."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _cpu_model():
    """The processor's name where the system says it (``/proc/cpuinfo`` on Linux), else ``""``: machines lent for the
    same work differ (one took twice as long as another over the same suite), and a row says which it came from."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    return " ".join(line.partition(":")[2].split())
    except OSError:
        pass
    return platform.processor()


def machine():
    """This machine in a few words: cores and the processor's name, accelerator, load average at the script's
    start."""
    gpu = "no GPU"
    try:
        import torch

        if torch.cuda.is_available():
            gpu = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - a machine without torch still has cores
        pass
    load = "" if _START_LOAD is None else f", load {_START_LOAD:.1f}"
    model = _cpu_model()
    return f"{os.cpu_count()} cores{f' ({model})' if model else ''}, {gpu}{load}"


def command():
    """The command that ran this script, as a user types it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        shown = script.relative_to(ROOT).as_posix()
    except ValueError:
        shown = str(script)
    args = [a for a in sys.argv[1:] if a != "--no-record"]
    return " ".join(["python", shlex.quote(shown), *map(shlex.quote, args)])


def load_rows(path=None):
    path = data_path() if path is None else path
    if path is None or not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def record(key, figure, value, target="", met=None, *, path=None):
    """Write one figure's row (``key``: a stable id, e.g. ``"check.sealed_whole.transformer"``), with this script's
    command, this machine and today's date, and render the page. ``met``: whether ``value`` meets ``target`` (``None``
    where there is no target)."""
    path = data_path() if path is None else path
    if path is None or "--no-record" in sys.argv[1:]:
        return
    rows = load_rows(path)
    rows[key] = {
        "figure": figure,
        "value": value,
        "target": target,
        "met": met,
        "command": command(),
        "machine": machine(),
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
    }
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    page(path).write_text(render(rows), encoding="utf-8")


def page(path):
    """The page rendered from the data at ``path``: ``SPEED.md`` beside it."""
    return path.with_name("SPEED.md")


def render(rows):
    """The page for ``rows``: one table, grouped by the script that measured them (in the order of their first
    rows), each group's rows in the data's order (a new figure goes last)."""
    lines = [HEADER, "| figure | value | target | command | machine | date |", "| --- | --- | --- | --- | --- | --- |"]
    scripts = list(dict.fromkeys(_script(row) for row in rows.values()))
    for key in sorted(rows, key=lambda k: scripts.index(_script(rows[k]))):
        row = rows[key]
        target = row["target"]
        if target and row["met"] is not None:
            target += " (met)" if row["met"] else " (not met)"
        run = row["command"]
        cells = [
            row["figure"],
            row["value"],
            target,
            f"`{run}`" if run.startswith("python ") else run,
            row["machine"],
            row["date"],
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _script(row):
    return tuple(row["command"].split(" ")[:2])


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def add_argument(parser):
    """``--no-record``: print the figures without writing the speed file."""
    parser.add_argument("--no-record", action="store_true", help="print the figures; leave docs/SPEED.md as it is")
