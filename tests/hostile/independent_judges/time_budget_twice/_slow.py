"""The first call into this submission in each worker process sleeps 8 s (under the 10 s a call may take beside
a fast reference): a worker costs 8 s of the submission's total time."""

import functools
import time

_state = {"slept": False}


def _once(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not _state["slept"]:
            _state["slept"] = True
            time.sleep(8.0)
        return fn(*args, **kwargs)

    return wrapper


def wrap(namespace):
    for name, value in list(namespace.items()):
        if name.startswith("_") or getattr(value, "__module__", None) != namespace["__name__"]:
            continue
        if isinstance(value, type):
            for method in ("__init__", "forward", "encode", "decode"):
                if method in vars(value):
                    setattr(value, method, _once(vars(value)[method]))
        elif callable(value):
            namespace[name] = _once(value)
