"""Kits that hold no reference: recording the answer bank such a kit grades against (``submission.bank``).

``record`` grades chosen submission folders in process, with every answer of the reference going through one
``ReferenceCache``, and keeps those answers as a ``Bank``; ``gradekit bank build`` records over the reference, the
skeleton and each catalogued mistake (``catalogue_folders``), in the profiles asked for."""

from pathlib import Path

from grader.submission.bank import Bank
from grader.submission.refcache import ReferenceCache


def record(assignment, paths, *, profiles=("quick", "full"), tasks=None, progress=None):
    """A ``Bank`` of the answers the reference gives when each submission folder of ``paths`` is graded in each
    of ``profiles`` (in process: these are the instructor's own folders, such as the reference, the skeleton and
    the catalogue's mistakes). ``progress(i, n, path, profile)`` is told before each grading."""
    from grader import api

    cache = ReferenceCache(max_bytes=1 << 62)
    jobs = [(Path(p), profile) for p in paths for profile in profiles]
    for i, (path, profile) in enumerate(jobs):
        if progress is not None:
            progress(i, len(jobs), path, profile)
        api.check(path=path, assignment=assignment, profile=profile, tasks=tasks, diagnose=False, reference_cache=cache)
    meta = {"assignment": assignment.name, "profiles": list(profiles), "gradings": len(jobs)}
    return Bank.of_cache(cache, meta)


def catalogue_folders(assignment, dest):
    """Folders to record a bank over: the reference, the skeleton and each catalogued mistake (written into
    ``dest``), in that order."""
    from grader.bugs.catalogue import Catalogue

    folders = [Path(assignment.reference), Path(assignment.skeleton)]
    catalogue = Catalogue(assignment)
    for bug in catalogue.bugs:
        folders.append(catalogue.write_mutant(bug, Path(dest) / bug.id))
    return folders
