"""Which tasks an edit of a submission can cost points in: a corpus case graded on those tasks only sees every point
its edit can cost (the tests and the bench scripts that grade a corpus share it)."""

import re
from pathlib import Path


def reached_tasks(assignment, folder, files):
    """The tasks of ``assignment`` whose grading can run code of ``files`` in the submission ``folder``: the tasks in
    those files, in any contract file of ``folder`` that imports one of them (transitively, in any spelling that
    names the module on an import line), and the tasks built on any of those (their integrated checks use them).
    Over-inclusive by design: a test that grades only these tasks sees every point an edit of ``files`` can cost."""
    folder = Path(folder)
    modules = {f[: -len(".py")]: f for f in assignment.contract_files}
    imports = {}
    for f in assignment.contract_files:
        path = folder / f
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        lines = [ln for ln in text.splitlines() if re.match(r"\s*(from|import)\s", ln)]
        imports[f] = {modules[m] for m in modules if any(re.search(rf"\b{m}\b", ln) for ln in lines)}
    reach, grew = set(files), True
    while grew:
        more = {f for f, used in imports.items() if used & reach} - reach
        reach, grew = reach | more, bool(more)
    own = {t.id for t in assignment.tasks if t.file in reach}
    return [t.id for t in assignment.tasks if t.id in own or own & set(assignment.all_deps(t.id))]
