"""Time of the wire format (``grader.submission.wire``) over the stand-in messages of one grading, replayed.

Run: ``python bench/bench_wire.py`` in the venv. Prints figures; asserts nothing.

Grades the reference once, full profile, over stand-ins answered in this process (``stand_ins=True``: every message
through the wire format, as between a sealed worker and its judge), keeps the bytes of every message and answer, then
decodes them all and encodes the decoded values again, ``--repeat`` times, and prints the best of each: the cost of the
format alone, with no grading, pipe or scheduler in it, so that it compares across changes on a machine whose load
varies. Checks that each value encodes to the bytes it came from.
"""

import argparse
import os
import time

import speed  # noqa: E402 - bench/speed.py
import torch

from grader import api
from grader.assignment import load
from grader.submission import standin, wire


def record(assignment):
    """The bytes of every stand-in message and answer of one full grading of ``assignment``'s reference."""
    blobs = []
    ask = standin.Loopback.ask

    def recording(self, message):
        blob = wire.encode(message)
        blobs.append(blob)
        with torch.inference_mode(False):  # as ``Loopback.ask``
            answer = wire.encode(self.host.answer(wire.decode(blob)))
        blobs.append(answer)
        return wire.decode(answer)

    standin.Loopback.ask = recording
    try:
        api.check(path=load(assignment).reference, assignment=assignment, profile="full", stand_ins=True)
    finally:
        standin.Loopback.ask = ask
    return blobs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="replays; the best is printed (default 5)")
    parser.add_argument("--assignment", default=load().name)
    speed.add_argument(parser)
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} at start; assignment {args.assignment}")
    blobs = record(args.assignment)
    values = [wire.decode(b) for b in blobs]
    if any(wire.encode(v) != b for v, b in zip(values, blobs)):
        raise SystemExit("a message did not encode to the bytes it was decoded from")
    decode = encode = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        for b in blobs:
            wire.decode(b)
        decode = min(decode, time.perf_counter() - start)
        start = time.perf_counter()
        for v in values:
            wire.encode(v)
        encode = min(encode, time.perf_counter() - start)
    print(
        f"{len(blobs)} messages ({sum(map(len, blobs)) / 1e6:.1f} MB): decode {decode:.3f} s, encode {encode:.3f} s "
        f"(best of {args.repeat}); load average {os.getloadavg()[0]:.2f} at end"
    )
    speed.record(
        "wire.replay" if args.assignment == "transformer" else f"wire.replay.{args.assignment}",
        f"the wire format alone over one full {args.assignment} grading's stand-in messages "
        f"({len(blobs):,}, {sum(map(len, blobs)) / 1e6:.0f} MB), replayed, best of {args.repeat}: decode, encode",
        f"{decode:.3f} s, {encode:.3f} s",
    )


if __name__ == "__main__":
    main()
