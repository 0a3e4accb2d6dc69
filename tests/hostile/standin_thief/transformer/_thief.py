"""Hostile test data for tests/hostile/test_standin_thief.py: the search and the exfiltration shared by both
assignments' submissions (tests/hostile/standin_thief/{transformer,decoder_lm}/_thief.py are the same file).

A student who read the kit wants the instructor's reference. Whatever runs (an import, an ``__init__``, a
``forward``, a function) calls ``hunt``, which looks for code objects, source text and names of code that is
neither this submission's nor public (the standard library, site-packages, the kit's ``grader`` and its
assignments' public modules), in everything the worker process can reach: the garbage collector,
``sys.modules``, module loaders, the frames up the stack, the objects it was handed (walked through
``__dict__``, types and their MRO, closures, defaults, globals, ``__wrapped__``, gc referents and referrers),
tracebacks of exceptions it provokes inside those objects, ``inspect.getsource``, ``linecache``,
``torch.fx``/``torch.jit``, ``pickle``/``cloudpickle``/``copy``, ``importlib`` on the reference's packages,
files (the reference folders the kit names, the parts file the judge writes, ``/proc``), environment variables
and child processes. Each find is kept as a short fingerprint: names and file names of code objects; length,
hash, first 80 characters, longest line, longest line of code and per-line hashes of texts.

``short_error`` (a ``RuntimeError``, which the kit cuts to 2000 characters), ``full_error`` (the grader's own
``SubmissionError``, uncut) and ``crash`` (printed output, which a crashed worker's report shows) carry the
fingerprints out, compressed (``THIEF-LOOT[where]<base64 of zlib of JSON>``); every one also writes them to
files wherever it can. A search that finds nothing says ``THIEF-FOUND-NOTHING``."""

import base64
import collections
import gc
import hashlib
import json
import os
import re
import sys
import time
import types
import zlib

_HERE = os.path.dirname(os.path.abspath(__file__))
_PKG = __name__.rsplit(".", 1)[0]
MARK_NOTHING = "THIEF-FOUND-NOTHING"
MARK_LOOT = "THIEF-LOOT"

CONTRACT = {
    "transformer": {
        "attention.py": ("scaled_dot_product_attention", "MultiHeadAttention"),
        "embedding.py": ("TokenEmbedding", "PositionalEncoding"), "norm.py": ("LayerNorm",),
        "feedforward.py": ("FeedForward",), "masks.py": ("padding_mask", "causal_mask", "target_mask"),
        "layers.py": ("EncoderLayer", "DecoderLayer"), "model.py": ("Encoder", "Decoder", "Transformer"),
        "decoding.py": ("greedy_decode",),
        "training.py": ("sequence_loss", "noam_lr", "train_step", "count_parameters"),
    },
    "decoder_lm": {
        "norm.py": ("RMSNorm",), "rope.py": ("RotaryEmbedding",), "feedforward.py": ("SwiGLU",),
        "attention.py": ("causal_attention", "CausalSelfAttention"), "cache.py": ("KVCache",),
        "block.py": ("DecoderBlock",), "model.py": ("DecoderLM",),
        "sampling.py": ("top_k_filter", "top_p_filter", "sample_next", "generate"),
        "optim.py": ("param_groups", "AdamW", "cosine_lr", "clip_grad_norm_"),
        "training.py": ("lm_loss", "train_step", "count_parameters"),
    },
}
ASSIGNMENT = "decoder_lm" if os.path.exists(os.path.join(_HERE, "rope.py")) else "transformer"
NAMES = tuple(n for names in CONTRACT[ASSIGNMENT].values() for n in names)
FILES = tuple(CONTRACT[ASSIGNMENT])
_SOURCE_HINT = re.compile(r"(^|\n)(def|class) \w+|(^|\n)\s+self\.\w+ = ")
"""Module source: a definition at the start of a line, or an attribute set in a method (docstrings' examples are
indented or start with ``>>>``)."""
_NAMES = re.compile("|".join(re.escape(n) for n in NAMES))

# -- what was found ---------------------------------------------------------------------------------------------
FOUND = {"code": {}, "bytecode": {}, "text": {}, "names": {}, "mods": {}, "files": {}, "wrote": [],
         "tried": collections.Counter()}
"""code: (file, qualname, line) -> [channels]; bytecode: the same key -> [len(co_code), its hash, len(co_consts)];
text: sha -> fingerprint; names: name -> [channels];
mods: name -> file; files: path -> [len, sha] (read, not source); tried: channel -> attempts."""
_STAGES = set()
_WALKED = set()
_PROVOKED = set()
_BUSY = []
_REFERRED = []
_STARTED = time.monotonic()


def _sha(data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def _kit_root():
    try:
        import grader

        return os.path.dirname(os.path.dirname(os.path.abspath(grader.__file__)))
    except Exception:  # noqa: BLE001
        return None


def _public_prefixes():
    found = set()
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        for q in (p, os.path.realpath(p)):
            found.add(q.rstrip("/") + "/lib/")
    kit = _kit_root()
    if kit:
        found.add(kit + "/grader/")
        found.add(kit + "/assignments/")  # but "/reference/" below is not public
    return tuple(found)


_PUBLIC = _public_prefixes()


_FOREIGN_FILES = {}


def _foreign_file(name):
    """Whether a code file name is neither this submission's nor public code (stdlib, site-packages, the kit)."""
    if not isinstance(name, str) or not name:
        return False
    known = _FOREIGN_FILES.get(name)
    if known is None:
        known = _FOREIGN_FILES[name] = _judge_file(name)
    return known


def _judge_file(name):
    if name.startswith(_HERE + os.sep) or name == _HERE:
        return False
    if _REFERENCE_PATH.search(name):
        return True
    if not name.startswith("/") or "/site-packages/" in name or "/dist-packages/" in name:
        return False  # "<string>", "<frozen ...>", generated code: judged by the function's module instead
    return not name.startswith(_PUBLIC)


_REFERENCE_PATH = re.compile(r"/solution/|/assignments/[^/]+/reference/|nonexistent|gradekit-reference")
_REFERENCE_MODULE = re.compile(r"^(_gradekit_sub\d+|solution|reference)(\.|$)|^assignments\.[^.]+\.reference(\.|$)")


def _public_module(name):
    """Whether a module name is public code (or this submission's): anything but the kit's namespaces of loaded
    code (``_gradekit_sub<N>``, the reference parts among them) and the reference's packages."""
    if not isinstance(name, str) or not name:
        return True
    if name == _PKG or name.startswith(_PKG + "."):
        return True  # mine
    return not _REFERENCE_MODULE.search(name)


def _add(table, key, channel):
    where = table.setdefault(key, [])
    if channel not in where and len(where) < 6:
        where.append(channel)


def note_code(code, channel):
    if not isinstance(code, types.CodeType):
        return False
    if not _foreign_file(code.co_filename):
        return False
    key = (code.co_filename, getattr(code, "co_qualname", code.co_name), code.co_firstlineno)
    _add(FOUND["code"], key, channel)
    if key not in FOUND["bytecode"]:
        FOUND["bytecode"][key] = [len(code.co_code), _sha(code.co_code)[:8], len(code.co_consts)]
    for name in code.co_names:
        if len(name) >= 4 and not name.startswith("__"):
            _add(FOUND["names"], name, channel + ":co_names")
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            note_code(const, channel)
        elif isinstance(const, str) and len(const) >= 30:
            note_text(const, channel + ":co_consts", code.co_name, force=False)
    return True


def note_function(fn, channel):
    try:
        code = fn.__code__
    except AttributeError:
        return False
    if note_code(code, channel):
        return True
    module = getattr(fn, "__module__", None)
    if code.co_filename.startswith("<") and not _public_module(module):
        _add(FOUND["code"], (code.co_filename, f"{module}.{fn.__qualname__}", code.co_firstlineno), channel)
        return True
    return False


def note_type(cls, channel):
    module = getattr(cls, "__module__", "")
    if _public_module(module):
        return False
    _add(FOUND["names"], cls.__qualname__, channel + ":type")
    found = False
    for value in list(vars(cls).values()):
        fn = getattr(value, "__func__", value)
        if isinstance(fn, property):
            fn = fn.fget
        if isinstance(fn, types.FunctionType):
            found = note_function(fn, channel + ":method") or found
    return True


def _own_texts():
    if not _OWN:
        _OWN.add("")
        for name in os.listdir(_HERE):
            try:
                with open(os.path.join(_HERE, name), encoding="utf-8") as f:
                    _OWN.add(_sha(f.read())[:16])
            except Exception:  # noqa: BLE001
                pass
    return _OWN


_OWN = set()


_PY_PATH = re.compile(r"/[\w.\-/]+\.py\b")
"""A file name of Python code (in a traceback, say)."""


def _longest_code_line(text):
    """The longest line of ``text`` that is a statement of code (not a docstring's, a comment or a blank)."""
    best, quoted = "", False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.count('"""') % 2 or stripped.count("'''") % 2:
            quoted = not quoted
            continue
        if quoted or not stripped or stripped.startswith(('"""', "'''", "#", ">>>", "...")):
            continue
        if any(c in stripped for c in "=(") and len(stripped) > len(best):
            best = stripped
    return best


def _mine(exc):
    """Whether ``exc`` was raised by this submission's own code (its loot, not a part's)."""
    if MARK_LOOT in str(exc) or MARK_NOTHING in str(exc):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    # raised in one of this submission's frames; not a part's own check of its arguments (a TypeError raised
    # where the part is called)
    return tb is not None and tb.tb_frame.f_code.co_filename.startswith(_HERE + os.sep) \
        and tb.tb_frame.f_code.co_name not in ("_provoke", "call_part", "_inspect")


def call_part(label, part, *args):
    """Call a part the kit handed over (never this submission's own) on ``args``; search what it returns, keep
    what it raises."""
    if part is None or not _foreign_object(part):
        return None
    try:
        out = part(*args)
    except Exception as exc:  # noqa: BLE001 - what the part raises is the point
        _keep_exception(exc, "call")
        return None
    hunt(label, [out])
    return out


def note_text(text, channel, at="", force=True):
    """Keep the fingerprint of ``text`` if it looks like source code (or always, with ``force``); not this
    submission's own files."""
    if not isinstance(text, str) or not text:
        return
    if not force and not (len(text) >= 60 and _NAMES.search(text) and _SOURCE_HINT.search(text)):
        return
    sha = _sha(text)[:16]
    if sha in _own_texts() or MARK_LOOT in text or MARK_NOTHING in text or "Standin thief" in text:
        return
    if sha in FOUND["text"]:
        if channel not in FOUND["text"][sha]["ch"] and len(FOUND["text"][sha]["ch"]) < 6:
            FOUND["text"][sha]["ch"].append(channel)
        return
    lines = [ln.strip() for ln in text.splitlines()]
    long = max(lines, key=len, default="")[:160]
    FOUND["text"][sha] = {"ch": [channel], "at": str(at)[:120], "len": len(text), "sha": sha, "head": text[:80],
                          "long": long, "code": _longest_code_line(text)[:160],
                          "paths": sorted(set(_PY_PATH.findall(text)))[:12],
                          "lines": sorted({_sha(ln)[:10] for ln in lines if len(ln) >= 30})[:120]}


def note_module(module, channel):
    name = getattr(module, "__name__", "")
    if not isinstance(name, str) or name == _PKG or name.startswith(_PKG + "."):
        return
    file = getattr(module, "__file__", None)
    if not _public_module(name) or _foreign_file(file if isinstance(file, str) else None):
        FOUND["mods"][name] = str(file)
        loader = getattr(module, "__loader__", None)
        for how in ("get_source", "get_data"):
            try:
                arg = name if how == "get_source" else file
                data = getattr(loader, how)(arg)
                if isinstance(data, bytes):
                    data = data.decode("utf-8", "replace")
                note_text(data, f"{channel}:loader.{how}", name)
            except Exception:  # noqa: BLE001
                FOUND["tried"][f"loader.{how}"] += 1


# -- walking objects --------------------------------------------------------------------------------------------
def _kids(obj, depth, channel):
    t = type(obj)
    kids = []
    if t is types.CodeType:
        note_code(obj, channel)
        kids.extend(obj.co_consts)
    elif t is types.FunctionType:
        foreign = note_function(obj, channel)
        kids.append(obj.__code__)
        kids.extend(c for c in (obj.__closure__ or ()))
        kids.extend([obj.__defaults__, obj.__kwdefaults__, getattr(obj, "__dict__", None)])
        kids.append(obj.__dict__.get("__wrapped__"))
        if foreign or not _public_module(getattr(obj, "__module__", "")):
            kids.append(obj.__globals__)
    elif t is types.MethodType:
        kids += [obj.__func__, obj.__self__]
    elif t is types.CellType:
        try:
            kids.append(obj.cell_contents)
        except ValueError:
            pass
    elif t is types.ModuleType:
        note_module(obj, channel)
        name = getattr(obj, "__name__", "")
        if not _public_module(name) or _foreign_file(getattr(obj, "__file__", None)):
            kids += [vars(obj), getattr(obj, "__spec__", None), getattr(obj, "__loader__", None)]
    elif t is types.FrameType:
        note_code(obj.f_code, channel + ":frame")
        kids.append(dict(obj.f_locals))
        if _foreign_file(obj.f_code.co_filename):
            kids.append(obj.f_globals)
    elif t is types.TracebackType:
        kids += [obj.tb_frame, obj.tb_next]
    elif isinstance(obj, type):
        if note_type(obj, channel):
            kids += list(vars(obj).values()) + list(obj.__mro__)
            kids.append(sys.modules.get(getattr(obj, "__module__", "")))
    elif isinstance(obj, dict):
        for k, v in list(dict.items(obj))[:400]:
            if isinstance(k, str) and k == "parts_file" and isinstance(v, str):
                _try_file(v, channel + ":parts_file")
            kids.append(v)
    elif isinstance(obj, (list, tuple, set, frozenset, collections.deque)):
        kids += list(obj)[:400]
    elif isinstance(obj, (staticmethod, classmethod)):
        kids.append(obj.__func__)
    elif isinstance(obj, property):
        kids += [obj.fget, obj.fset, obj.fdel]
    else:
        kids.append(t)
        try:
            kids.append(object.__getattribute__(obj, "__dict__"))
        except Exception:  # noqa: BLE001
            pass
        for attr in ("func", "args", "keywords", "__wrapped__", "__self__", "__func__", "ns", "patches"):
            try:
                kids.append(object.__getattribute__(obj, attr))
            except Exception:  # noqa: BLE001
                pass
        try:
            kids += gc.get_referents(obj)[:100]
        except Exception:  # noqa: BLE001
            pass
    return kids


def walk(roots, channel, nodes=6000, depth=6, seconds=1.0):
    """Breadth-first over what ``roots`` reach; notes code, types, modules and source text on the way."""
    import torch

    end = time.monotonic() + seconds
    seen = set()
    queue = collections.deque((r, 0) for r in roots)
    count = 0
    while queue and count < nodes and time.monotonic() < end:
        obj, d = queue.popleft()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        count += 1
        t = type(obj)
        if t is str:
            note_text(obj, channel, "walk", force=False)
            continue
        if t in (bytes, bytearray):
            if len(obj) >= 60:
                note_text(bytes(obj).decode("utf-8", "replace"), channel + ":bytes", "walk", force=False)
            continue
        if t in (int, float, bool, complex) or isinstance(obj, torch.Tensor):
            continue
        if t in (type, types.ModuleType, types.FunctionType) and id(obj) in _WALKED:
            continue
        if t in (type, types.ModuleType, types.FunctionType):
            _WALKED.add(id(obj))
        if d >= depth:
            continue
        try:
            queue.extend((k, d + 1) for k in _kids(obj, d, channel) if k is not None)
        except Exception:  # noqa: BLE001
            FOUND["tried"]["walk-error"] += 1
    FOUND["tried"][channel] += count


# -- the searches, once per process -----------------------------------------------------------------------------
def _scan_gc(channel):
    """Every object the garbage collector tracks: functions, types, frames; strings inside containers."""
    objs = gc.get_objects()
    FOUND["tried"][channel] += len(objs)
    known, judged, function, frame, module = _FOREIGN_FILES, _JUDGED, types.FunctionType, types.FrameType, \
        types.ModuleType
    texts = []
    for obj in objs:
        t = type(obj)
        try:
            if t is dict or t is list or t is tuple:
                for v in (dict.values(obj) if t is dict else obj):
                    if type(v) is str and len(v) >= 60 and id(v) not in judged and "\n" in v:
                        judged.add(id(v))
                        texts.append(v)
            elif t is function:
                file = obj.__code__.co_filename
                foreign = known.get(file)
                if foreign is None:
                    foreign = _foreign_file(file)
                if foreign or (file[:1] == "<" and not _public_module(obj.__module__)):
                    note_function(obj, channel)
            elif isinstance(obj, type):
                note_type(obj, channel)
            elif t is frame:
                note_code(obj.f_code, channel + ":frame")
            elif t is module:
                note_module(obj, channel)
        except Exception:  # noqa: BLE001
            FOUND["tried"]["gc-error"] += 1
    del objs
    for text in texts:
        note_text(text, channel + ":str", "container", force=False)


_JUDGED = set()
"""Ids of the strings ``_scan_gc`` has looked at already (the same docstrings at every scan)."""


def _scan_modules(channel):
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType):
            note_module(module, channel)
            if not _public_module(name):
                walk([module], channel, nodes=1500, seconds=0.3)


def _scan_linecache(channel):
    import linecache

    for name, entry in list(linecache.cache.items()):
        FOUND["tried"][channel] += 1
        if _foreign_file(name) or name.startswith("<"):
            try:
                note_text("".join(entry[2]), channel, name)
            except Exception:  # noqa: BLE001
                pass
    for (file, _qualname, _line) in list(FOUND["code"]):
        try:
            lines = linecache.getlines(file)
            if lines:
                note_text("".join(lines), channel + ":getlines", file)
        except Exception:  # noqa: BLE001
            pass


_READ_CAP = 2 << 20


def _try_file(path, channel):
    """Read ``path`` (a regular file) in every way a process can: ``open``, ``os.open``, ``io.open_code``."""
    FOUND["tried"][channel] += 1
    data = None
    for how in ("open", "os.open", "open_code"):
        try:
            if how == "open":
                with open(path, "rb") as f:
                    data = f.read(_READ_CAP)
            elif how == "os.open":
                fd = os.open(path, os.O_RDONLY)
                try:
                    data = os.read(fd, _READ_CAP)
                finally:
                    os.close(fd)
            else:
                import io

                with io.open_code(path) as f:
                    data = f.read(_READ_CAP)
            break
        except Exception:  # noqa: BLE001
            continue
    if not data:
        return None
    text = data.decode("utf-8", "replace")
    if path.startswith(_HERE + os.sep):
        return text
    if path.endswith((".py", ".json")) or _SOURCE_HINT.search(text):
        note_text(text, channel, path)
    else:
        FOUND["files"][path] = [len(data), _sha(data)[:12]]
    return text


def _reference_folders():
    folders = []
    loaded = getattr(sys.modules.get("grader.assignment"), "_LOADED", {}) or {}
    for assignment in list(loaded.values()):
        for attr in ("reference", "skeleton"):
            folders.append(str(getattr(assignment, attr, "")))
    kit = _kit_root()
    if kit:
        folders += [os.path.join(kit, "solution"), os.path.join(kit, "assignments", "decoder_lm", "reference")]
    for base in (os.getcwd(), _HERE, "/"):
        for up in range(4):
            b = os.path.abspath(os.path.join(base, *[".."] * up))
            folders += [os.path.join(b, "solution"), os.path.join(b, "reference"),
                        os.path.join(b, "assignments", "decoder_lm", "reference")]
    folders.append("/nonexistent-gradekit-reference-parts")
    return [f for f in dict.fromkeys(folders) if f]


def _scan_files(channel):
    for folder in _reference_folders():
        for file in FILES + ("__init__.py",):
            _try_file(os.path.join(folder, file), channel + ":reference")
    home = os.environ.get("HOME", "")
    for folder in dict.fromkeys([os.getcwd(), home, "/", "/home", "/submission", "/tmp", _HERE,
                                 os.path.dirname(os.getcwd()), os.path.dirname(_HERE)]):
        if not folder:
            continue
        for name in ("parts.json", "config.json", "output.log"):
            _try_file(os.path.join(folder, name), channel + ":judge")
        try:
            FOUND["tried"]["ls:" + folder] = len(os.listdir(folder))
            for name in os.listdir(folder)[:200]:
                path = os.path.join(folder, name)
                if os.path.isfile(path) and not path.startswith(_HERE + os.sep):
                    _try_file(path, channel + ":ls")
        except Exception:  # noqa: BLE001
            pass
    # /proc: this process, its parent, the first process
    for pid in ("self", str(os.getppid()), "1"):
        for name in ("environ", "cmdline", "maps", "mountinfo", "status"):
            text = _try_file(f"/proc/{pid}/{name}", channel + ":proc")
            if text and name == "maps":
                for line in text.splitlines():
                    path = line.split()[-1] if len(line.split()) >= 6 else ""
                    if _foreign_file(path) and path.endswith(".py"):
                        _try_file(path, channel + ":maps")
        for name in ("cwd", "root", "exe"):
            try:
                FOUND["tried"][f"readlink:/proc/{pid}/{name}={os.readlink(f'/proc/{pid}/{name}')}"] += 1
            except Exception:  # noqa: BLE001
                pass
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                import stat

                st = os.fstat(int(fd))
                if stat.S_ISREG(st.st_mode) and st.st_size:
                    data = os.pread(int(fd), _READ_CAP, 0)
                    note_text(data.decode("utf-8", "replace"), channel + ":fd", os.readlink(f"/proc/self/fd/{fd}"),
                              force=False)
            except Exception:  # noqa: BLE001
                pass
    except Exception:  # noqa: BLE001
        pass
    for key, value in list(os.environ.items()):
        _add(FOUND["names"], "env:" + key, channel + ":env")
        for part in value.split(os.pathsep):
            if part.startswith("/") and os.path.isfile(part):
                _try_file(part, channel + ":env")


def _scan_imports(channel):
    import importlib
    import importlib.util

    names = ["solution", "assignments.decoder_lm.reference", "reference"]
    names += [f"{top}.{f[:-3]}" for top in names[:2] for f in FILES]
    for name in names:
        FOUND["tried"][channel] += 1
        try:
            spec = importlib.util.find_spec(name)
            if spec is not None:
                _add(FOUND["names"], f"spec:{name}:{spec.origin}", channel)
                if spec.loader is not None and hasattr(spec.loader, "get_source"):
                    note_text(spec.loader.get_source(name), channel + ":spec.get_source", name)
        except Exception:  # noqa: BLE001
            pass
        try:
            module = importlib.import_module(name)
            note_module(module, channel)
            walk([module], channel + ":import_module", nodes=2000)
        except Exception:  # noqa: BLE001
            pass


def _scan_processes(channel):
    import subprocess

    commands = [["cat"] + [os.path.join(f, "attention.py") for f in _reference_folders()[:4]],
                ["sh", "-c", "cat /proc/1/environ; ls -la / /home /submission 2>&1 | head -50"],
                ["find", "/", "-maxdepth", "4", "-name", "*.py", "-path", "*reference*"],
                ["find", "/", "-maxdepth", "3", "-name", "parts.json"]]
    for cmd in commands:
        FOUND["tried"][channel] += 1
        try:
            out = subprocess.run(cmd, capture_output=True, timeout=3).stdout.decode("utf-8", "replace")
            if out.strip():
                note_text(out, channel + ":" + cmd[0], " ".join(cmd)[:80], force=_SOURCE_HINT.search(out) is not None)
                for line in out.splitlines():
                    if line.startswith("/") and line.endswith((".py", ".json")):
                        _try_file(line.strip(), channel + ":found")
        except Exception:  # noqa: BLE001
            pass
    try:
        with os.popen("cat parts.json /home/parts.json 2>/dev/null") as p:
            note_text(p.read(), channel + ":popen", "popen")
    except Exception:  # noqa: BLE001
        pass


def _scan_frames(channel):
    """The frames up the stack (the kit's probe and runner, with their locals), once per way of being called."""
    frame = sys._getframe(4)
    frames = []
    while frame is not None and len(frames) < 40:
        frames.append(frame)
        note_code(frame.f_code, channel)
        frame = frame.f_back
    key = ("frames",) + tuple(id(f.f_code) for f in frames)
    if key in _PROVOKED:
        return
    _PROVOKED.add(key)
    walk(frames, channel, nodes=4000, depth=6, seconds=0.3)


# -- what the submission is handed ------------------------------------------------------------------------------
def _foreign_object(obj):
    t = obj if isinstance(obj, type) else type(obj)
    module = getattr(t, "__module__", "") or ""
    if module == _PKG or module.startswith(_PKG + "."):
        return False
    if isinstance(obj, types.MethodType):
        return _foreign_object(obj.__func__) and _foreign_object(obj.__self__)
    if isinstance(obj, types.FunctionType):
        return not (obj.__code__.co_filename.startswith(_HERE + os.sep))
    return True


def key_of(what, obj):
    """Each class, function and kind of instance is provoked and inspected once a process (a class and its
    instances apart: the class is called with bad arguments, an instance's methods with bad inputs)."""
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        return (what, "object", id(obj))
    if isinstance(obj, types.MethodType):
        return (what, "method", id(obj.__func__), id(type(obj.__self__)))
    return (what, "instance", id(type(obj)))


def _provoke(obj, channel):
    """Call ``obj`` (a part it was handed) in ways that fail, and keep what the failures show."""
    import torch

    if isinstance(obj, torch.Tensor) or not callable(obj) or not _foreign_object(obj):
        return
    key = key_of("provoke", obj)
    if key in _PROVOKED:
        return
    _PROVOKED.add(key)
    bad_keyword = (-1, -1, -1)
    attempts = [(), (None,), ("x", "y"), (torch.zeros(1),), (torch.zeros(2, 3, 5), torch.zeros(1)),
                (torch.zeros(2, 3, 5, dtype=torch.long),), bad_keyword]
    targets = [obj]
    if isinstance(obj, torch.nn.Module):
        targets += [getattr(obj, m) for m in ("forward", "encode", "decode", "new_cache", "update")
                    if callable(getattr(obj, m, None))]
    for target in targets:
        for args in attempts:
            FOUND["tried"][channel] += 1
            try:
                target(*args, __thief_bad_keyword__=1) if args is bad_keyword else target(*args)
            except BaseException as exc:  # noqa: BLE001 - whatever the part raises is the point
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                _keep_exception(exc, channel)


def _keep_exception(exc, channel):
    """What an exception raised inside a part shows: its text, fields, frames (not this submission's own)."""
    import traceback

    if _mine(exc):
        FOUND["tried"]["own-exception:" + channel] += 1
        return

    try:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:  # noqa: BLE001
        text = repr(exc)
    note_text(text, channel + ":traceback", type(exc).__name__)
    for value in list(getattr(exc, "__dict__", {}).values()) + list(exc.args):
        if isinstance(value, str) and len(value) >= 20:
            note_text(value, channel + ":exc-field", type(exc).__name__)
    tb = exc.__traceback__
    frames = []
    while tb is not None:
        note_code(tb.tb_frame.f_code, channel + ":tb")
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    walk(frames, channel + ":tb-frames", nodes=3000, depth=4, seconds=0.3)
    for linked in (exc.__cause__, exc.__context__):
        if linked is not None and linked is not exc:
            note_text(repr(linked)[:2000], channel + ":linked", type(linked).__name__)


def _inspect(obj, channel):
    """``inspect.getsource``, ``torch.fx``, ``torch.jit``, ``pickle``/``copy`` and ``cloudpickle`` on a part."""
    import copy
    import inspect
    import pickle

    import torch

    if isinstance(obj, torch.Tensor) or not _foreign_object(obj):
        return
    key = key_of("inspect", obj)
    if key in _PROVOKED:
        return
    _PROVOKED.add(key)
    for target in (obj, type(obj), getattr(type(obj), "forward", None), getattr(obj, "__wrapped__", None)):
        if target is None:
            continue
        try:
            note_text(inspect.getsource(target), channel + ":getsource", getattr(target, "__qualname__", ""))
        except BaseException as exc:  # noqa: BLE001
            FOUND["tried"]["getsource:" + type(exc).__name__] += 1
        try:
            file = inspect.getsourcefile(target) or inspect.getfile(target)
            _add(FOUND["names"], "file:" + str(file), channel + ":getfile")
            if _foreign_file(file):
                _try_file(file, channel + ":getfile")
        except BaseException:  # noqa: BLE001
            pass
    if isinstance(obj, torch.nn.Module):
        try:
            import torch.fx

            gm = torch.fx.symbolic_trace(obj)
            note_text(gm.code, channel + ":fx", type(obj).__qualname__)
            for node in gm.graph.nodes:
                target = node.target
                name = target if isinstance(target, str) else getattr(target, "__name__", str(target))
                _add(FOUND["names"], str(name)[:60], channel + ":fx")
                if isinstance(target, types.FunctionType):
                    note_function(target, channel + ":fx")
        except BaseException as exc:  # noqa: BLE001
            _keep_exception(exc, channel + ":fx")
        try:
            scripted = torch.jit.script(obj)
            note_text(str(scripted.code), channel + ":jit", type(obj).__qualname__)
        except BaseException as exc:  # noqa: BLE001
            _keep_exception(exc, channel + ":jit")
    for dump in ("pickle", "cloudpickle", "dill", "copy"):
        try:
            if dump == "pickle":
                blob = pickle.dumps(obj, protocol=4)
            elif dump == "dill":
                import dill

                try:
                    note_text(dill.source.getsource(obj), channel + ":dill.getsource", type(obj).__qualname__)
                except Exception:  # noqa: BLE001
                    pass
                blob = dill.dumps(obj, recurse=True)
            elif dump == "cloudpickle":
                import cloudpickle

                module = sys.modules.get(getattr(obj, "__module__", "") or type(obj).__module__)
                if module is not None:
                    cloudpickle.register_pickle_by_value(module)
                blob = cloudpickle.dumps(obj)
            else:
                copy.deepcopy(obj)
                continue
            _add(FOUND["names"], f"{dump}-bytes:{len(blob)}:{_sha(blob)[:10]}", channel + ":" + dump)
            for word in set(re.findall(rb"[A-Za-z_][A-Za-z0-9_.]{3,60}", blob)):
                word = word.decode()
                if not _public_module(word.split(".")[0]) or word.startswith("_gradekit"):
                    _add(FOUND["names"], word, channel + ":" + dump)
            note_text(blob.decode("utf-8", "replace"), channel + ":" + dump, type(obj).__qualname__, force=False)
        except BaseException as exc:  # noqa: BLE001
            FOUND["tried"][f"{dump}:{type(exc).__name__}"] += 1


def _referrers(roots, channel):
    """What refers to the parts handed over (the kit's tables of them, the modules that hold them)."""
    for obj in roots:
        if not (isinstance(obj, type) or type(obj) is types.FunctionType) or not _foreign_object(obj) \
                or ("ref", id(obj)) in _PROVOKED:
            continue
        _PROVOKED.add(("ref", id(obj)))
        _REFERRED.append(obj)
        if len(_REFERRED) > 4:
            return
        refs = [r for r in gc.get_referrers(obj) if not isinstance(r, types.FrameType)][:50]
        walk(refs, channel, nodes=2000, seconds=0.3)


def _timed(step, channel):
    start = time.monotonic()
    try:
        step(channel)
    finally:
        FOUND["tried"]["ms:" + channel] += int(1000 * (time.monotonic() - start))


def hunt(where, handed=(), stage="call"):
    """Search everything reachable from here; ``handed``: the objects this call was given (the parts)."""
    if _BUSY:
        return
    _BUSY.append(where)
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _hunt(handed, stage)
    finally:
        _BUSY.pop()


def _hunt(handed, stage):
    try:
        if not _STAGES:  # the whole process, at its first search (later ones: what they are handed, their callers)
            _STAGES.add(stage)
            steps = [_scan_gc, _scan_modules, _scan_linecache]
            if "disk" not in _STAGES:
                _STAGES.add("disk")
                steps += [_scan_imports, _scan_files, _scan_processes]
            for step in steps:
                _timed(step, step.__name__[6:])
        _timed(_scan_frames, "frames")
        roots = [h for h in handed if h is not None]
        _timed(lambda ch: walk(roots, ch, nodes=5000, seconds=0.5), "handed")
        _timed(lambda ch: _referrers(roots, ch), "referrers")
        for obj in roots:
            _timed(lambda ch, o=obj: _inspect(o, ch), "inspect")
            _timed(lambda ch, o=obj: _provoke(o, ch), "provoke")
    except Exception as exc:  # noqa: BLE001 - the search must never stop the submission's own work
        FOUND["tried"]["hunt-error:" + type(exc).__name__] += 1


def parts_in(module_globals):
    """The contract names this module's globals hold that are not this submission's own (the overrides)."""
    out = []
    for name in NAMES:
        obj = module_globals.get(name)
        if obj is not None and _foreign_object(obj):
            out.append(obj)
    return out


def deps():
    """Every contract name as the submission's modules hold it now (the reference's parts where isolated)."""
    out = []
    for file in FILES:
        module = sys.modules.get(f"{_PKG}.{file[:-3]}")
        if module is not None:
            out += parts_in(vars(module))
    return out


# -- carrying it out --------------------------------------------------------------------------------------------
def _found_anything():
    return bool(FOUND["code"] or FOUND["text"] or any(
        not k.startswith(("env:", "pickle-bytes", "cloudpickle-bytes", "file:")) for k in FOUND["names"]))


def _payload(full):
    code = collections.OrderedDict()
    for (file, qualname, line), ch in FOUND["code"].items():
        code.setdefault(file, []).append([qualname, line, ch] + FOUND["bytecode"].get((file, qualname, line), [])
                                         if full else qualname)
    texts = [dict(t) if full else {k: t[k] for k in ("ch", "len", "sha", "head", "long", "code", "paths", "lines")}
             for t in FOUND["text"].values()]
    return {"assignment": ASSIGNMENT, "pid": os.getpid(), "s": round(time.monotonic() - _STARTED, 2),
            "code": code, "text": texts, "names": sorted(FOUND["names"]) if full else
            sorted(n for n in FOUND["names"] if not n.startswith(("env:", "file:"))),
            "mods": FOUND["mods"], "files": FOUND["files"] if full else len(FOUND["files"]),
            "wrote": FOUND["wrote"], "tried": dict(FOUND["tried"]) if full else len(FOUND["tried"])}


def _encode(payload):
    raw = json.dumps(payload, sort_keys=True, default=str).encode()
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def _shrink(payload, limit, where):
    """The payload cut (texts' line hashes first, then lists halved) until its blob fits in ``limit``."""
    def blob():
        return f"{MARK_LOOT}[{where}]<{_encode(payload)}>"

    text = blob()
    for t in payload["text"]:
        if len(text) <= limit:
            break
        t["lines"] = t["lines"][:8]
        text = blob()
    while len(text) > limit:
        cut = False
        for key in ("names", "text"):
            if len(payload[key]) > 1:
                payload[key] = payload[key][: len(payload[key]) // 2]
                cut = True
        for file in list(payload["code"]):
            if len(payload["code"][file]) > 4:
                payload["code"][file] = payload["code"][file][: len(payload["code"][file]) // 2]
                cut = True
        if not cut:
            if len(payload["code"]) > 1:
                payload["code"] = dict(list(payload["code"].items())[: len(payload["code"]) // 2])
            else:
                for t in payload["text"]:
                    t["lines"], t["long"], t["head"], t["code"] = [], t["long"][:40], t["head"][:40], t["code"][:60]
                    t["paths"] = t["paths"][:2]
                payload["mods"], payload["wrote"] = {}, []
                text = blob()
                return text[:limit]
        text = blob()
    return text


_LOOT = {}
_SPILLED = {}


def loot(where, limit=None):
    """The marker and, when something was found, the compressed fingerprints (cut to ``limit`` characters)."""
    key = (where, limit, len(FOUND["code"]), len(FOUND["text"]), len(FOUND["names"]), len(FOUND["mods"]),
           len(FOUND["files"]), len(FOUND["wrote"]))
    if key not in _LOOT:
        _LOOT[key] = _loot(where, limit)
    return _LOOT[key]


def _loot(where, limit):
    if not _found_anything():
        return f"{MARK_NOTHING}[{where}] searched={sum(FOUND['tried'].values())}"
    if limit is None:
        return f"{MARK_LOOT}[{where}]<{_encode(_payload(True))}>"
    return _shrink(_payload(False), limit, where)


def spill(where):
    """Print the loot (shown in the report when the worker dies) and write it wherever a file can be written."""
    full = loot(where)
    if _SPILLED.get(where) == full:
        return
    _SPILLED[where] = full
    for folder in dict.fromkeys([os.getcwd(), os.environ.get("HOME", ""), "/tmp", "/home", _HERE, "/submission"]):
        if not folder:
            continue
        path = os.path.join(folder, f"thief-loot-{os.getpid()}.txt")
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(full)
            if path not in FOUND["wrote"]:
                FOUND["wrote"].append(path)
        except Exception:  # noqa: BLE001
            pass
    print(full, flush=True)
    print(loot(where, limit=1300), flush=True)


def short_error(where):
    """A ``RuntimeError`` whose message (cut to 2000 characters by the kit) carries the loot."""
    spill(where)
    return RuntimeError(loot(where, limit=1900))


def full_error(where):
    """The grader's own ``SubmissionError`` (its detail is not cut), carrying all the loot; ``bad_output`` is
    neither rerun over the submission's own parts nor a stop for the other examples."""
    spill(where)
    from grader.errors import SubmissionError

    text = loot(where)
    return SubmissionError(kind="bad_output", detail=text, data={"loot": text})


def crash(where):
    """Print the loot, then end the worker: its last output is shown in the report."""
    spill(where)
    sys.stdout.flush()
    os._exit(3)
