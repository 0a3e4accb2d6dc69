"""``gradekit start DEST``: a student's own copy of the assignment's stubs, to fill in.

``start`` copies the files of the assignment's skeleton folder (``Assignment.skeleton``: in the full kit the
repository's, in a student kit the copy the kit carries) into a new folder, byte for byte, with the contract page
beside them as ``CONTRACT.md``; with ``notebook``, it writes the starter notebook (``grader.notebook_starter``,
made from the same skeleton) instead. Only the skeleton is read, never the reference. It writes into a new or
empty folder only (a notebook: a new file), so that a student's work is never written over.

``next_commands`` are the commands a student runs next, written the way gradekit was started (``cli.invoked_as``)
and naming the assignment where it is not the default, so that each runs as printed from the same folder.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from grader.assignment import command_option
from grader.errors import Said

CONTRACT = "CONTRACT.md"
"""The contract page's name in the student's folder."""
NOTEBOOK_SUFFIX = ".ipynb"


class StartRefused(Said, ValueError):
    """``start`` wrote nothing: ``key`` (a message key) and its parameters say why."""


@dataclass
class Started:
    """What ``start`` wrote: ``files`` (paths, in the order written) into ``dest``, a notebook or not."""

    dest: Path
    files: list = field(default_factory=list)
    notebook: Path | None = None
    contract: Path | None = None


def skeleton_files(assignment):
    """``{relative posix path: Path}`` of the files of ``assignment``'s skeleton folder, as a kit carries them:
    caches, hidden entries and compiled Python left out."""
    base = Path(assignment.skeleton)
    if not base.is_dir():
        raise StartRefused("start.no_skeleton", assignment=assignment.name, path=str(base))
    from grader.kit import folder_files  # what a kit carries of a folder is what start copies of it

    return folder_files(base, "")


def _is_empty_folder(path):
    return path.is_dir() and not any(path.iterdir())


def start(dest, assignment, *, notebook=False, lang="en"):
    """Write ``assignment``'s stubs into the new (or empty) folder ``dest``, with ``CONTRACT.md`` beside them; with
    ``notebook``, the starter notebook instead: ``dest`` itself where it ends in ``.ipynb`` (a new file), else
    ``<assignment name>.ipynb`` in the new or empty folder ``dest``, beside ``CONTRACT.md`` either way (a notebook
    written as a new file into another folder: ``_contract_beside``). ``Started``;
    ``StartRefused`` (nothing written) where ``dest`` is taken."""
    dest = Path(dest)
    if notebook and dest.suffix == NOTEBOOK_SUFFIX:
        if dest.exists() or dest.is_symlink():
            raise StartRefused("start.refused_file", path=str(dest))
        if dest.parent.exists() and not dest.parent.is_dir():
            raise StartRefused("start.refused", path=str(dest.parent))
        skeleton_files(assignment)  # says so where the skeleton is missing, before anything is written
        started = Started(dest=dest, notebook=_notebook(assignment, dest, lang))
        contract = _contract(assignment)
        if contract is not None:
            started.contract = _contract_beside(contract, dest)
        return started
    if dest.is_symlink() or (dest.exists() and not _is_empty_folder(dest)):
        raise StartRefused("start.refused", path=str(dest))
    files = skeleton_files(assignment)
    contract = _contract(assignment)
    if contract is not None and CONTRACT in files:
        contract = None  # the skeleton's own file of that name is what the folder holds
    dest.mkdir(parents=True, exist_ok=True)
    started = Started(dest=dest)
    if notebook:
        started.notebook = _notebook(assignment, dest / f"{assignment.name}{NOTEBOOK_SUFFIX}", lang)
    else:
        for rel, source in files.items():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            started.files.append(target)
    if contract is not None:
        started.contract = dest / CONTRACT
        shutil.copyfile(contract, started.contract)
    return started


def _contract(assignment):
    """The assignment's contract page, or ``None`` where it has none."""
    contract = Path(assignment.contract) if assignment.contract is not None else None
    return contract if contract is not None and contract.is_file() else None


def _contract_beside(contract, notebook):
    """The contract beside a notebook written as a new file, into a folder that may hold other work: ``CONTRACT.md``
    where no file has that name (or the one there is this contract already), else ``<notebook>.CONTRACT.md`` where
    that name is free; ``None`` where both are taken (nothing is written over)."""
    data = contract.read_bytes()
    for target in (notebook.parent / CONTRACT, notebook.with_suffix("." + CONTRACT)):
        if target.is_symlink():
            continue
        if not target.exists():
            target.write_bytes(data)
            return target
        if target.is_file() and target.read_bytes() == data:
            return target
    return None


def _notebook(assignment, path, lang):
    from grader import notebook_starter

    return notebook_starter.build(assignment.skeleton, path, assignment, lang=lang)


def next_commands(started, assignment, *, command="gradekit", options=()):
    """``[(message key, command)]``: what to run next, ``command`` being how gradekit was started (already quoted
    for a shell), ``options`` more options to repeat (``--lang zh``)."""
    extra = [*command_option(assignment), *options]

    def line(*words):
        return " ".join([command, *(shlex.quote(str(w)) for w in [*words, *extra])])

    if started.notebook is not None:
        return [("start.next_check_notebook", line("check", started.notebook, "--profile", "quick"))]
    return [
        ("start.next_check", line("check", started.dest, "--profile", "quick")),
        ("start.next_watch", line("watch", started.dest)),
    ]
