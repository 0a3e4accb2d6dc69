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

import collections.abc
import json
import lzma
import struct
from pathlib import Path

from grader.submission import wire
from grader.submission.refcache import ReferenceCache, question_key

MAGIC = b"gradekit-bank 2\n"
"""The first bytes of a bank file (then a JSON header line, the records and the mutants' fingerprints; all of it
LZMA-compressed, but in a kit)."""
MAGICS = (b"gradekit-bank 1\n", MAGIC)
"""The bank files ``load`` reads: version 1 has no fingerprints (a kit built with it names no mistake)."""
PRINTS_VERSION = 2
"""The format of the mutants' fingerprints (``Prints.to_data``); a kit refuses others and names no mistake."""
_XZ = b"\xfd7zXZ\x00"
"""The first bytes of an LZMA (xz) file: a bank written compressed."""
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

    def __init__(self, answers=None, meta=None, prints=None):
        self.answers = dict(answers or {})
        self.meta = dict(meta or {})
        self.prints = prints
        """The catalogue's mutants' answers to the questions diagnoses asked, fingerprinted (``Prints``), or
        ``None``: the kit then names no mistake."""

    @classmethod
    def of_cache(cls, cache: ReferenceCache, meta=None, prints=None):
        """The answers a ``ReferenceCache`` holds (each already wire-encoded)."""
        return cls(cache._answers, meta, prints)

    def __len__(self):
        return len(self.answers)

    @property
    def size(self):
        """Bytes of encoded answers (before compression)."""
        return sum(len(blob) for blob, _seconds in self.answers.values())

    def save(self, path, compress=True):
        """Write the bank to ``path``: ``MAGIC``, a JSON header line, the records, the fingerprints (``prints``:
        their byte count in the header); LZMA-compressed, or as it is with ``compress=False`` (a kit's bank, which
        its wheel compresses: read without decompressing it, each check starts sooner)."""
        prints = self.prints.encode() if self.prints is not None else b""
        header = {
            "meta": self.meta,
            "count": len(self.answers),
            "prints": len(prints) if self.prints is not None else None,
        }
        parts = [MAGIC, json.dumps(header, sort_keys=True).encode() + b"\n"]
        for digest in sorted(self.answers):  # the same answers always give the same file
            blob, seconds = self.answers[digest]
            parts += [_RECORD.pack(digest, float(seconds), len(blob)), blob]
        parts.append(prints)
        data = b"".join(parts)
        Path(path).write_bytes(lzma.compress(data, preset=6) if compress else data)
        return Path(path)

    @classmethod
    def load(cls, path):
        """A bank written by ``save``; ``ValueError`` saying what is wrong with a file that is not one."""
        path = Path(path)
        try:
            data = path.read_bytes()
            if data.startswith(_XZ):
                data = lzma.decompress(data)
        except (OSError, lzma.LZMAError) as exc:
            raise ValueError(f"{path}: not a gradekit answer bank ({exc})") from None
        magic = next((m for m in MAGICS if data.startswith(m)), None)
        if magic is None:
            raise ValueError(f"{path}: not a gradekit answer bank (it does not start with {MAGIC!r})")
        try:
            end = data.index(b"\n", len(magic))
            head = json.loads(data[len(magic) : end])
            count, at = int(head.get("count")), end + 1
            printed = head.get("prints") if magic == MAGIC else None
            tail = len(data) - (int(printed) if printed else 0)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: not a gradekit answer bank (its header cannot be read: {exc})") from None
        answers: dict[bytes, tuple[bytes, float]] = {}
        while at + _RECORD.size <= tail and len(answers) < count:
            digest, seconds, n = _RECORD.unpack_from(data, at)
            at += _RECORD.size
            answers[digest] = (bytes(data[at : at + n]), seconds)
            at += n
        if len(answers) != count or at != tail:
            raise ValueError(f"{path}: the bank is cut short ({len(answers)} of {count} answers)")
        prints = _LazyPrints(bytes(data[tail:])) if printed else None
        return cls(answers, head.get("meta"), prints)


class Prints:
    """The fingerprints of what the catalogue's mutants answered to the questions diagnoses asked them
    (``grader.bugs.prints`` makes and reads them): ``entries`` ``{(question digest, label): (fingerprint, differs
    from the reference)}``, ``broken`` (labels whose edits did not apply) and ``outline`` (the catalogue, as
    ``[[bug id, task, file, spellings], ...]`` in catalogue order). Plain data, written by ``wire``: the entries of
    each question apart, so that a kit decodes those of the questions its diagnosis asks, not all of them."""

    def __init__(self, entries=None, broken=(), outline=()):
        self.entries = entries if isinstance(entries, _Entries) else dict(entries or {})
        self.broken = set(broken)
        self.outline = [list(row) for row in outline]

    def __len__(self):
        return len(self.entries)

    def to_data(self):
        groups: dict = {}
        for (k, label), (fp, differs) in sorted(self.entries.items()):
            groups.setdefault(k, []).append([label, bool(differs), fp])
        rows = [[k, wire.encode(rows)] for k, rows in sorted(groups.items())]
        return {"version": PRINTS_VERSION, "outline": self.outline, "broken": sorted(self.broken), "entries": rows}

    def encode(self):
        return wire.encode(self.to_data())

    @classmethod
    def decode(cls, blob):
        """``Prints`` from ``encode``'s bytes; ``ValueError`` for anything else (another version included)."""
        try:
            data = wire.decode(blob)
        except wire.WireError as exc:
            raise ValueError(f"the mutants' fingerprints cannot be read ({exc})") from None
        if not isinstance(data, dict) or data.get("version") != PRINTS_VERSION:
            raise ValueError("the mutants' fingerprints are of another format")
        try:
            groups = {bytes(k): bytes(rows) for k, rows in data["entries"]}
            outline = [[str(i), str(t), str(f), int(n)] for i, t, f, n in data["outline"]]
            broken = {str(x) for x in data["broken"]}
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"the mutants' fingerprints are malformed ({exc})") from None
        return cls(_Entries(groups), broken, outline)


class _Entries(collections.abc.Mapping):
    """``Prints.entries`` read from a file: each question's entries decoded when first asked for. A question whose
    entries cannot be read has none (the kit then cannot decide there, and says so)."""

    def __init__(self, groups):
        self._groups = groups
        self._decoded: dict = {}

    def _of(self, k):
        if k not in self._decoded:
            try:
                rows = wire.decode(self._groups[k])
                self._decoded[k] = {str(label): (fp, bool(differs)) for label, differs, fp in rows}
            except (wire.WireError, TypeError, ValueError):
                self._decoded[k] = {}
        return self._decoded[k]

    def __getitem__(self, key):
        k, label = key
        if k not in self._groups:
            raise KeyError(key)
        return self._of(k)[label]

    def __iter__(self):
        for k in self._groups:
            for label in self._of(k):
                yield k, label

    def __len__(self):
        return sum(len(self._of(k)) for k in self._groups)


class _LazyPrints(Prints):
    """``Prints`` as a bank file holds them, decoded when first read: a kit grading a submission that fails nothing
    never reads them (a whole assignment's fingerprints take a second to decode). Unreadable ones (another
    version, a damaged file) read as none: the kit then names no mistake, and says so where it would."""

    def __init__(self, blob):  # noqa: D107 - no Prints.__init__: its fields are read through _decoded
        self._blob, self._prints = blob, None

    def _decoded(self):
        if self._prints is None:
            try:
                self._prints = Prints.decode(self._blob)
            except ValueError:
                self._prints = Prints()
            self._blob = b""
        return self._prints

    entries = property(lambda self: self._decoded().entries)
    broken = property(lambda self: self._decoded().broken)
    outline = property(lambda self: self._decoded().outline)


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
