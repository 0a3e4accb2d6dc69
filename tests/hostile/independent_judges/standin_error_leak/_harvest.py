"""In an isolated check the reference's parts are stand-ins computed by the judge: call them wrongly in every way
at hand and carry what comes back (exception types and messages, attributes, reprs, docstrings) out through
printed output and exception text, hoping for reference source in the report."""

import inspect
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SEEN = []


def mine(cls):
    """Whether ``cls`` is this submission's own class (not a stand-in)."""
    try:
        return os.path.dirname(os.path.abspath(inspect.getsourcefile(cls.forward))) == HERE
    except (TypeError, OSError, AttributeError):
        return False


def probe(label, fn):
    try:
        out = fn()
        text = f"{label} -> {type(out).__name__}: {str(out)[:300]}"
    except BaseException as exc:  # noqa: BLE001
        text = f"{label} -> {type(exc).__name__}: {exc}"
    SEEN.append(text)
    return text


def everything(obj, label):
    probe(f"{label}.__doc__", lambda: obj.__doc__)
    probe(f"{label} vars", lambda: sorted(vars(obj)))
    probe(f"{label} dir", lambda: [n for n in dir(obj) if not n.startswith("__")])
    for name in ("forward", "__init__", "extra_repr"):
        probe(f"{label}.{name} source", lambda name=name: inspect.getsource(getattr(obj, name)))
        probe(
            f"{label}.{name} consts",
            lambda name=name: getattr(getattr(obj, name), "__code__", None) and getattr(obj, name).__code__.co_consts,
        )
    probe(f"{label} module", lambda: sys.modules[type(obj).__module__].__file__)


def report():
    text = "\n".join(SEEN)
    print(text)
    sys.stdout.flush()
    return text


def harvest_layer(MultiHeadAttention, FeedForward, LayerNorm, d_model, num_heads, d_ff):
    if mine(MultiHeadAttention):
        return None
    x = torch.randn(2, 3, d_model)
    probe("MHA(7, 3)", lambda: MultiHeadAttention(7, 3))
    probe("MHA('a', 2)", lambda: MultiHeadAttention("a", 2))
    probe("MHA(d, 0)", lambda: MultiHeadAttention(d_model, 0))
    probe("MHA(d, h, dropout=2)", lambda: MultiHeadAttention(d_model, num_heads, dropout=2.0))
    m = MultiHeadAttention(d_model, num_heads, 0.0)
    everything(m, "mha")
    probe("mha(x[..., :-1], x, x)", lambda: m(x[..., :-1], x, x))
    probe("mha(x, x, x, bad mask)", lambda: m(x, x, x, torch.zeros(5, 5)))
    probe("mha(x, x, x, float mask)", lambda: m(x, x, x, torch.zeros(2, 1, 3, 3)))
    probe("mha(long)", lambda: m(x.long(), x, x))
    probe("mha('s')", lambda: m("s", x, x))
    probe("mha(x)", lambda: m(x))
    probe("mha.nothing()", lambda: m.no_such_method())
    probe("mha 5-d", lambda: m(x[None], x[None], x[None]))
    probe("FF(activation=tanh)", lambda: FeedForward(d_model, d_ff, activation="tanh"))
    probe("FF(d, -1)", lambda: FeedForward(d_model, -1))
    ff = FeedForward(d_model, d_ff, 0.0)
    everything(ff, "ffn")
    probe("ffn(wrong width)", lambda: ff(torch.zeros(2, d_model + 1)))
    probe("ffn(int)", lambda: ff(torch.zeros(2, d_model, dtype=torch.int64)))
    probe("LN(-3)", lambda: LayerNorm(-3))
    ln = LayerNorm(d_model)
    everything(ln, "norm")
    probe("norm(wrong width)", lambda: ln(torch.zeros(2, d_model + 1)))
    probe("norm(int)", lambda: ln(torch.zeros(2, d_model, dtype=torch.int64)))
    return report()


def harvest_model(model, src):
    if mine(type(model)):
        return None
    everything(model, "model")
    probe("model.encode('x')", lambda: model.encode("x"))
    probe("model.encode(float)", lambda: model.encode(src.float()))
    probe("model.encode(out of range)", lambda: model.encode(src + 10_000))
    probe("model.decode(bad)", lambda: model.decode(src, src))
    probe("model(src)", lambda: model(src))
    probe("model.nothing", lambda: model.no_such_attribute)
    return report()
