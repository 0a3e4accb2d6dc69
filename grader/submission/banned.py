"""Banned APIs: a static scan of the submission's source and a runtime guard at PyTorch's dispatcher and in the
banned functions themselves.

An assignment names the APIs it bans (``Assignment.banned``: ready-made building blocks, optimisers, schedules,
and importing its reference). A dotted ``torch`` name is found wherever it is used; a name without a dot is a
package (the reference's), found where it is imported. What this module knows is torch's side, whatever the
assignment: ``WATCH`` says what identifies each torch API at run time, ``ALIASES`` which other names reach it
in the source.

The static scan resolves import aliases (``import torch.nn.functional as F``, ``ln = F.layer_norm``) and
flags every use of a banned name or of a lower-level entry point to the same thing
(``torch.native_layer_norm``, ``torch.ops.aten._scaled_dot_product_attention_math``, see ``ALIASES``), with
file and line.

The runtime guard watches what runs, not names, in two ways (``Watch``):

- *kernels*: the aten operators only that API runs (``aten::native_layer_norm``, ``aten::rms_norm``,
  ``aten::_fused_adamw_``). The guard registers a Python kernel for each at the ``BackendSelect`` dispatch
  key, which is in every call's key set, below autograd and above every backend: each call of the operator
  passes through it, whatever the route (``F.layer_norm``, ``torch.layer_norm``,
  ``torch.ops.aten.native_layer_norm``, ``nn.LayerNorm``, the original function behind any wrapper, code
  compiled under any file name), the device (CPU and meta are kit-tested; the CUDA kernels are listed but
  not yet tried on a GPU) or the mode (``no_grad``, ``inference_mode``; a backward kernel run by the autograd
  engine is not counted again). That kernel notes the call and passes it on (``redispatch``); every other
  operator is untouched, so the guard costs nothing on the operators a correct submission uses (a
  ``TorchDispatchMode`` would see every operator in Python: 3x slower on a submission's side, measured). An
  operator that only decomposes (``CompositeImplicitAutograd``: ``rms_norm``, ``layer_norm``,
  ``scaled_dot_product_attention``) never reaches ``BackendSelect`` as itself outside ``inference_mode``: it is
  also watched above its decomposition, at the autograd key of each backend and at ``vmap``'s batching key,
  where the kernel notes the call and runs the decomposition the key would have run (``decompose``).
- *calls*: the Python functions only that API runs (``torch.optim.adam._single_tensor_adam``,
  ``torch.nn.utils.clip_grad.clip_grad_norm_``, every function and method of ``torch.optim.lr_scheduler``),
  for what runs no distinctive kernel (Adam's update is ordinary arithmetic; an ``SGD`` step, which the
  grader runs, is made of the same ``_foreach`` operators). The hook is put in the function object itself:
  its code is replaced by a trampoline that notes the call and runs a copy of the function with the original
  code. Every reference to the function, however it was reached (an alias, ``getattr`` with a computed name,
  the innermost ``__wrapped__`` of a decorated function, which is the one hooked, a subclass inheriting the
  method) and whenever it was taken (before the guard was installed too, even by torch itself:
  ``torch.nn.utils.clip_grad.clip_grad_norm_``, ``torch.optim._functional.adamw``), runs the hooked code.
  ``Watch.when`` tells APIs that share a function apart (Adam and AdamW both run ``_single_tensor_adam``;
  ``decoupled_weight_decay`` says which). A name ``WATCH`` does not list is watched where it is called (a
  function: itself; a class: its own ``forward`` or ``__init__``; a module: every function it defines); a
  callable with no Python code (``torch.softmax``) by a wrapper put in its place under that name.

The guard records only between ``start`` and ``stop``, which the runner calls around each probe it runs on
the submission; the reference's own computations and the judge's code run outside. Each finding lands on a
task: the innermost stack frame in the submission gives the enclosing top-level definition, whose contract
name gives the task (a module-level helper: the task of the class of its file it runs as a method of, else
every task of its file; a helper file of the submission's own: the next frame out). Code of the submission's
that does not say so by its file name is found too: a function the submission's modules hold that was
compiled under a foreign file name (torch's own, ``/usr/lib/...``) counts as the top-level name it is bound
to (or the class whose body binds it), and a method a class of the submission inherits from a banned class
(``class AdamW(torch.optim.AdamW)``) counts for that class, at the line of its own code that called it, else
of the class; with no frame of the submission on the stack, the tasks of the running probe
(``probe_tasks``). The grader's probes and the reference call none of these: grading the reference with the
guard on finds nothing (a kit test).

What it does not do: the guard runs in the process that runs the submission, so a submission that sets out to
dismantle it (removing the registrations, putting a hooked function's code back, patching this module) can;
the cheap cases (a registration removed, a hooked function's code or a wrapper put back) are noticed at
``stop``, recorded as a finding on the running probe's tasks, and repaired. Re-running torch's source
(``importlib.reload``, or the text of ``clip_grad.py`` compiled anew) makes functions the hooks never saw:
that is the student's own copy of torch's code, not a call of the API.
"""

import ast
import importlib
import inspect
import os
import stat
import sys
import sysconfig
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from grader.submission.loader import PARTS_ROOT


@dataclass(frozen=True)
class Watch:
    """What identifies one banned torch API at run time."""

    kernels: tuple = ()
    """aten operators (any overload) that only this API runs, watched at the dispatcher; one torch lacks is
    skipped."""
    calls: tuple = ()
    """Python functions that only this API runs, dotted as torch defines them (``torch.optim.adam._fused_adam``,
    ``torch.nn.MultiheadAttention.forward``), hooked in the function object; a module: every function and
    method defined in it; one torch lacks is skipped."""
    when: tuple = ()
    """``(keyword, value)`` pairs a hooked call's keyword arguments must match (``bool(value)``) for the call to
    be this API: APIs that run the same functions are told apart by it."""


_LAYER_NORM = ("native_layer_norm", "native_layer_norm_backward", "layer_norm")
_RMS_NORM = ("rms_norm", "_fused_rms_norm", "_fused_rms_norm_backward")
_ATTENTION = (
    "_fused_sdp_choice",  # every call of scaled_dot_product_attention asks which kernel to use
    "_safe_softmax",  # the unfused (math) path's softmax, however it is reached (flex_attention's eager math too)
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_fused_attention_overrideable",
    "_scaled_dot_product_fused_attention_overrideable_backward",
    "_flash_attention_forward",
    "_flash_attention_backward",
    "_efficient_attention_forward",
    "_efficient_attention_backward",
    "_cudnn_attention_forward",
    "_scaled_dot_product_attention_math_for_mps",
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
)
_MULTI_HEAD = ("_native_multi_head_attention",)
_ENCODER_LAYER = ("_transformer_encoder_layer_fwd",)
_FLEX_ATTENTION = Watch(
    calls=(
        "torch.nn.attention.flex_attention.flex_attention",
        "torch._higher_order_ops.flex_attention.FlexAttentionHOP.__call__",  # torch.ops.higher_order.flex_attention
        "torch._higher_order_ops.flex_attention.FlexAttentionBackwardHOP.__call__",
        "torch._higher_order_ops.flex_attention._math_attention_inner",  # the eager computation, however reached
    )
)
_RMS_NORM_WATCH = Watch(
    kernels=_RMS_NORM,
    calls=("torch._decomp.decompositions._fused_rms_norm",),  # the same computation in Python, for compilers
)
_ADAM_STEPS = (
    "torch.optim.adam._single_tensor_adam",
    "torch.optim.adam._multi_tensor_adam",
    "torch.optim.adam._fused_adam",
)  # what Adam.step and the functional adam/adamw run (torch 2.x)

WATCH = {
    # -- normalisation --
    "torch.nn.functional.layer_norm": Watch(kernels=_LAYER_NORM),
    "torch.nn.LayerNorm": Watch(kernels=_LAYER_NORM),
    "torch.layer_norm": Watch(kernels=_LAYER_NORM),
    "torch.native_layer_norm": Watch(kernels=_LAYER_NORM),
    "torch.nn.functional.rms_norm": _RMS_NORM_WATCH,
    "torch.nn.RMSNorm": _RMS_NORM_WATCH,
    "torch.rms_norm": _RMS_NORM_WATCH,
    # -- attention --
    "torch.nn.functional.scaled_dot_product_attention": Watch(kernels=_ATTENTION),
    "torch._C._nn.scaled_dot_product_attention": Watch(kernels=_ATTENTION),
    "torch.nn.attention.flex_attention": _FLEX_ATTENTION,
    "torch.nn.attention.flex_attention.flex_attention": _FLEX_ATTENTION,
    "torch.nn.MultiheadAttention": Watch(kernels=_MULTI_HEAD, calls=("torch.nn.MultiheadAttention.forward",)),
    "torch.nn.functional.multi_head_attention_forward": Watch(
        kernels=_MULTI_HEAD, calls=("torch.nn.functional.multi_head_attention_forward",)
    ),
    "torch._native_multi_head_attention": Watch(kernels=_MULTI_HEAD),
    # -- Transformer layers (the encoder's fast path is one kernel; the decoder runs none of its own) --
    "torch.nn.TransformerEncoderLayer": Watch(
        kernels=_ENCODER_LAYER, calls=("torch.nn.TransformerEncoderLayer.forward",)
    ),
    "torch.nn.TransformerEncoder": Watch(kernels=_ENCODER_LAYER, calls=("torch.nn.TransformerEncoder.forward",)),
    "torch.nn.Transformer": Watch(kernels=_ENCODER_LAYER, calls=("torch.nn.Transformer.forward",)),
    "torch.nn.TransformerDecoderLayer": Watch(calls=("torch.nn.TransformerDecoderLayer.forward",)),
    "torch.nn.TransformerDecoder": Watch(calls=("torch.nn.TransformerDecoder.forward",)),
    # -- optimisation (Adam's foreach path runs the _foreach operators SGD runs too: not distinctive) --
    "torch.optim.AdamW": Watch(kernels=("_fused_adamw_",), calls=_ADAM_STEPS, when=(("decoupled_weight_decay", True),)),
    "torch.optim.Adam": Watch(kernels=("_fused_adam_",), calls=_ADAM_STEPS, when=(("decoupled_weight_decay", False),)),
    "torch.optim.lr_scheduler": Watch(calls=("torch.optim.lr_scheduler",)),
    "torch.nn.utils.clip_grad_norm_": Watch(calls=("torch.nn.utils.clip_grad_norm_",)),
    "torch.nn.utils.clip_grad_norm": Watch(calls=("torch.nn.utils.clip_grad_norm",)),
    "torch.nn.utils.get_total_norm": Watch(calls=("torch.nn.utils.get_total_norm",)),
    "torch.nn.utils.clip_grads_with_norm_": Watch(calls=("torch.nn.utils.clip_grads_with_norm_",)),
}
"""Banned name -> what identifies its use at run time, for every torch name an assignment may ban; the first
name in this order whose ``Watch`` matches names a finding."""


def watch_of(name):
    """What identifies ``name`` at run time: its ``WATCH`` entry; a name not listed is watched where it is
    called."""
    return WATCH.get(name) or Watch(calls=(name,))


ALIASES = {
    "torch.nn.functional.layer_norm": ("layer_norm", "native_layer_norm", "native_layer_norm_backward"),
    "torch.nn.LayerNorm": ("LayerNorm", "native_layer_norm"),
    "torch.nn.functional.rms_norm": ("rms_norm", "_fused_rms_norm"),
    "torch.nn.functional.scaled_dot_product_attention": ("scaled_dot_product_attention",)
    + tuple(k for k in _ATTENTION if k != "scaled_dot_product_attention"),
    "torch.nn.functional.multi_head_attention_forward": ("multi_head_attention_forward",) + _MULTI_HEAD,
    "torch.nn.MultiheadAttention": ("MultiheadAttention",) + _MULTI_HEAD,
    "torch.nn.TransformerEncoderLayer": ("TransformerEncoderLayer",) + _ENCODER_LAYER,
    "torch.optim.AdamW": ("AdamW", "_fused_adamw_"),
    "torch.optim.Adam": ("Adam", "_fused_adam_", "_single_tensor_adam", "_multi_tensor_adam"),
    "torch.nn.utils.get_total_norm": ("get_total_norm", "_get_total_norm"),
    "torch.nn.utils.clip_grads_with_norm_": ("clip_grads_with_norm_", "_clip_grads_with_norm_"),
}
"""Banned name -> other attribute names that reach the same thing, for the static scan."""

MAX_SCAN_BYTES = 1 << 20
"""A source file larger than this is not parsed (the loader reports what it cannot import)."""


@dataclass(frozen=True)
class Finding:
    """One use of a banned API."""

    name: str
    """The banned API, fully qualified (``torch.nn.LayerNorm``); for a kernel, the first banned name it implements."""
    file: str
    """Submission file, relative to its folder (or the foreign file name the code was compiled under)."""
    line: int
    """Line number in ``file`` (0 when no frame of the submission was on the stack)."""
    code: str
    """The offending source line."""
    task: str
    """The task(s) the use belongs to, comma-separated; '' only for a file the submission never imports."""

    def to_dict(self):
        return {"name": self.name, "file": self.file, "line": self.line, "code": self.code, "task": self.task}


def file_tasks(assignment, rel):
    """The task ids of contract file ``rel``, comma-separated ('' for any other file)."""
    return ",".join(t.id for t in assignment.tasks if t.file == rel)


def _owner(assignment, name, rel):
    """The task of top-level definition ``name`` in file ``rel``: its contract task when the contract puts it
    in that file, else every task of the file."""
    if assignment.name_to_file.get(name) == rel:
        return assignment.name_to_task[name]
    return file_tasks(assignment, rel)


# -- the static scan --------------------------------------------------------------------------------
def _leaf_map(banned):
    """Attribute name -> banned name, for every leaf and alias of the torch names in ``banned``."""
    leaves = {}
    for b in banned:
        if b.startswith("torch."):
            for leaf in (b.rsplit(".", 1)[-1],) + ALIASES.get(b, ()):
                leaves.setdefault(leaf, b)
    return leaves


def _matches(dotted, banned, leaves):
    if dotted in banned:
        return dotted
    parts = dotted.split(".")
    if parts[0] == "torch":
        for part in reversed(parts[1:]):
            if part in leaves:
                return leaves[part]
    elif parts[0] in banned:  # a banned package (the reference's): every module of it
        return parts[0]
    return None


def _read_source(path):
    """The text of a regular file no larger than ``MAX_SCAN_BYTES``, or ``None`` (links, devices, FIFOs...)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):  # never open a device or a FIFO, even to look
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SCAN_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_SCAN_BYTES + 1)[:MAX_SCAN_BYTES].decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _imported_stems(tree, skeleton):
    """First components of the modules a file imports, absolute or relative (``from .helpers import x``);
    ``skeleton``: the stubs' package name, which stands for the submission's own folder."""
    stems = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            stems.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module:
                parts = node.module.split(".")
                stems.add(parts[1] if parts[0] == skeleton and len(parts) > 1 else parts[0])
            if node.level or node.module == skeleton:
                stems.update(a.name for a in node.names)
    return stems


def scan_file(path, root, assignment, banned=None, *, tasks=None, source=None, tree=None):
    """Findings in one file of a submission of ``assignment``; a file that does not parse has none (the loader
    reports it).

    ``banned``: the API names looked for (``None``: the assignment's). ``tasks``: the tasks of code outside
    every contract name in this file (default: the file's tasks).
    """
    banned = assignment.banned if banned is None else banned
    try:
        rel = Path(path).relative_to(root).as_posix()
    except ValueError:
        rel = Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    if source is None:
        source = _read_source(path)
    if source is None:
        return []
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
    lines = source.splitlines()
    module_tasks = file_tasks(assignment, rel) if tasks is None else tasks
    name_to_file, name_to_task = assignment.name_to_file, assignment.name_to_task
    banned, leaves = set(banned), _leaf_map(banned)
    aliases = {}
    findings = []

    spans = []
    for top in tree.body:
        owner = module_tasks
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            owner = _owner(assignment, top.name, rel) if name_to_file.get(top.name) == rel else module_tasks
        elif isinstance(top, (ast.Assign, ast.AnnAssign)):
            targets = top.targets if isinstance(top, ast.Assign) else [top.target]
            names = [t.id for t in targets if isinstance(t, ast.Name) and name_to_file.get(t.id) == rel]
            if names:
                owner = ",".join(dict.fromkeys(name_to_task[n] for n in names))
        spans.append((top.lineno, top.end_lineno or top.lineno, owner))

    def owner_task(node):
        for start, end, owner in spans:
            if start <= node.lineno <= end:
                return owner
        return module_tasks

    def add(name, node):
        code = lines[node.lineno - 1].strip() if 0 < node.lineno <= len(lines) else ""
        findings.append(Finding(name, rel, node.lineno, code[:200], owner_task(node)))

    def dotted(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            base = aliases.get(node.id, node.id if node.id == "torch" else None)
            if base:
                return ".".join([base] + parts[::-1])
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                hit = _matches(a.name, banned, leaves)
                if hit:
                    add(hit, node)
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                hit = _matches(full, banned, leaves) or _matches(node.module, banned, leaves)
                if hit:
                    add(hit, node)
                aliases[a.asname or a.name] = full
    for node in ast.walk(tree):  # plain aliases: ``ln = F.layer_norm``
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            full = dotted(node.value)
            if full and full.startswith("torch.") and node.targets[0].id not in aliases:
                aliases[node.targets[0].id] = full
    contract_names = set(name_to_task)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            full = dotted(node)
            hit = full and _matches(full, banned, leaves)
            if hit and "." in hit:  # a banned package counts where it is imported, not at every use
                add(hit, node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in aliases:
            hit = _matches(aliases[node.id], banned, leaves)
            if hit and "." in hit and "." in aliases[node.id] and aliases[node.id].startswith("torch."):
                add(hit, node)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in leaves
            and node.value not in contract_names
        ):  # ``__all__ = ["LayerNorm"]`` names the student's own
            add(leaves[node.value], node)
    unique = {(f.name, f.line): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.file, f.line, f.name))


def _source_files(root):
    """Regular ``.py`` files under ``root`` (no links followed; hidden folders and caches skipped)."""
    out = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") and not name.startswith("."):
                out.append(Path(folder) / name)
    return out


def scan(root, assignment, banned=None):
    """Findings in every ``.py`` file under ``root``, a submission of ``assignment`` (``banned``: the API names
    looked for; ``None``: the assignment's).

    Code in a contract file outside every contract name counts for all of the file's tasks; a file of the
    submission's own (``helpers.py``) counts for the tasks of the files that import it, directly or through
    other such files, and for none when nothing imports it (it never runs: the runtime guard would see it).
    """
    root = Path(root).resolve()
    parsed = {}
    for path in _source_files(root):
        source = _read_source(path)
        if source is None:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        parsed[path.relative_to(root).as_posix()] = (path, source, tree)
    skeleton = Path(assignment.skeleton).name
    imports = {rel: _imported_stems(tree, skeleton) for rel, (_, _, tree) in parsed.items()}
    tasks = {rel: set(filter(None, file_tasks(assignment, rel).split(","))) for rel in parsed}
    changed = True
    while changed:  # a helper's tasks: those of every file importing it
        changed = False
        for rel in parsed:
            if file_tasks(assignment, rel):
                continue
            stem = rel.split("/")[0].removesuffix(".py")
            found = set().union(*(tasks[other] for other in parsed if other != rel and stem in imports[other]))
            if not found <= tasks[rel]:
                tasks[rel] |= found
                changed = True
    out = []
    for rel, (path, source, tree) in parsed.items():
        owners = file_tasks(assignment, rel) or ",".join(t for t in assignment.task_ids if t in tasks[rel])
        out.extend(scan_file(path, root, assignment, banned, tasks=owners, source=source, tree=tree))
    return out


# -- the runtime guard --------------------------------------------------------------------------------
def probe_tasks(assignment, probe, variant="integrated", args=None):
    """The tasks a probe call serves: what a banned call with no frame of the submission on the stack costs
    (the task of the contract name it builds or calls, else ``assignment.probe_tasks``, else every task)."""
    if variant.startswith("isolated:"):
        return (variant.split(":", 1)[1],)
    name = (args or {}).get("name")
    if isinstance(name, str) and name in assignment.name_to_task:
        return (assignment.name_to_task[name],)
    return tuple(assignment.probe_tasks.get(probe, assignment.task_ids))


def _lookup(dotted, load=False):
    """The object at ``dotted``: the longest prefix that is an imported module (with ``load``, one importable from
    torch is imported: a module the guard hooks must be hooked before the submission can import it), then its
    attributes; ``None`` if there is none."""
    parts = dotted.split(".")
    prefixes = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    for attempt in ("imported", "import") if load else ("imported",):
        for prefix in prefixes:
            module = sys.modules.get(prefix)
            if module is None and attempt == "import" and prefix.startswith("torch."):
                try:
                    module = importlib.import_module(prefix)
                except Exception:  # noqa: BLE001 - not a module, or one this process cannot import (a jail)
                    module = None
            if module is None:
                continue
            obj = module
            for part in parts[prefix.count(".") + 1 :]:
                obj = getattr(obj, part, None)
                if obj is None:
                    break
            if obj is not None:
                return obj
    return None


def _resolve(dotted):
    """``(owner, attribute, object)`` of ``dotted`` (``(None, None, None)`` if it is not there)."""
    if "." not in dotted:
        return None, None, None
    head, attr = dotted.rsplit(".", 1)
    owner = _lookup(head)
    target = getattr(owner, attr, None) if owner is not None else None
    return (owner, attr, target) if target is not None else (None, None, None)


def _op_overloads(name):
    """``[(registration name, OpOverload)]`` of every overload of ``aten::<name>`` (none if torch lacks it)."""
    packet = getattr(torch.ops.aten, name, None) if hasattr(torch.ops.aten, name) else None
    if packet is None:
        return []
    out = []
    for overload in packet.overloads():
        op = getattr(packet, overload)
        out.append((name if overload == "default" else f"{name}.{overload}", op))
    return out


_AFTER_BACKEND_SELECT = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.BackendSelect)
_ABOVE_DECOMPOSITION = tuple(
    k
    for k in (
        "AutogradCPU",
        "AutogradCUDA",
        "AutogradMeta",
        "AutogradXPU",
        "AutogradMPS",
        "AutogradHPU",
        "AutogradPrivateUse1",
        "AutogradOther",
        "FuncTorchBatched",
    )
    if hasattr(torch._C.DispatchKey, k)
)
"""Where a composite operator is still itself, above its decomposition: autograd (each backend's key, and the
one of tensors with no backend of their own: ``torch.func.grad``'s wrappers of meta tensors), vmap's batching.
(A dispatch mode under ``inference_mode`` sees it whole and passes it on to ``BackendSelect``.)"""


def _dispatch_keys(reg):
    """The keys to watch ``aten::<reg>`` at: ``BackendSelect``, and for an operator that only decomposes, each of
    ``_ABOVE_DECOMPOSITION`` where its decomposition is what would run (no kernel of the key's own there)."""
    name = "aten::" + reg

    def has(key):
        return torch._C._dispatch_has_kernel_for_dispatch_key(name, key)

    keys = ["BackendSelect"]
    if has("CompositeImplicitAutograd") and not has("CompositeExplicitAutograd") and not has("Autograd"):
        for key in _ABOVE_DECOMPOSITION:
            backend = key[len("Autograd") :] if key.startswith("Autograd") and key != "AutogradOther" else None
            if not has(key) and not (backend and has(backend)):
                keys.append(key)
    return keys


def _innermost(obj):
    """The Python function ``obj`` runs at last: itself, a method's or a static/class method's function, or the
    innermost function its ``__wrapped__`` chain reaches (the one every wrapper calls); ``None`` if none (a
    builtin)."""
    found = None
    for _ in range(32):
        if isinstance(obj, (staticmethod, classmethod, types.MethodType)):
            obj = obj.__func__
        if isinstance(obj, types.FunctionType):
            found = obj
        obj = getattr(obj, "__wrapped__", None)
        if obj is None:
            break
    return found


def _functions_of(obj):
    """The Python functions to hook for a watched object: a function (its innermost), a class (its own
    ``forward`` for a module, else ``__init__``), a module (every function, and every method of every class,
    defined in it)."""
    if isinstance(obj, types.ModuleType):
        out = []
        for value in list(vars(obj).values()):
            if getattr(value, "__module__", None) != obj.__name__:
                continue
            members = list(vars(value).values()) if isinstance(value, type) else [value]
            for member in members:
                if isinstance(member, property):
                    out.extend(f for f in (member.fget, member.fset, member.fdel) if isinstance(f, types.FunctionType))
                elif callable(member) or isinstance(member, (staticmethod, classmethod)):
                    out.append(_innermost(member))
        return [f for f in dict.fromkeys(out) if f is not None]
    if isinstance(obj, type):
        attr = "forward" if issubclass(obj, torch.nn.Module) else "__init__"
        obj = vars(obj).get(attr)
    function = _innermost(obj) if obj is not None else None
    return [function] if function is not None else []


_HOOK_CONSTANT = "<the banned-API hook>"
_TEMPLATES = {}


def _trampoline(code, hook):
    """A code object for a function whose code is ``code``: it calls ``hook(args, kwargs)`` and returns what that
    returns. It has as many free variables as ``code`` (a function's closure must fit its code), never read."""
    n = len(code.co_freevars)
    template = _TEMPLATES.get(n)
    if template is None:
        free = [f"_free{i}" for i in range(n)]
        source = ["def _outer():", *(f"    {v} = None" for v in free), "    def _hooked(*args, **kwargs):"]
        if free:
            source += ["        if False:", "            " + ", ".join(free) + ","]
        source += [f"        return {_HOOK_CONSTANT!r}(args, kwargs)", "    return _hooked"]
        with warnings.catch_warnings():  # calling a string constant: it becomes the hook below
            warnings.simplefilter("ignore")
            outer = compile("\n".join(source), _THIS_FILE, "exec")
        outer = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
        template = _TEMPLATES[n] = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    consts = tuple(hook if isinstance(c, str) and c == _HOOK_CONSTANT else c for c in template.co_consts)
    names = {"co_name": code.co_name}
    if hasattr(code, "co_qualname"):
        names["co_qualname"] = code.co_qualname
    return template.replace(co_consts=consts, **names)


class _Hooked:
    """One Python function hooked in place: its ``__code__`` is a trampoline that calls this object, which tells the
    active guard (the dotted names it was hooked for, and the call's keyword arguments) and runs ``original``, a
    copy of the function with its original code, globals, defaults and closure."""

    __slots__ = ("function", "code", "hooked", "original", "targets", "signature")

    def __init__(self, function):
        self.function = function
        self.code = function.__code__
        original = types.FunctionType(
            self.code, function.__globals__, function.__name__, function.__defaults__, function.__closure__
        )
        original.__kwdefaults__ = function.__kwdefaults__
        original.__qualname__ = function.__qualname__
        original.__module__ = function.__module__
        self.original = original
        self.targets = ()
        self.hooked = _trampoline(self.code, self)
        self.signature = None
        if "__signature__" not in function.__dict__:
            try:
                self.signature = inspect.signature(original)
            except (TypeError, ValueError):
                pass

    def install(self):
        self.function.__code__ = self.hooked
        if self.signature is not None:
            self.function.__signature__ = self.signature  # inspect keeps showing the real parameters

    def remove(self):
        self.function.__code__ = self.code
        if self.signature is not None:
            self.function.__dict__.pop("__signature__", None)

    def __call__(self, args, kwargs):
        guard = _HOOKS.active
        if guard is not None:
            guard._called(self.targets, kwargs)
        return self.original(*args, **kwargs)


class _Hooks:
    """The process-wide part of the guard, shared by every installed ``RuntimeGuard``: the dispatcher
    registrations (one ``torch.library.Library``), the hooked functions and the name wrappers, counted, removed
    with the last guard. The active guard (``active``) is the one ``start``ed; the hooks pass everything on when
    none is."""

    def __init__(self):
        self.active = None
        self.users = 0
        self.library = None
        self.kernels = {}  # (registration name, dispatch key) -> (op name, OpOverload)
        self.calls = {}  # dotted call -> the _Hooked of its functions
        self.hooked = {}  # id(function) -> _Hooked
        self.wrapped = {}  # dotted -> (owner object, attribute, original (None: inherited), wrapper)

    def acquire(self, ops, calls):
        self.users += 1
        for op in ops:
            for reg, overload in _op_overloads(op):
                for key in _dispatch_keys(reg):
                    if (reg, key) not in self.kernels:
                        self.kernels[(reg, key)] = (op, overload)
                        self._register(reg, key, op, overload)
        for dotted in calls:
            if dotted not in self.calls:
                self._hook(dotted)

    def release(self):
        self.users -= 1
        if self.users > 0:
            return
        if self.library is not None:
            self.library._destroy()
            self.library = None
        self.kernels.clear()
        for hooked in self.hooked.values():
            hooked.remove()
        self.hooked.clear()
        self.calls.clear()
        for owner, attr, original, _ in self.wrapped.values():
            if original is None:
                delattr(owner, attr)
            else:
                setattr(owner, attr, original)
        self.wrapped.clear()
        self.active = None

    def _register(self, reg, key, op, overload):
        if self.library is None:
            self.library = torch.library.Library("aten", "IMPL")
        hooks = self

        if key == "BackendSelect":

            def kernel(keyset, *args, **kwargs):
                guard = hooks.active
                if guard is not None:
                    guard._kernel(op)
                return overload.redispatch(keyset & _AFTER_BACKEND_SELECT, *args, **kwargs)
        else:  # above the decomposition of a composite operator: run it, as the key would have

            def kernel(keyset, *args, **kwargs):
                guard = hooks.active
                if guard is not None:
                    guard._kernel(op)
                return overload.decompose(*args, **kwargs)

        self.library.impl(reg, kernel, key, with_keyset=True)

    def _hook(self, dotted):
        target = _lookup(dotted, load=True)
        found = []
        for function in _functions_of(target) if target is not None else ():
            hooked = self.hooked.get(id(function))
            if hooked is None:
                try:
                    hooked = _Hooked(function)
                    hooked.install()
                except (TypeError, ValueError):  # a function whose code cannot be replaced
                    continue
                self.hooked[id(function)] = hooked
            hooked.targets += (dotted,)
            found.append(hooked)
        self.calls[dotted] = found
        if not found and callable(target) and not isinstance(target, types.ModuleType):
            self._wrap(dotted)  # no Python code to hook (a builtin, a class without its own forward): the name

    def _wrap(self, dotted):
        parent, attr, target = _resolve(dotted)
        if target is None or not callable(target):
            return
        hooks = self
        if isinstance(target, type):
            owner, attr = target, ("forward" if issubclass(target, torch.nn.Module) else "__init__")
            original = getattr(target, attr, None)
            if original is None:
                return
        else:
            owner, original = parent, target
        own = not isinstance(owner, type) or attr in owner.__dict__  # else inherited: deleted again on release

        def guarded(*args, **kwargs):
            guard = hooks.active
            if guard is not None:
                guard._called((dotted,), kwargs)
            return original(*args, **kwargs)

        guarded.__name__ = getattr(original, "__name__", attr)
        guarded.__qualname__ = getattr(original, "__qualname__", attr)
        guarded.__doc__ = getattr(original, "__doc__", None)
        guarded.__module__ = getattr(original, "__module__", None)
        setattr(owner, attr, guarded)
        self.wrapped[dotted] = (owner, attr, original if own else None, guarded)

    def _registered(self):
        """Whether the registrations are in place: the library that holds them is alive (destroying it, the one
        way to take them away, clears ``m``). Asking the dispatcher costs 10 us an operator: ``verify`` does."""
        return self.library is not None and getattr(self.library, "m", None) is not None

    def verify(self):
        """Whether the dispatcher still holds every registration."""
        return all(torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + reg, key) for reg, key in self.kernels)

    def altered(self):
        """Names of the hooks that were removed or replaced since they were put in place; puts them back."""
        out = []
        for hooked in self.hooked.values():
            if hooked.function.__code__ is not hooked.hooked:
                hooked.function.__code__ = hooked.hooked
                out.extend(hooked.targets)
        for dotted, (owner, attr, _, guarded) in self.wrapped.items():
            current = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
            if current is not guarded:
                setattr(owner, attr, guarded)
                out.append(dotted)
        if self.kernels and not self._registered():
            out.append("its kernels at the dispatcher")
            old, self.library = self.library, None
            try:
                if old is not None:
                    old._destroy()
            except Exception:  # noqa: BLE001 - already torn down by whoever removed it
                pass
            for (reg, key), (op, overload) in self.kernels.items():
                self._register(reg, key, op, overload)
        return list(dict.fromkeys(out))


_HOOKS = _Hooks()


def _prefixes():
    """Folders of library code (torch, the standard library, site-packages): a frame there only passes a call on."""
    out = {str(Path(torch.__file__).resolve().parent) + os.sep}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            out.add(str(Path(p).resolve()) + os.sep)
    return tuple(sorted(out))


def _probe_files(assignment):
    """The files of the assignment's probe modules: code of the grader's side, as ``grader/``'s is."""
    return frozenset(importlib.import_module(m).__file__ for m in assignment.probes)


def _table_order(name):
    return list(WATCH).index(name) if name in WATCH else len(WATCH)


def _meets(when, kwargs):
    try:
        return all(bool(kwargs.get(key)) == value for key, value in when)
    except Exception:  # noqa: BLE001 - an argument that cannot say what it is: it counts
        return True


def _defines(node, name):
    """Whether statement ``node`` defines or assigns ``name`` at its level."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    targets = (
        node.targets
        if isinstance(node, ast.Assign)
        else [node.target]
        if isinstance(node, (ast.AnnAssign, ast.AugAssign))
        else []
    )
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


class RuntimeGuard:
    """Record uses of the banned APIs by the code of ``root`` while a probe runs (between ``start`` and ``stop``).

    ``assignment`` says which names are contract names and which task each belongs to; ``banned``: the API
    names watched (``None``: the assignment's). ``install()`` puts the hooks in place (once per process, shared
    by guards); ``uninstall()`` takes this guard's share away. Findings accumulate in ``findings``, each
    ``(file, line, task)`` once.
    """

    _library_prefixes = _prefixes()
    _grader_dir = str(Path(__file__).resolve().parent.parent) + os.sep

    def __init__(self, assignment, banned=None):
        self.assignment = assignment
        banned = assignment.banned if banned is None else banned
        self.banned = tuple(b for b in banned if b.startswith("torch."))
        self.op_names = {}  # aten operator -> the banned name a call of it is
        self.call_names = {}  # hooked dotted call -> [(banned name, when)]
        for b in sorted(self.banned, key=_table_order):
            watch = watch_of(b)
            for op in watch.kernels:
                self.op_names.setdefault(op, b)
            for call in watch.calls:
                self.call_names.setdefault(call, []).append((b, watch.when))
        self.root = None
        self.tasks = assignment.task_ids
        self._grader_files = _probe_files(assignment)
        # The reference's code (from its folder, or parts from source text) is the grader's side too.
        self._reference_prefixes = tuple(str(root) + os.sep for root in (assignment.reference, PARTS_ROOT))
        self.findings = []
        self._seen = set()
        self._kinds = {}
        self._lines = {}
        self._trees = {}
        self._index = None
        self._installed = False
        self._previous = []

    # -- switching ------------------------------------------------------------------------------------
    def install(self):
        if not self._installed:
            _HOOKS.acquire(self.op_names, self.call_names)
            self._installed = True
        return self

    def uninstall(self):
        if self._installed:
            if _HOOKS.active is self:
                _HOOKS.active = None
            _HOOKS.release()
            self._installed = False

    def start(self, root, tasks=()):
        """Record from now on: code under ``root`` is the submission's; ``tasks`` are the running probe's
        (none given: every task)."""
        self._previous.append((_HOOKS.active, self.root, self.tasks, self._index))
        root = str(root)
        self.root = root if os.path.isabs(root) else str(Path(root).resolve())
        self.tasks = tuple(tasks) or self.assignment.task_ids
        if getattr(self, "_sub_prefix", None) != self.root + os.sep:
            self._sub_prefix, self._kinds, self._lines, self._trees = self.root + os.sep, {}, {}, {}
        self._index = None  # the submission's modules may have changed since
        _HOOKS.active = self

    def stop(self):
        """Stop recording; note (and undo) any change made to the hooks meanwhile."""
        try:
            altered = _HOOKS.altered()
            if altered:
                self._add(
                    Finding(
                        f"the banned-API guard, altered: {', '.join(altered)}",
                        "<no submission frame>",
                        0,
                        "",
                        ",".join(self.tasks),
                    )
                )
        finally:
            active, self.root, self.tasks, self._index = (
                self._previous.pop() if self._previous else (None, None, self.assignment.task_ids, None)
            )
            _HOOKS.active = active

    # -- hooks -----------------------------------------------------------------------------------------
    def _kernel(self, op):
        name = self.op_names.get(op)
        if name is None:
            return
        if "backward" in op and torch._C._current_autograd_node() is not None:
            return  # the engine runs it for a forward already recorded where it was called
        self._note(name)

    def _called(self, targets, kwargs):
        for target in targets:
            for name, when in self.call_names.get(target, ()):
                if _meets(when, kwargs):
                    self._note(name)
                    return

    def _note(self, name):
        try:
            file, line, code, tasks = self._locate(sys._getframe(2))
        except Exception:  # noqa: BLE001 - a frame the guard cannot read still costs the probe's tasks
            file, line, code, tasks = "<unknown>", 0, "", ",".join(self.tasks)
        self._add(Finding(name, file, line, code, tasks))

    def _add(self, finding):
        key = (finding.file, finding.line, finding.task)
        if key not in self._seen:
            self._seen.add(key)
            self.findings.append(finding)

    # -- attribution -----------------------------------------------------------------------------------
    def _kind(self, filename):
        kind = self._kinds.get(filename)
        if kind is None:
            if filename.startswith(self._sub_prefix):
                kind = "submission"
            elif filename == _THIS_FILE:
                kind = "hooks"  # the hooks themselves
            elif (
                filename.startswith(self._grader_dir)
                or filename in self._grader_files
                or filename.startswith(self._reference_prefixes)
            ):
                kind = "grader"
            elif filename.startswith(self._library_prefixes) or filename.startswith("<frozen "):
                kind = "library"
            else:
                kind = "foreign"
            self._kinds[filename] = kind
        return kind

    def _locate(self, frame):
        """``(file, line, code, tasks)`` of the banned call made below ``frame``."""
        first = None
        inherited = None  # (where + tasks, self): a method inherited by a class of the submission's made the call
        while frame is not None:
            code = frame.f_code
            filename = code.co_filename
            kind = self._kind(filename)
            if kind == "submission":
                if inherited is not None and self._receiver(frame) is not inherited[1]:
                    return inherited[0]  # its class's, not the code that used an instance of it
                rel = filename[len(self._sub_prefix) :]
                where = (rel, frame.f_lineno, self._source_line(filename, frame.f_lineno))
                tasks = (
                    self._tasks_in(rel, self._top_name(code, filename), frame)
                    if file_tasks(self.assignment, rel)
                    else ""
                )
                if tasks:
                    return where + (tasks,)
                first = first or where  # a helper file of the submission's own: the tasks of its caller
            elif kind == "grader":
                break
            elif kind != "hooks" and inherited is None:  # library code, or code compiled under another file name
                owned = self._code_index()[0].get(code)
                if owned is not None:  # the submission's own function, under a file name not its own
                    rel, top, attr = owned
                    where = self._definition(rel, top, attr)
                    tasks = self._tasks_in(rel, top, frame)
                    if tasks:
                        return where + (tasks,)
                    first = first or where
                else:
                    receiver = self._receiver(frame)
                    owner = self._class_of(receiver)
                    if owner is not None:  # a method a class of the submission's inherits
                        rel, name = owner
                        tasks = _owner(self.assignment, name, rel) if file_tasks(self.assignment, rel) else ""
                        where = self._definition(rel, name, code.co_name)
                        if tasks:
                            inherited = (where + (tasks,), receiver)
                        else:
                            first = first or where
                    elif kind == "foreign":
                        first = first or (filename[:200], frame.f_lineno, "")
            frame = frame.f_back
        if inherited is not None:
            return inherited[0]
        file, line, code = first or ("<no submission frame>", 0, "")
        return file, line, code, ",".join(self.tasks)

    def _tasks_in(self, rel, top, frame):
        """The task of code in top-level definition ``top`` of the submission's file ``rel`` that ``frame`` runs
        ('' for a file of no task): its contract task; a helper of no contract name, run as a method of a class
        of this file: that class's task; else every task of the file."""
        if not file_tasks(self.assignment, rel):
            return ""
        return (
            (self.assignment.name_to_task[top] if self.assignment.name_to_file.get(top) == rel else "")
            or self._method_owner(frame, rel)
            or file_tasks(self.assignment, rel)
        )

    @staticmethod
    def _receiver(frame):
        """The first argument of the function ``frame`` runs (``self``), or ``None``."""
        code = frame.f_code
        if not code.co_argcount:
            return None
        return frame.f_locals.get(code.co_varnames[0])

    def _class_of(self, obj):
        """``(file, top-level name)`` of the first class in the MRO of ``obj`` (or of ``obj``, a class) that the
        submission's modules bind at their top level, or defines; ``None`` if none."""
        if obj is None:
            return None
        cls = obj if issubclass(type(obj), type) else type(obj)  # never obj.__class__: the submission's code
        classes = self._code_index()[1]
        for klass in type.__dict__["__mro__"].__get__(cls):
            bound = classes.get(id(klass))
            if bound is not None:
                return bound
            filename = _module_file(type.__dict__["__dict__"].__get__(klass).get("__module__"))
            if isinstance(filename, str) and filename.startswith(self._sub_prefix):
                return filename[len(self._sub_prefix) :], type.__dict__["__qualname__"].__get__(klass).split(".")[0]
        return None

    def _method_owner(self, frame, same_file=None):
        """The task of the submission's class when ``frame`` runs as one of its methods ('' otherwise); with
        ``same_file``, only a class defined in that file counts."""
        code = frame.f_code
        if not code.co_argcount:
            return ""
        obj = frame.f_locals.get(code.co_varnames[0])
        cls = obj if issubclass(type(obj), type) else type(obj)  # never obj.__class__: the submission's code
        for klass in type.__dict__["__mro__"].__get__(cls):
            filename = _module_file(type.__dict__["__dict__"].__get__(klass).get("__module__"))
            if isinstance(filename, str) and filename.startswith(self._sub_prefix):
                rel = filename[len(self._sub_prefix) :]
                name = type.__dict__["__qualname__"].__get__(klass).split(".")[0]
                if same_file is not None:
                    return (
                        self.assignment.name_to_task[name]
                        if rel == same_file and self.assignment.name_to_file.get(name) == rel
                        else ""
                    )
                if file_tasks(self.assignment, rel):
                    return _owner(self.assignment, name, rel)
        return ""

    def _code_index(self):
        """``({code: (file, top-level name, attribute or None)}, {id(class): (file, top-level name)})`` for the
        submission's modules as they are now: the code of every function they bind at their top level or in the
        body of a class they bind (and the code nested in it) that is the submission's own (run with its
        builtins: compiled under any file name) or bound to a contract name; the classes they bind under a
        contract name or define. Built when first needed in a probe, read without running any of their code."""
        if self._index is None:
            codes, classes = {}, {}
            contract = self.assignment.name_to_file
            for module in list(sys.modules.values()):
                namespace = _module_dict(module)
                filename = namespace.get("__file__") if namespace is not None else None
                if not isinstance(filename, str) or not filename.startswith(self._sub_prefix):
                    continue
                rel = filename[len(self._sub_prefix) :]
                builtins = namespace.get("__builtins__")
                for name, value in list(namespace.items()):
                    bound = contract.get(name) == rel
                    if issubclass(type(value), type):
                        members = type.__dict__["__dict__"].__get__(value)
                        if not bound and members.get("__module__") != namespace.get("__name__"):
                            continue  # a class imported from elsewhere
                        classes.setdefault(id(value), (rel, name))
                        for attr, member in list(members.items()):
                            for function in _own_functions(member):
                                if function.__globals__.get("__builtins__") is builtins:
                                    _index_code(codes, function.__code__, (rel, name, attr))
                    else:
                        for function in _own_functions(value):
                            if bound or function.__globals__.get("__builtins__") is builtins:
                                _index_code(codes, function.__code__, (rel, name, None))
            self._index = (codes, classes)
        return self._index

    def _definition(self, rel, top, attr=None):
        """``(file, line, code)`` of where the submission's file ``rel`` defines or binds ``top`` (with ``attr``:
        where that class's body binds it, if it does)."""
        filename = self._sub_prefix + rel
        if filename not in self._trees:
            try:
                self._trees[filename] = ast.parse("\n".join(self._source(filename)))
            except (SyntaxError, ValueError):
                self._trees[filename] = None
        tree, line = self._trees[filename], 0
        for node in tree.body if tree is not None else ():
            if _defines(node, top):
                line = node.lineno
                if attr and isinstance(node, ast.ClassDef):
                    line = next((n.lineno for n in node.body if _defines(n, attr)), line)
                break
        return rel, line, self._source_line(filename, line)

    def _source(self, filename):
        if filename not in self._lines:
            text = _read_source(filename)
            self._lines[filename] = text.splitlines() if text is not None else []
        return self._lines[filename]

    def _source_line(self, filename, line):
        lines = self._source(filename)
        return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""

    def _top_name(self, code, filename):
        """The top-level definition ``code`` belongs to (``LayerNorm`` for ``LayerNorm.forward.<locals>.f``);
        before Python 3.11 (no ``co_qualname``), the one whose lines hold the code's first line."""
        qualname = getattr(code, "co_qualname", None)
        if qualname is not None:
            return qualname.split(".")[0]
        try:
            tree = ast.parse("\n".join(self._source(filename)))
        except (SyntaxError, ValueError):
            return ""
        for top in tree.body:
            if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                start = min([top.lineno] + [d.lineno for d in top.decorator_list])
                if start <= code.co_firstlineno <= (top.end_lineno or top.lineno):
                    return top.name
        return ""


def _module_dict(module):
    """The dictionary of module object ``module``, or ``None``; never through ``module.__dict__`` or
    ``isinstance``: what the submission put in ``sys.modules`` could run its code there."""
    if not issubclass(type(module), types.ModuleType):
        return None
    try:
        return types.ModuleType.__dict__["__dict__"].__get__(module)
    except Exception:  # noqa: BLE001 - a module object without its dictionary
        return None


def _module_file(name):
    """The ``__file__`` of the module named ``name`` (a class's ``__module__``), or ``None``."""
    namespace = _module_dict(sys.modules.get(name)) if type(name) is str else None
    return namespace.get("__file__") if namespace is not None else None


def _own_functions(obj):
    """The Python functions behind a value of the submission's: itself, a static or class method's function, a
    property's accessors, and the functions its ``__wrapped__`` chain reaches, read from each function's own
    dictionary (no code of the value's runs)."""
    kind = type(obj)
    if kind is property:
        return [f for f in (obj.fget, obj.fset, obj.fdel) if type(f) is types.FunctionType]
    if kind in (staticmethod, classmethod):
        obj = obj.__func__
    out = []
    while type(obj) is types.FunctionType and len(out) < 32:
        out.append(obj)
        obj = obj.__dict__.get("__wrapped__")
    return out


def _index_code(index, code, owner):
    stack = [code]
    while stack:
        code = stack.pop()
        if code not in index:
            index[code] = owner
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))


_THIS_FILE = _prefixes.__code__.co_filename
