"""A submission that implements nothing: every contract name is looked up, at call time, wherever a copy of
it might be found: in memory (modules, the garbage collector), on disk (the reference folder, the kit's own
correct test submissions) and through other processes (``cat``). Test data for tests/hostile/test_sealed.py."""

import gc
import os
import subprocess
import sys
import types

_MINE = __name__.rsplit(".", 1)[0]
_CACHE = {}
FOUND = []
"""Where each name was found (printed, for the test's diagnosis)."""


def _from_memory(name):
    for obj in gc.get_objects():
        try:
            if getattr(obj, "__name__", None) != name or not callable(obj):
                continue
            module = getattr(obj, "__module__", "") or ""
        except Exception:  # noqa: BLE001
            continue
        if module.startswith(_MINE) or module.startswith("torch") or module.startswith("grader"):
            continue
        return obj, f"memory:{module}"
    for mod_name, module in list(sys.modules.items()):
        if mod_name.startswith(_MINE) or not isinstance(module, types.ModuleType):
            continue
        obj = getattr(module, name, None)
        if callable(obj) and not mod_name.startswith(("torch", "grader")):
            return obj, f"sys.modules:{mod_name}"
    return None


def _folders():
    found = []
    loaded = getattr(sys.modules.get("grader.assignment"), "_LOADED", {})
    for assignment in list(loaded.values()):
        found.append(str(getattr(assignment, "reference", "")))
    here = os.path.dirname(os.path.abspath(__file__))
    for base in [here, "/", os.getcwd()] + list(sys.path):
        for up in range(6):
            folder = os.path.abspath(os.path.join(base, *[".."] * up))
            for sub in ("solution", "tests/submissions/alt_einsum", "tests/submissions/alt_loops", "main/solution"):
                found.append(os.path.join(folder, sub))
    found.append(os.environ.get("GRADEKIT_STEAL_FROM", ""))
    return [f for f in dict.fromkeys(found) if f]


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except Exception:  # noqa: BLE001
        pass
    try:
        return subprocess.run(["cat", path], capture_output=True, timeout=5, check=True).stdout.decode()
    except Exception:  # noqa: BLE001
        return None


def _from_disk(name):
    files = ["attention.py", "embedding.py", "norm.py", "feedforward.py", "masks.py", "layers.py", "model.py",
             "decoding.py", "training.py"]
    for folder in _folders():
        sources = {f: _read(os.path.join(folder, f)) for f in files}
        if not any(sources.values()):
            continue
        package = f"_stolen{abs(hash(folder))}"
        pkg = types.ModuleType(package)
        pkg.__path__ = []
        sys.modules[package] = pkg
        for f in files:  # in dependency order
            if not sources[f]:
                continue
            module = types.ModuleType(f"{package}.{f[:-3]}")
            module.__package__ = package
            sys.modules[module.__name__] = module
            try:
                exec(compile(sources[f], os.path.join(folder, f), "exec"), module.__dict__)
            except Exception:  # noqa: BLE001
                continue
            setattr(pkg, f[:-3], module)
            if hasattr(module, name):
                return getattr(module, name), f"disk:{folder}"
    return None


def steal(name):
    if name not in _CACHE:
        for how in (_from_memory, _from_disk):
            hit = how(name)
            if hit is not None:
                _CACHE[name] = hit[0]
                FOUND.append((name, hit[1]))
                print(f"[thief] {name} from {hit[1]}", flush=True)
                break
        else:
            raise NotImplementedError(f"{name}: nothing to steal")
    return _CACHE[name]


def thief_class(name):
    def __new__(cls, *args, **kwargs):
        return steal(name)(*args, **kwargs)
    return type(name, (), {"__new__": __new__})


def thief_function(name):
    def call(*args, **kwargs):
        return steal(name)(*args, **kwargs)
    call.__name__ = name
    return call
