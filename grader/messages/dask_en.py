"""English sentences of the batch on Dask (``grader.batch.distributed``) and of the batch's progress line."""

MESSAGES = {
    "dask.missing": "--scheduler needs Dask, which is not installed here: pip install 'gradekit[dask]'",
    "dask.bad_scheduler": "--scheduler {value!r} is not understood; expected local:N (N worker processes on this "
                          "machine, N >= 1) or a Dask scheduler's address such as tcp://host:8786",
    "dask.dashboard": "Dask dashboard (the grading tasks, by student): {link}",
    "dask.not_sealed": "warning: the Dask workers {workers} do not run as root, so the graded code ran there as "
                       "their user, without a jail: it could read what that user can read, including the "
                       "reference. Run the workers as root (see docs/CLUSTER.md) to grade for the record.",
    "dask.detail.no_start": "the judge process did not start on the Dask worker",
    "dask.detail.late": "the judge stopped or took more than {seconds} s",
    "dask.detail.worker_died": "the Dask workers grading it died {n} times (it was tried on {n} workers)",
    "dask.detail.task": "the grading task failed twice on the Dask workers: {error}",
    "dask.detail.other_grader": "the Dask worker {worker} grades with another gradekit or assignment ({theirs}; "
                                "this batch: {ours}); install the same version on every worker",
    "batch.progress.rate": "{rate}/min",
    "batch.progress.left": "{time} left",
}
