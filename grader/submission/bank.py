"""An answer bank: the reference's answers to the questions gradings asked, kept by exact question, so that a kit
holding no reference can grade.

A check asks the reference through ``ctx.ref`` / ``ctx.both``; every question is a probe and its arguments, and
the examples are derandomized, so each grading of a submission asks the same questions as the last.
``ReferenceCache`` already keys answers by the exact question (``refcache.question_key``: the wire encoding of the
probe, the variant and the arguments, plus every tensor's layout). A bank is such a cache filled by gradings of chosen
submissions (the reference, the skeleton, every catalogued mistake...) and written to a file: the answers only,
encoded by ``grader.submission.wire`` (plain values and tensors: no code, no pickle), compressed.

``BankRunner`` answers from a bank where a grading would ask the reference; a question the bank does not hold
raises ``NotInBank``. A check's property treats such an example as unknown while shrinking (the smallest failing
example it shows is then the smallest the bank holds); anywhere else the check cannot be graded without the
reference, and says so (``engine``).
"""

import json
import lzma
import struct
from pathlib import Path

from grader.submission import wire
from grader.submission.refcache import ReferenceCache, question_key

MAGIC = b"gradekit-bank 1\n"
"""The first bytes of a bank file (then a JSON header line, then the records, all LZMA-compressed)."""
_RECORD = struct.Struct("<32sdI")
"""One record's head: the question's 32-byte digest, the seconds the reference took, the answer's length."""


class NotInBank(BaseException):  # noqa: N818 - named for what it says, like ReferenceFailed
    """The bank holds no answer to a question a check asked. A ``BaseException``, as ``ReferenceFailed``: Hypothesis
    must neither shrink it nor report it as the submission's failure."""

    def __init__(self, probe):
        super().__init__(probe)
        self.probe = probe


class Bank:
    """Answers by question digest: ``{digest: (encoded answer, seconds)}``, and ``meta`` (what it was built from)."""

    def __init__(self, answers=None, meta=None):
        self.answers = dict(answers or {})
        self.meta = dict(meta or {})

    @classmethod
    def of_cache(cls, cache: ReferenceCache, meta=None):
        """The answers a ``ReferenceCache`` holds (each already wire-encoded)."""
        return cls(cache._answers, meta)

    def __len__(self):
        return len(self.answers)

    @property
    def size(self):
        """Bytes of encoded answers (before compression)."""
        return sum(len(blob) for blob, _seconds in self.answers.values())

    def save(self, path):
        """Write the bank to ``path``: ``MAGIC``, a JSON header line, the records; LZMA-compressed."""
        head = json.dumps({"meta": self.meta, "count": len(self.answers)}, sort_keys=True).encode() + b"\n"
        parts = [MAGIC, head]
        for digest in sorted(self.answers):  # the same answers always give the same file
            blob, seconds = self.answers[digest]
            parts += [_RECORD.pack(digest, float(seconds), len(blob)), blob]
        Path(path).write_bytes(lzma.compress(b"".join(parts), preset=6))
        return Path(path)

    @classmethod
    def load(cls, path):
        """A bank written by ``save``; ``ValueError`` saying what is wrong with a file that is not one."""
        path = Path(path)
        try:
            data = lzma.decompress(path.read_bytes())
        except (OSError, lzma.LZMAError) as exc:
            raise ValueError(f"{path}: not a gradekit answer bank ({exc})") from None
        if not data.startswith(MAGIC):
            raise ValueError(f"{path}: not a gradekit answer bank (it does not start with {MAGIC!r})")
        end = data.index(b"\n", len(MAGIC))
        head = json.loads(data[len(MAGIC) : end])
        answers, at = {}, end + 1
        while at < len(data):
            digest, seconds, n = _RECORD.unpack_from(data, at)
            at += _RECORD.size
            answers[digest] = (bytes(data[at : at + n]), seconds)
            at += n
        if len(answers) != head.get("count"):
            raise ValueError(f"{path}: the bank is cut short ({len(answers)} of {head.get('count')} answers)")
        return cls(answers, head.get("meta"))


class BankRunner:
    """Stands where a grading's reference runner stands, answering from a ``Bank``; ``NotInBank`` for a question
    it does not hold. ``last_seconds``: what the answer took the reference when the bank was made."""

    def __init__(self, bank, assignment):
        self.bank = bank
        self.assignment = assignment
        self.root = None
        self.last_seconds = 0.0
        self.asked = 0
        self.missed = 0

    def run(self, probe, variant="integrated", **args):
        self.asked += 1
        key = question_key(probe, variant, args)
        stored = None if key is None else self.bank.answers.get(key)
        if stored is None:
            self.missed += 1
            raise NotInBank(probe)
        blob, self.last_seconds = stored
        return wire.decode(blob)

    def close(self):
        pass
