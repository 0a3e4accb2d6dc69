"""The batch's progress line (``gradekit batch``, on this machine's judges or on Dask):
``[#####...............] 12/40 ok 10 timeout 2  5.1/min  5:30 left  s012``."""

import time

from grader.messages import text
from grader.safetext import for_terminal


class Progress:
    """``[#####...............] 12/40 ok 10 timeout 2  5.1/min  5:30 left  s012`` on one line of a terminal
    (``stream``; ``None``: nothing is shown), for the local batch and the Dask one alike."""

    WIDTH = 20

    def __init__(self, total, stream, lang="en"):
        self.total, self.stream, self.lang = total, stream, lang
        self.done, self.counts, self.started = 0, {}, time.monotonic()
        self._show()

    def step(self, record):
        """One more student done (``record``: its status and id)."""
        self.done += 1
        status = record.get("status", "error")
        self.counts[status] = self.counts.get(status, 0) + 1
        self._show(record.get("student", ""))

    def note(self, line):
        """Print ``line`` (already safe for a terminal) above the progress line."""
        if self.stream is not None:
            self.stream.write(f"\r{line}\n")
            self._show()

    def _show(self, last=""):
        if self.stream is None or not self.total:
            return
        filled = int(self.WIDTH * self.done / self.total)
        counts = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        pace = ""
        if self.done:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            rate = self.done / elapsed * 60
            pace = (
                text("batch.progress.rate", self.lang, rate=f"{rate:.1f}")
                + "  "
                + text("batch.progress.left", self.lang, time=_clock((self.total - self.done) / rate * 60))
            )
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} {counts}  "
            f"{pace}  {for_terminal(last)[:20]:<20}"
        )
        self.stream.flush()

    def close(self):
        """End the line."""
        if self.stream is not None and self.total:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds):
    """``3:20``, ``1:02:03``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
