"""The judge-worker wire format: everything a probe returns survives the trip; bytes that are not a
message are refused with ``WireError``, never executed, whatever they claim to hold."""

import math
import struct

import pytest
import torch

from grader.submission import wire
from grader.submission.wire import WireError, decode, encode


def same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, torch.Tensor):
        assert (a.dtype, a.shape, a.device, a.requires_grad) == (b.dtype, b.shape, b.device, b.requires_grad)
        if a.device.type != "meta":
            assert torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan()))
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


@pytest.mark.parametrize("dtype", wire.DTYPES, ids=str)
def test_every_dtype_round_trips(dtype):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(3, 4, 5, generator=g, dtype=torch.float64) * 50
    t = base.to(dtype) if not dtype.is_complex else torch.complex(base, -base).to(dtype)
    for x in (t, t[:, 1:3].transpose(0, 1), t[0, 0, 0], t[:0], t.expand(2, 3, 4, 5)):
        same(x.contiguous(), decode(encode(x)))


def test_plain_data_round_trips():
    value = {
        "none": None,
        "t": True,
        "f": False,
        "int": -(1 << 62),
        "big": 1 << 100,
        "float": -0.0,
        "inf": float("inf"),
        "nan": float("nan"),
        "str": "多头注意力 \u2603",
        "bytes": b"\x00\xff",
        "list": [1, [2, (3, "x")]],
        "tuple": (),
        7: "int key",
        (1, "a"): "tuple key",
        None: "none key",
        "device": torch.device("meta"),
        "dtype": torch.bfloat16,
        "meta": torch.empty(2, 3, device="meta"),
        "grad": torch.ones(2, requires_grad=True),
        "neg": torch.tensor([1.0, 2.0])._neg_view(),
        "conj": torch.tensor([1 + 2j])._conj(),
    }
    back = decode(encode(value))
    value["neg"], value["conj"] = value["neg"].resolve_neg(), value["conj"].resolve_conj()
    same(value, back)
    assert type(decode(encode(torch.Size([2, 3])))) is tuple


def test_objects_that_are_not_plain_data_are_not_written():
    class Sub(torch.Tensor):
        pass

    for bad in (
        object(),
        {1, 2},
        torch.nn.Linear(2, 2),
        torch.zeros(3).to_sparse(),
        {"k": [lambda: 0]},
        {frozenset(): 1},
        torch.zeros(2, dtype=torch.uint16) if hasattr(torch, "uint16") else object(),
    ):
        with pytest.raises(WireError):
            encode(bad)
    assert type(decode(encode(torch.zeros(2).as_subclass(Sub)))) is torch.Tensor  # written as a plain tensor


def test_nesting_has_a_limit():
    deep = []
    for _ in range(wire.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(WireError, match="nested"):
        encode(deep)
    blob = b"l\x01\x00\x00\x00" * (wire.MAX_DEPTH + 5) + b"N"
    with pytest.raises(WireError, match="nested"):
        decode(blob)


def tensor_blob(code=0, flags=0, device=b"cpu", shape=(2,), nbytes=16, data=None):
    head = b"t" + bytes((code, flags, len(device))) + device + bytes((len(shape),))
    head += b"".join(struct.pack("<q", n) for n in shape) + struct.pack("<Q", nbytes)
    return head + (bytes(nbytes) if data is None else data)


@pytest.mark.parametrize(
    "blob, what",
    [
        (b"", "ends early"),
        (b"Z", "unknown tag"),
        (b"NN", "left over"),
        (b"i\x01\x02", "malformed"),
        (b"s\xff\xff\xff\x7fabc", "runs past the end"),
        (b"s\x02\x00\x00\x00\xff\xfe", "malformed"),
        (b"l\xff\xff\xff\xff", "count of"),
        (b"d\x01\x00\x00\x00l\x00\x00\x00\x00N", "dict key"),
        (b"I\x03\x00\x00\x001e9", "integer written"),
        (tensor_blob(code=200), "dtype code"),
        (tensor_blob(device=b"cuda:0; rm -rf /"), "unknown device"),
        (tensor_blob(device=b"\xff"), "malformed"),
        (tensor_blob(shape=(2,), nbytes=8), "bytes of data"),
        (tensor_blob(shape=(1 << 40, 1 << 40), nbytes=0), "bytes of data"),
        (tensor_blob(shape=(-2,), nbytes=0), "negative dimension"),
        (tensor_blob(shape=(1,) * 40, nbytes=8), "dimensions"),
        (tensor_blob(shape=(4,), nbytes=32, data=bytes(8)), "runs past the end"),
        (tensor_blob(device=b"meta", nbytes=16), "meta tensor with data"),
        (tensor_blob(code=wire.DTYPES.index(torch.int64), flags=1), "requires_grad"),
    ],
)
def test_malformed_messages_are_refused(blob, what):
    with pytest.raises(WireError, match=what):
        decode(blob)


def test_a_pickle_is_not_a_message(tmp_path):
    """What ``torch.save`` or ``pickle`` writes (and could run code when loaded) is refused unread."""
    import io
    import pickle

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    for blob in (pickle.dumps(Payload()), pickle.dumps({"result": 1})):
        with pytest.raises(WireError):
            decode(blob)
    buf = io.BytesIO()
    torch.save({"result": {"out": torch.ones(2)}}, buf)
    with pytest.raises(WireError):
        decode(buf.getvalue())
    assert not marker.exists()


def test_truncations_of_a_real_message_are_all_refused():
    blob = encode({"result": {"out": torch.randn(2, 3), "modified": [], "n": 3.5}, "findings": []})
    for cut in range(len(blob)):
        with pytest.raises(WireError):
            decode(blob[:cut])


def test_poll_briefly_returns_when_a_message_is_there_and_gives_up_on_time():
    import os
    import time

    r, w = os.pipe()
    try:
        t0 = time.perf_counter()
        assert wire.poll_briefly(r, 0.02) is False  # nothing came: it gave up after its moment, not before
        waited = time.perf_counter() - t0
        assert 0.02 <= waited < 0.5
        os.write(w, b"x")
        t0 = time.perf_counter()
        assert wire.poll_briefly(r, 5.0) is True  # already readable: at once, not after 5 s
        assert time.perf_counter() - t0 < 0.5
    finally:
        os.close(r)
        os.close(w)


def _plain_values():
    from hypothesis import strategies as st

    leaves = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text()
        | st.binary()
        | st.sampled_from([torch.float32, torch.int64, torch.device("cpu")])
    )
    keys = st.none() | st.booleans() | st.integers() | st.text() | st.binary()
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=30,
    )


def test_any_plain_value_round_trips_and_any_damage_is_refused_or_read_as_plain_data():
    """The fast paths (ints, strings, None read and written inline in lists) agree with the general ones, and bytes
    changed anywhere in a message give a ``WireError`` or plain data, never another exception."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(_plain_values(), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4))
    def check(value, damage):
        blob = encode(value)
        same(value, decode(blob))
        broken = bytearray(blob)
        for where, byte in damage:
            if broken:
                broken[where % len(broken)] = byte
        try:
            decode(bytes(broken))
        except WireError:
            pass

    check()
