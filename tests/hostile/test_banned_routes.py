"""Banned APIs by every route.

The runtime guard watches PyTorch's dispatcher, not names: whatever route a submission takes to layer norm,
fused attention or multi-head attention (a private entry point, ``torch.ops.aten``, the original function
behind a wrapper, code compiled under a file name outside the submission), the kernel that implements it is
seen, and the finding lands on a task: the one whose code made the call (the innermost frame in the
submission), the file's tasks for a module-level helper, the task whose probe is running when no frame of
the submission is on the stack. Each hostile submission is ``tests/submissions/alt_loops`` with one file
replaced (the style of ``tests/hostile/__init__.py``); each is graded in-process and in a worker.
"""

import shutil
from pathlib import Path

import pytest
import torch

from grader import api
from grader.assignment import load
from grader.submission.banned import _HOOKS, scan
from grader.submission.inprocess import InProcessRunner
from tests.hostile import BASE

SUBMISSIONS = Path(__file__).resolve().parent.parent / "submissions"


def build_with(dest, file, text):
    """``tests/submissions/alt_loops`` copied to ``dest`` with ``file`` replaced by ``text``."""
    dest = Path(dest)
    shutil.copytree(BASE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / file).write_text(text, encoding="utf-8")
    return dest


LAYER_NORM_HEAD = '''"""LayerNorm by a banned route (tests/hostile/test_banned_routes.py)."""

import torch
import torch.nn.functional as F
from torch import nn
'''

LAYER_NORM_INIT = '''
class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
'''

ATTENTION = (BASE / "attention.py").read_text(encoding="utf-8")
_SDPA_START = ATTENTION.index("def scaled_dot_product_attention(")
_SDPA_END = ATTENTION.index("class MultiHeadAttention(")
_MHA_START = _SDPA_END

ROUTES = {
    # A module-level helper that no contract name owns: the finding lands on the file's tasks.
    "helper": ("norm.py", LAYER_NORM_HEAD + '''

def _normalize(x, weight, bias, eps):
    return F.layer_norm(x, weight.shape, weight, bias, eps)
''' + LAYER_NORM_INIT + '''
    def forward(self, x):
        return _normalize(x, self.weight, self.bias, self.eps)
'''),
    # An entry point the banned list does not name.
    "native": ("norm.py", LAYER_NORM_HEAD + LAYER_NORM_INIT + '''
    def forward(self, x):
        return torch.native_layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)[0]
'''),
    # The original function, where a name guard keeps it on ``__wrapped__``; the name is spelled at run time.
    "wrapped": ("norm.py", LAYER_NORM_HEAD + '''
_layer_norm = getattr(F, "layer_" + "norm")
_layer_norm = getattr(_layer_norm, "__wrapped__", _layer_norm)
''' + LAYER_NORM_INIT + '''
    def forward(self, x):
        return _layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)
'''),
    # The forward is compiled under a file name outside the submission.
    "foreign": ("norm.py", LAYER_NORM_HEAD + '''
_SOURCE = """
import torch.nn.functional as F


def forward(self, x):
    return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)
"""
_scope = {}
exec(compile(_SOURCE, "/usr/lib/python3/x.py", "exec"), _scope)
''' + LAYER_NORM_INIT + '''
    forward = _scope["forward"]
'''),
    # A private aten operator through torch.ops (it returns the output and the weights).
    "sdpa_math": ("attention.py", ATTENTION[:_SDPA_START] + '''
def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    bias = None if mask is None else torch.zeros(mask.shape, dtype=query.dtype, device=query.device).masked_fill(
        ~mask, float("-inf"))  # the operator adds a float mask
    out, weights = torch.ops.aten._scaled_dot_product_attention_math(query, key, value, attn_mask=bias)
    if dropout is not None:
        weights = dropout(weights)
        out = _batched_matmul(weights, value)
    return out, weights


''' + ATTENTION[_SDPA_END:]),
    # nn.MultiheadAttention (eval: with the weights; train: without), its name spelled at run time, built
    # through the unguarded constructor and with the guarded functionals put back, where a name guard allows.
    "mha": ("attention.py", ATTENTION[:_MHA_START] + '''import torch.nn.functional as _F

_MHA = getattr(nn, "Multihead" + "Attention")
_init = getattr(_MHA.__init__, "__wrapped__", _MHA.__init__)
for _name in ("multi_head_" + "attention_forward", "scaled_dot_" + "product_attention"):
    setattr(_F, _name, getattr(getattr(_F, _name), "__wrapped__", getattr(_F, _name)))


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"{num_heads} heads do not divide d_model={d_model}")
        self.num_heads = num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)
        inner = _MHA.__new__(_MHA)
        _init(inner, d_model, num_heads, dropout=dropout, batch_first=True)
        self.__dict__["_inner"] = inner  # not a submodule: the contract's parameter names only

    def forward(self, query, key, value, mask=None):
        inner = self._inner.train(self.training)
        params = {
            "in_proj_weight": torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight]),
            "in_proj_bias": torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias]),
            "out_proj.weight": self.w_o.weight, "out_proj.bias": self.w_o.bias,
        }
        blocked = None
        if mask is not None:
            b, lq, lk = query.shape[0], query.shape[1], key.shape[1]
            blocked = (~mask).expand(b, self.num_heads, lq, lk).reshape(b * self.num_heads, lq, lk)
        out, _ = torch.func.functional_call(inner, params, (query, key, value),
                                            {"attn_mask": blocked, "need_weights": not self.training})
        return out
'''),
    # Code with no frame in the submission at all (an eval'd string): the probe's task.
    "string": ("masks.py", (BASE / "masks.py").read_text(encoding="utf-8") + '''

_SOURCE = ("lambda tokens, pad_idx: (torch.layer_norm(tokens.double(), (tokens.shape[-1],)),"
           " tokens.ne(pad_idx).reshape(tokens.shape[0], 1, 1, tokens.shape[1]))[1]")
padding_mask = eval(compile(_SOURCE, "<string>", "eval"), {"torch": torch})
'''),
}

EXPECT = {
    # route: (the task that loses its points, the file named, the tasks graded)
    "helper": ("layernorm", "norm.py", ["layernorm", "encoder_layer"]),
    "native": ("layernorm", "norm.py", ["layernorm", "encoder_layer"]),
    "wrapped": ("layernorm", "norm.py", ["layernorm", "encoder_layer"]),
    "foreign": ("layernorm", "norm.py", ["layernorm", "encoder_layer"]),  # the line binding the foreign code
    "sdpa_math": ("sdpa", "attention.py", ["sdpa", "mha"]),
    "mha": ("mha", "attention.py", ["mha", "encoder_layer"]),
    "string": ("masks", "masks.py", ["masks"]),
}


@pytest.mark.parametrize("sealed", [False, True], ids=["in-process", "worker"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_route_withholds_the_points_of_its_task(tmp_path, route, sealed):
    file, text = ROUTES[route]
    task_id, named_file, tasks = EXPECT[route]
    root = build_with(tmp_path / route, file, text)
    result = api.check(path=root, tasks=tasks, profile="quick", sealed=sealed)
    by_id = {t.id: t for t in result.tasks}
    task = by_id[task_id]
    earned = sum(c.score for c in task.checks)
    assert task.banned, f"{route}: no finding on {task_id}; all findings: {result.banned_api}"
    assert task.score == 0 and earned > 0, (route, task.score, earned)  # earned, then withheld
    if named_file is not None:
        assert any(f["file"] == named_file and f["line"] > 0 for f in task.banned), task.banned
    for other in tasks:
        if other != task_id:
            assert not by_id[other].banned, (route, other, by_id[other].banned)
            assert by_id[other].score == by_id[other].max_score, (route, other, by_id[other].score)
    assert all(f["task"] for f in result.banned_api), result.banned_api


# -- each public route reaches the guard, on the CPU and the meta device -----------------------------
ROUTE_CALLS = {
    "F.layer_norm": ("layer_norm", "F.layer_norm(x, (8,))"),
    "torch.layer_norm": ("layer_norm", "torch.layer_norm(x, (8,))"),
    "torch.native_layer_norm": ("layer_norm", "torch.native_layer_norm(x, (8,), None, None, 1e-5)"),
    "aten.native_layer_norm": ("layer_norm", "torch.ops.aten.native_layer_norm(x, [8], None, None, 1e-5)"),
    "aten.layer_norm": ("layer_norm", "torch.ops.aten.layer_norm.default(x, [8])"),
    "nn.LayerNorm": ("layer_norm", "nn.LayerNorm(8, device=dev)(x)"),
    "F.sdpa": ("sdpa", "F.scaled_dot_product_attention(q, q, q)"),
    "F.sdpa dropout": ("sdpa", "F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)"),
    "aten.sdpa_math": ("sdpa", "torch.ops.aten._scaled_dot_product_attention_math(q, q, q)"),
    "C._nn.sdpa": ("sdpa", "torch._C._nn.scaled_dot_product_attention(q, q, q)"),
    "MHA eval": ("mha", "nn.MultiheadAttention(8, 2, batch_first=True, device=dev).eval()(x, x, x)"),
    "MHA eval fast path": ("mha", "with torch.no_grad():\n"
                                  "        nn.MultiheadAttention(8, 2, batch_first=True, device=dev).eval()"
                                  "(x, x, x, need_weights=False)"),
    "MHA train": ("mha", "nn.MultiheadAttention(8, 2, batch_first=True, device=dev).train()(x, x, x)"),
    "native MHA": ("mha", "torch._native_multi_head_attention(x, x, x, 8, 2, torch.ones(24, 8, device=dev), "
                          "torch.ones(24, device=dev), torch.ones(8, 8, device=dev), torch.ones(8, device=dev))"),
    "TransformerEncoderLayer fast path": (
        "transformer", "with torch.no_grad():\n        nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, "
                       "device=dev).eval()(x)"),
}

FAMILY = {
    "layer_norm": ("torch.nn.LayerNorm", "torch.nn.functional.layer_norm"),
    "sdpa": ("torch.nn.functional.scaled_dot_product_attention",),
    "mha": ("torch.nn.MultiheadAttention", "torch.nn.functional.multi_head_attention_forward",
            "torch.nn.functional.scaled_dot_product_attention"),
    "transformer": ("torch.nn.TransformerEncoderLayer", "torch.nn.MultiheadAttention", "torch.nn.LayerNorm",
                    "torch.nn.functional.multi_head_attention_forward", "torch.nn.functional.layer_norm",
                    "torch.nn.functional.scaled_dot_product_attention"),
}

ROUTE_MASKS = '''import torch
import torch.nn.functional as F
from torch import nn


def padding_mask(tokens, pad_idx):
    dev = tokens.device
    x = torch.ones(2, 3, 8, device=dev)
    q = torch.ones(2, 2, 3, 4, device=dev)
    {call}
    b, length = tokens.shape
    return tokens.ne(pad_idx).reshape(b, 1, 1, length)


def causal_mask(size, device=None):
    return torch.ones(size, size, dtype=torch.bool, device=device).tril().view(1, 1, size, size)


def target_mask(tgt, pad_idx):
    return causal_mask(tgt.shape[1], tgt.device) & padding_mask(tgt, pad_idx)
'''


def _route_runner(tmp_path, call, banned=None):
    root = build_with(tmp_path / "sub", "masks.py", ROUTE_MASKS.format(call=call))
    return InProcessRunner(root, assignment=load(), banned=banned)


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("route", sorted(ROUTE_CALLS))
def test_every_public_route_is_seen(tmp_path, route, device):
    family, call = ROUTE_CALLS[route]
    runner = _route_runner(tmp_path, call)
    try:
        out = runner.run("call", name="padding_mask", args=[torch.tensor([[5, 3, 0]]), 0], device=device)
        assert out["out"].shape == (1, 1, 1, 3)
        found = runner.banned_runtime()
    finally:
        runner.close()
    line = ROUTE_MASKS.format(call=call).splitlines().index("    " + call.splitlines()[0]) + 1
    hits = [f for f in found if f.file == "masks.py" and f.task == "masks"]
    assert hits, (route, device, found)
    assert all(f.name.split(" ")[0] in FAMILY[family] for f in hits), (route, hits)
    assert any(f.line in (line, line + 1) for f in hits), (route, line, hits)


def test_a_custom_list_maps_its_names_to_kernels(tmp_path):
    """A name in the list brings its kernels; kernels of names left out of the list are not reported."""
    runner = _route_runner(tmp_path, "torch.native_layer_norm(x, (8,), None, None, 1e-5)",
                           banned=("torch.nn.functional.layer_norm",))
    other = _route_runner(tmp_path / "other", "torch.native_layer_norm(x, (8,), None, None, 1e-5)",
                          banned=("torch.nn.MultiheadAttention",))
    try:
        for r in (runner, other):
            r.run("call", name="padding_mask", args=[torch.tensor([[5, 3, 0]]), 0])
        assert [f.name.split(" ")[0] for f in runner.banned_runtime()] == ["torch.nn.functional.layer_norm"]
        assert other.banned_runtime() == []
    finally:
        runner.close()
        other.close()


def test_the_guard_is_off_outside_probes(tmp_path):
    """Between probes (the grader's and the reference's own computations), nothing is recorded."""
    runner = _route_runner(tmp_path, "pass")
    try:
        runner.run("call", name="padding_mask", args=[torch.tensor([[5, 3, 0]]), 0])
        torch.nn.functional.layer_norm(torch.ones(2, 4), (4,))
        torch.nn.functional.scaled_dot_product_attention(*(torch.ones(1, 2, 3, 4),) * 3)
        torch.nn.MultiheadAttention(4, 2)(*(torch.ones(3, 1, 4),) * 3)
        assert runner.banned_runtime() == []
    finally:
        runner.close()


TAMPER = '''import gc
    for _obj in gc.get_objects():  # the guard's registrations at the dispatcher, and its hook in a function
        if type(_obj) is torch.library.Library and "aten/native_layer_norm/BackendSelect" in _obj._op_impls:
            _obj._destroy()
    _f = F.multi_head_attention_forward
    for _hook in [c for c in _f.__code__.co_consts if hasattr(c, "original")]:  # its original code put back
        _f.__code__ = _hook.original.__code__
    F.layer_norm(x, (8,))'''


@pytest.mark.filterwarnings("ignore::FutureWarning")  # gc.get_objects() touches deprecated torch attributes
def test_taking_the_guard_apart_is_noticed_and_undone(tmp_path):
    """The cheap ways to dismantle the guard (destroying its registrations, putting a hooked function's original
    code back) are a finding on the running probe's task, and the guard is whole again for the next probe."""
    runner = _route_runner(tmp_path, TAMPER)
    plain = _route_runner(tmp_path / "plain", "torch.native_layer_norm(x, (8,), None, None, 1e-5)")
    try:
        runner.run("call", name="padding_mask", args=[torch.tensor([[5, 3, 0]]), 0])
        altered = [f for f in runner.banned_runtime() if "altered" in f.name]
        assert altered and all(f.task == "masks" for f in altered), runner.banned_runtime()
        assert {"torch.nn.functional.multi_head_attention_forward", "its kernels at the dispatcher"} <= set(
            altered[0].name.split("altered: ")[1].split(", "))
        assert _HOOKS.verify()  # every registration is back at the dispatcher
        plain.run("call", name="padding_mask", args=[torch.tensor([[5, 3, 0]]), 0])
        assert [f.task for f in plain.banned_runtime()] == ["masks"]
    finally:
        runner.close()
        plain.close()


# -- the static scan ----------------------------------------------------------------------------------
def test_static_scan_sees_helpers_aliases_and_unlisted_entry_points(tmp_path):
    root = build_with(tmp_path / "sub", "norm.py", LAYER_NORM_HEAD + '''
__all__ = ["LayerNorm"]
_ln = F.layer_norm


def _normalize(x, w, b, eps):
    return torch.ops.aten.native_layer_norm(x, w.shape, w, b, eps)[0]
''' + LAYER_NORM_INIT + '''
    def forward(self, x):
        return _ln(x, self.weight.shape, self.weight, self.bias, self.eps) + _normalize(x, self.weight,
                                                                                         self.bias, self.eps)
''')
    (root / "helpers.py").write_text("import torch\n\n\ndef attend(q, k, v):\n"
                                     "    return torch._C._nn.scaled_dot_product_attention(q, k, v)\n")
    (root / "scratch.py").write_text("import torch\n\nprint(torch.nn.LayerNorm(3))\n")
    attention = root / "attention.py"
    attention.write_text(attention.read_text() + "\nfrom .helpers import attend as _attend\n")
    found = scan(root, load())
    by_line = {(f.file, f.line): f for f in found}
    norm_lines = (root / "norm.py").read_text().splitlines()

    def line_of(text, lines=norm_lines):
        return next(i for i, s in enumerate(lines, 1) if text in s)

    assert by_line[("norm.py", line_of("_ln = F.layer_norm"))].task == "layernorm"  # module level: the file's tasks
    assert by_line[("norm.py", line_of("torch.ops.aten.native_layer_norm"))].task == "layernorm"  # helper
    assert by_line[("norm.py", line_of("return _ln("))].task == "layernorm"  # the alias, used
    assert ("norm.py", line_of("__all__")) not in by_line  # a contract name in a string is no banned API
    helper = [f for f in found if f.file == "helpers.py"]
    assert helper and all(set(f.task.split(",")) == {"sdpa", "mha"} for f in helper), helper  # its importers' tasks
    assert [f.task for f in found if f.file == "scratch.py"] == [""]  # imported by nothing: listed, costs nothing
    assert all(f.task for f in found if f.file != "scratch.py")


# -- both directions: correct alternatives keep everything --------------------------------------------
@pytest.mark.parametrize("name", ["alt_einsum", "alt_loops", "alt_annotated"])
def test_correct_alternatives_have_no_finding(name):
    result = api.check(path=SUBMISSIONS / name, profile="quick")
    assert not result.banned_api, result.banned_api
    assert result.score == result.max_score


def test_functional_alternative_is_flagged_only_where_it_uses_the_functional_api():
    """alt_functional builds sdpa on F.scaled_dot_product_attention and LayerNorm on F.layer_norm: those two tasks
    lose their points; every task built on them (the layers, the model, training through backward) keeps its own."""
    result = api.check(path=SUBMISSIONS / "alt_functional", profile="quick")
    flagged = {t.id for t in result.tasks if t.banned}
    assert flagged == {"sdpa", "layernorm"}, [(f["task"], f["name"], f["file"], f["line"]) for f in result.banned_api]
    for t in result.tasks:
        if t.id not in flagged:
            assert t.score == t.max_score, (t.id, t.score)
