"""The reference's answers, remembered: a judge that grades many submissions computes each reference call once.

Every submission of a class is graded on the same derandomized examples, so a batch judge asks the reference the
same questions hundreds of times. ``ReferenceCache`` keeps each answer under the exact question: the probe, the
variant and the bytes of the arguments' wire encoding (``grader.submission.wire``: every value, dtype, shape and
tensor element, bit for bit), plus every tensor's strides and offset (a transposed view holds the same elements
as its contiguous copy, but a kernel may round differently on it). Answers are stored encoded and decoded afresh
at each use, so a check that changes what it was given cannot change what the next one gets. A call whose
arguments or answer the wire format cannot carry, or that raises, is not remembered.

Only a judge that never runs submission code may use it (sealed grading: ``api.check`` with a worker). In
process, a submission runs beside the cache and could rewrite the reference's answers for every later
submission.
"""

import hashlib
import time
from collections import OrderedDict

import torch

from grader.submission import wire

MAX_BYTES = 256 << 20
"""Encoded answers kept per assignment before the least recently used are dropped (a full grading of the
Transformer asks about 1,000 distinct questions, mostly small tensors: a few MB)."""

_SHARED = {}


class ReferenceCache:
    """Answers of one assignment's reference, by exact question; least recently used dropped past ``max_bytes``."""

    def __init__(self, max_bytes=MAX_BYTES):
        self.max_bytes = int(max_bytes)
        self._answers = OrderedDict()
        self.size = 0
        self.hits = 0
        self.misses = 0

    def run(self, runner, probe, variant, args):
        """``(answer, seconds)``: ``runner.run(probe, variant, **args)`` and the time it took, or what it returned
        for the same question before and the time it took then (a check's time limits are relative to it)."""
        key = question_key(probe, variant, args)
        if key is not None:
            stored = self._answers.get(key)
            if stored is not None:
                self._answers.move_to_end(key)
                self.hits += 1
                return wire.decode(stored[0]), stored[1]
        started = time.monotonic()
        result = runner.run(probe, variant, **args)
        seconds = time.monotonic() - started
        if key is not None:
            self.misses += 1
            try:
                blob = wire.encode(result)
            except wire.WireError:
                return result, seconds
            self._answers[key] = (blob, seconds)
            self.size += len(blob)
            while self.size > self.max_bytes and self._answers:
                _, (dropped, _) = self._answers.popitem(last=False)
                self.size -= len(dropped)
        return result, seconds


class CachedRunner:
    """A runner on the reference whose ``run`` goes through a ``ReferenceCache``; everything else is the runner's.
    ``last_seconds``: what the last answer took the reference when it was computed. ``records``: the cache is
    recorded into an answer bank (``kit.record``), so checks also ask the questions they ask only on a failing path
    (``CheckContext.ref_ahead``)."""

    def __init__(self, runner, cache, *, records=False):
        self.runner = runner
        self.cache = cache
        self.records = records

    def run(self, probe, variant="integrated", **args):
        result, self.last_seconds = self.cache.run(self.runner, probe, variant, args)
        return result

    def __getattr__(self, name):
        return getattr(self.runner, name)


def shared(assignment):
    """The cache of ``assignment``'s reference that every sealed grading in this process shares."""
    key = (assignment.package, str(assignment.reference))
    if key not in _SHARED:
        _SHARED[key] = ReferenceCache()
    return _SHARED[key]


def question_key(probe, variant, args):
    """The digest a question is kept under; ``None`` for one the wire format cannot carry."""
    try:
        encoded = wire.encode((probe, variant, args))
    except wire.WireError:
        return None
    layout = []
    _layouts(args, layout, 0)
    return hashlib.blake2b(encoded + repr(layout).encode(), digest_size=32).digest()


def _layouts(x, out, depth):
    """Every tensor's type, strides and storage offset in ``x``, in the order ``wire.encode`` visits them."""
    if depth > wire.MAX_DEPTH:
        return
    if isinstance(x, torch.Tensor):
        out.append(
            (
                type(x).__name__,
                tuple(x.stride()) if x.layout == torch.strided else None,
                x.storage_offset() if x.layout == torch.strided else None,
            )
        )
    elif isinstance(x, dict):
        for k, v in x.items():
            _layouts(k, out, depth + 1)
            _layouts(v, out, depth + 1)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _layouts(v, out, depth + 1)
