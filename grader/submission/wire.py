"""The bytes that cross between the judge and a worker: plain data and raw tensor buffers, nothing else.

A message is a tree of ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``,
``tuple``, ``dict``, ``torch.device``, ``torch.dtype`` and strided ``torch.Tensor`` (any of the dtypes in
``DTYPES``, on the CPU, the ``meta`` device, CUDA or MPS), written as a one-byte tag followed by the value:

======  ==================================================================================
tag     value
======  ==================================================================================
``N``   ``None``; ``T`` / ``F``: ``True`` / ``False``
``i``   an int in 8 bytes (``<q``); ``I``: a larger int, as a u32 length and ASCII digits
``f``   a float in 8 bytes (``<d``)
``s``   a str: u32 length, UTF-8; ``y``: bytes: u32 length, the bytes
``l``   a list: u32 count, the items; ``u``: a tuple, the same
``d``   a dict: u32 count, then key, value, key, value ... (keys: ``None``/bool/int/float/str/bytes/tuple)
``D``   a ``torch.device``: u8 length, its name; ``Y``: a ``torch.dtype``: its code (u8)
``t``   a tensor: dtype code (u8), flags (u8, bit 0 ``requires_grad``), device (u8 length, ASCII),
        ndim (u8), each dimension (``<q``), byte count (``<Q``), the elements in C order
======  ==================================================================================

Decoding never runs code that came with the bytes (unlike a pickle): it can build only the types
above, checks every length against what is left, every dimension against the byte count, the
nesting depth and the device name, and raises ``WireError`` on anything else. That is why the
judge can read what a worker running a student's code sends it.

Down a pipe, each message is framed: its length in 8 bytes (``HEADER``, little-endian), then the message
(``frame``). Each side of the pipe may poll for the next message for a moment before it sleeps
(``poll_briefly``).
"""

import ctypes
import math
import re
import select
import struct
import time

import numpy
import torch

__all__ = ["DTYPES", "HEADER", "SPIN_S", "WireError", "decode", "encode", "frame", "poll_briefly"]

DTYPES = (
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.complex64,
    torch.complex128,
)
"""The tensor dtypes a message may hold; the code is the index."""
_CODE = {dt: i for i, dt in enumerate(DTYPES)}
_ITEMSIZE = {dt: dt.itemsize for dt in DTYPES}
_NUMPY = {dt: numpy.dtype(str(dt).removeprefix("torch.")) for dt in DTYPES if dt is not torch.bfloat16}
_NUMPY[torch.bfloat16] = numpy.dtype("int16")  # numpy has no bfloat16: its bits, viewed as one by torch
_PARAMETER = torch.nn.Parameter
MAX_DEPTH = 100
MAX_NDIM = 32
_DEVICE = re.compile(r"(cpu|meta|cuda(:\d{1,3})?|mps(:\d{1,3})?)\Z")
_Q = struct.Struct("<q")
_UQ = struct.Struct("<Q")
_D = struct.Struct("<d")
_U32 = struct.Struct("<I")
_SHAPES = [struct.Struct(f"<{n}q") for n in range(MAX_NDIM + 1)]
_KEY_TYPES = (type(None), bool, int, float, str, bytes, tuple)
HEADER = struct.Struct("<Q")
"""What precedes a message in a pipe: its length in bytes."""

SPIN_S = 0.002
"""Seconds a side polls for the other's next message before it sleeps in ``select`` or ``read``: the judge and a
worker answer each other within a millisecond a thousand times per grading, and a process that sleeps between
messages wakes on a cold core (each call measured 20% slower, 1.35 vs 1.08 ms for a small attention forward).
Worth a core's moment only where the machine has a core to spare for each side (``check --sealed``, the
Gradescope runner); a batch, whose judges fill every core, does not poll (``WorkerRunner(spin=0)``)."""


def poll_briefly(fd, seconds):
    """Return once ``fd`` is readable or ``seconds`` have passed (polling, not sleeping); ``True`` if readable."""
    poll, clock = select.select, time.perf_counter
    end = clock() + seconds
    while not poll([fd], [], [], 0)[0]:
        if clock() >= end:
            return False
    return True


class WireError(ValueError):
    """The message cannot be written (an object of another type) or read (bytes that are not a message). Where it
    cannot be written, ``why`` says what of it the format cannot carry as a phrase (``messages.phrase``), which a
    report says in its reader's language; ``str`` is the English."""

    why = None

    @classmethod
    def said(cls, key, **params):
        """The error whose reason is the sentence ``key`` of the catalogue."""
        from grader.messages import phrase, text

        error = cls(text(key, "en", **params))
        error.why = phrase(key, **params)
        return error


def reason(exc):
    """What an error raised while encoding a reply says: the wire format's phrase where it has one, else the
    exception's type and text (data)."""
    why = exc.why if isinstance(exc, WireError) else None
    return why if why is not None else f"{type(exc).__name__}: {str(exc)[:500]}"


# -- writing ---------------------------------------------------------------------------------------------
def encode(obj):
    """``obj`` as bytes; ``WireError`` if it holds anything but the types listed in the module doc."""
    out = bytearray()
    _put(obj, out, 0)
    return bytes(out)


def frame(blob):
    """An encoded message as it goes down a pipe: its length, then itself."""
    return HEADER.pack(len(blob)) + blob


def _put(x, out, depth):
    if depth > MAX_DEPTH:
        raise WireError.said("say.too_deep")
    kind = type(x)
    if kind is str:
        data = x.encode("utf-8", "surrogatepass")
        out += b"s" + _U32.pack(len(data))
        out += data
    elif kind is tuple or kind is list:
        out += (b"u" if kind is tuple else b"l") + _U32.pack(len(x))
        _put_items(x, out, depth + 1)
    elif kind is dict:
        out += b"d" + _U32.pack(len(x))
        inner = depth + 1
        for key, value in x.items():
            if not isinstance(key, _KEY_TYPES):
                raise WireError.said("wire.key_type", type=type(key).__qualname__)
            _put(key, out, inner)
            _put(value, out, inner)
    elif kind is torch.Tensor or kind is _PARAMETER:
        _put_tensor(x, out)
    else:
        _put_other(x, out, depth)


def _put_items(items, out, depth):
    """The items of a list or tuple at ``depth``: the plainest inline (most of a message), the rest by ``_put``."""
    if depth > MAX_DEPTH:
        for item in items:
            _put(item, out, depth)  # raises on the first
        return
    for item in items:
        kind = type(item)
        if kind is int and -(1 << 63) <= item < (1 << 63):
            out += b"i" + _Q.pack(item)
        elif kind is str:
            data = item.encode("utf-8", "surrogatepass")
            out += b"s" + _U32.pack(len(data))
            out += data
        elif item is None:
            out += b"N"
        elif kind is bool:
            out += b"T" if item else b"F"
        elif kind is torch.Tensor or kind is _PARAMETER:
            _put_tensor(item, out)
        elif kind is tuple or kind is list:
            out += (b"u" if kind is tuple else b"l") + _U32.pack(len(item))
            _put_items(item, out, depth + 1)
        elif kind is float:
            out += b"f" + _D.pack(item)
        else:
            _put(item, out, depth)


def _put_other(x, out, depth):
    if x is None:
        out += b"N"
    elif x is True:
        out += b"T"
    elif x is False:
        out += b"F"
    elif isinstance(x, int):
        x = int(x)
        if -(1 << 63) <= x < (1 << 63):
            out += b"i" + _Q.pack(x)
        else:
            _put_bytes(b"I", str(x).encode("ascii"), out)
    elif isinstance(x, float):
        out += b"f" + _D.pack(float(x))
    elif isinstance(x, str):
        _put_bytes(b"s", str(x).encode("utf-8", "surrogatepass"), out)
    elif isinstance(x, (bytes, bytearray, memoryview)):
        _put_bytes(b"y", bytes(x), out)
    elif isinstance(x, torch.Tensor):
        _put_tensor(x, out)
    elif isinstance(x, torch.device):
        name = str(x).encode("ascii")
        out += b"D" + bytes((len(name),)) + name
    elif isinstance(x, torch.dtype):
        if x not in _CODE:
            raise WireError.said("wire.dtype", dtype=str(x))
        out += b"Y" + bytes((_CODE[x],))
    elif isinstance(x, (list, tuple)):
        out += (b"u" if isinstance(x, tuple) else b"l") + _U32.pack(len(x))
        for item in x:
            _put(item, out, depth + 1)
    elif isinstance(x, dict):
        out += b"d" + _U32.pack(len(x))
        for key, value in x.items():
            if not isinstance(key, _KEY_TYPES):
                raise WireError.said("wire.key_type", type=type(key).__qualname__)
            _put(key, out, depth + 1)
            _put(value, out, depth + 1)
    else:
        raise WireError.said("say.not_plain", type=f"{type(x).__module__}.{type(x).__qualname__}")


def _put_bytes(tag, data, out):
    out += tag + _U32.pack(len(data))
    out += data


def _put_tensor(t, out):
    if t.layout != torch.strided:
        raise WireError.said("wire.layout", layout=str(t.layout))
    code = _CODE.get(t.dtype)
    if code is None:
        raise WireError.said("wire.tensor_dtype", dtype=str(t.dtype))
    cpu = t.is_cpu
    name = b"cpu" if cpu else str(t.device).encode("ascii")
    shape = t.shape
    ndim = len(shape)
    dims = _SHAPES[ndim].pack(*shape) if ndim <= MAX_NDIM else struct.pack(f"<{ndim}q", *shape)
    out += b"t" + bytes((code, 1 if t.requires_grad else 0, len(name))) + name + bytes((ndim,)) + dims
    if cpu and t.is_contiguous() and not (t.is_conj() or t.is_neg()):  # the usual: its memory as it is
        nbytes = t.nbytes
        out += _UQ.pack(nbytes)
        if nbytes:
            out += ctypes.string_at(t.data_ptr(), nbytes)
        return
    if t.is_meta:
        out += _UQ.pack(0)
        return
    data = t.detach()
    if not cpu:
        data = data.cpu()
    if data.is_conj() or data.is_neg():
        data = data.resolve_conj().resolve_neg()
    if not data.is_contiguous():
        data = data.contiguous()
    nbytes = data.numel() * data.element_size()
    out += _UQ.pack(nbytes)
    if nbytes:
        out += ctypes.string_at(data.data_ptr(), nbytes)


# -- reading ---------------------------------------------------------------------------------------------
def decode(blob):
    """The object ``blob`` holds; ``WireError`` if it is not exactly one well-formed message."""
    view = memoryview(blob).cast("B") if not isinstance(blob, bytes) else memoryview(blob)
    try:
        value, pos = _get(view, 0, 0)
    except (struct.error, UnicodeDecodeError, IndexError, OverflowError) as exc:
        raise WireError(f"malformed message: {type(exc).__name__}: {exc}") from None
    if pos != len(view):
        raise WireError(f"{len(view) - pos} bytes left over after the message")
    return value


def _past_end(n, pos, size):
    return WireError(f"a length of {n} bytes at offset {pos} runs past the end ({size} bytes)")


def _take(view, pos, n):
    if n < 0 or pos + n > len(view):
        raise _past_end(n, pos, len(view))
    return view[pos : pos + n], pos + n


def _count(view, pos):
    (n,) = _U32.unpack_from(view, pos)
    pos += _U32.size
    if n > len(view) - pos:  # every item takes at least one byte
        raise WireError(f"a count of {n} items at offset {pos} with {len(view) - pos} bytes left")
    return n, pos


def _get(view, pos, depth):
    if depth > MAX_DEPTH:
        raise WireError(f"nested more than {MAX_DEPTH} levels deep")
    if pos >= len(view):
        raise WireError("the message ends early")
    tag = view[pos]
    pos += 1
    if tag == 0x73:  # s
        (n,) = _U32.unpack_from(view, pos)
        pos += 4
        if pos + n > len(view):
            raise _past_end(n, pos, len(view))
        return str(view[pos : pos + n], "utf-8", "surrogatepass"), pos + n
    if tag == 0x6C or tag == 0x75:  # l u
        n, pos = _count(view, pos)
        items, pos = _get_items(view, pos, n, depth + 1)
        return (tuple(items) if tag == 0x75 else items), pos
    if tag == 0x69:  # i
        return _Q.unpack_from(view, pos)[0], pos + 8
    if tag == 0x4E:  # N
        return None, pos
    if tag == 0x54:  # T
        return True, pos
    if tag == 0x46:  # F
        return False, pos
    if tag == 0x66:  # f
        return _D.unpack_from(view, pos)[0], pos + 8
    if tag == 0x79 or tag == 0x49:  # y I
        (n,) = _U32.unpack_from(view, pos)
        data, pos = _take(view, pos + _U32.size, n)
        if tag == 0x79:
            return bytes(data), pos
        text = str(data, "utf-8", "surrogatepass")
        if n > 4300 or not re.fullmatch(r"-?\d+", text):
            raise WireError(f"an integer written as {text[:40]!r}")
        return int(text), pos
    if tag == 0x64:  # d
        n, pos = _count(view, pos)
        d = {}
        inner = depth + 1
        size = len(view)
        for _ in range(n):
            if pos < size and view[pos] == 0x73 and inner <= MAX_DEPTH:  # s: the usual key, read inline
                (k,) = _U32.unpack_from(view, pos + 1)
                pos += 5
                if pos + k > size:
                    raise _past_end(k, pos, size)
                key = str(view[pos : pos + k], "utf-8", "surrogatepass")
                pos += k
                d[key], pos = _get(view, pos, inner)
                continue
            key, pos = _get(view, pos, inner)
            if not isinstance(key, _KEY_TYPES):
                raise WireError.said("wire.key_type", type=type(key).__qualname__)
            try:
                hash(key)
            except TypeError:
                raise WireError("a dict key that cannot be hashed") from None
            d[key], pos = _get(view, pos, inner)
        return d, pos
    if tag == 0x74:  # t
        return _get_tensor(view, pos)
    if tag == 0x44:  # D
        return torch.device(_device(view, pos)[0]), pos + 1 + view[pos]
    if tag == 0x59:  # Y
        return _dtype(view[pos]), pos + 1
    raise WireError(f"unknown tag {tag:#04x} at offset {pos - 1}")


def _get_items(view, pos, n, depth):
    """``n`` items of a list or tuple at ``depth``: ints, strings and ``None`` read inline (most of a message), the
    rest by ``_get``."""
    items = []
    append = items.append
    size = len(view)
    if depth > MAX_DEPTH:
        for _ in range(n):
            item, pos = _get(view, pos, depth)  # raises on the first
        return items, pos
    for _ in range(n):
        if pos >= size:
            raise WireError("the message ends early")
        tag = view[pos]
        if tag == 0x69:  # i
            append(_Q.unpack_from(view, pos + 1)[0])
            pos += 9
        elif tag == 0x73:  # s
            (k,) = _U32.unpack_from(view, pos + 1)
            pos += 5
            if pos + k > size:
                raise _past_end(k, pos, size)
            append(str(view[pos : pos + k], "utf-8", "surrogatepass"))
            pos += k
        elif tag == 0x4E:  # N
            append(None)
            pos += 1
        elif tag == 0x6C or tag == 0x75:  # l u: as ``_get`` and ``_count`` would, without the calls
            (k,) = _U32.unpack_from(view, pos + 1)
            pos += 5
            if k > size - pos:
                raise WireError(f"a count of {k} items at offset {pos} with {size - pos} bytes left")
            inner, pos = _get_items(view, pos, k, depth + 1)
            append(tuple(inner) if tag == 0x75 else inner)
        elif tag == 0x74:  # t
            item, pos = _get_tensor(view, pos + 1)
            append(item)
        elif tag == 0x54 or tag == 0x46:  # T F
            append(tag == 0x54)
            pos += 1
        elif tag == 0x66:  # f
            append(_D.unpack_from(view, pos + 1)[0])
            pos += 9
        else:
            item, pos = _get(view, pos, depth)
            append(item)
    return items, pos


def _dtype(code):
    if code >= len(DTYPES):
        raise WireError(f"unknown dtype code {code}")
    return DTYPES[code]


def _device(view, pos):
    """The device name of u8 length at ``pos``, checked; and the position after it."""
    raw, pos = _take(view, pos + 1, view[pos])
    device = str(raw, "ascii")
    if not _DEVICE.match(device):
        raise WireError(f"unknown device {device[:40]!r}")
    return device, pos


def _get_tensor(view, pos):
    dtype, flags = _dtype(view[pos]), view[pos + 1]
    device, pos = _device(view, pos + 2)
    ndim = view[pos]
    pos += 1
    if ndim > MAX_NDIM:
        raise WireError(f"a tensor with {ndim} dimensions")
    shape = struct.unpack_from(f"<{ndim}q", view, pos)
    pos += 8 * ndim
    for n in shape:
        if n < 0:
            raise WireError(f"a negative dimension {n}")
    (nbytes,) = _UQ.unpack_from(view, pos)
    pos += _UQ.size
    numel = math.prod(shape)
    if device == "meta":
        if nbytes:
            raise WireError("a meta tensor with data")
        if numel > 1 << 40:
            raise WireError(f"a meta tensor of {numel} elements")
        t = torch.empty(shape, dtype=dtype, device="meta")
    else:
        itemsize = _ITEMSIZE[dtype]
        if numel * itemsize != nbytes:
            raise WireError(f"a tensor of shape {tuple(shape)} and dtype {dtype} with {nbytes} bytes of data")
        data, pos = _take(view, pos, nbytes)
        if nbytes:  # numpy copies the bytes into memory of its own, several times faster than torch.frombuffer
            t = torch.from_numpy(numpy.frombuffer(data, dtype=_NUMPY[dtype]).reshape(shape).copy())
            if dtype is torch.bfloat16:
                t = t.view(torch.bfloat16)
        else:
            t = torch.empty(shape, dtype=dtype)
        if device != "cpu":
            try:
                t = t.to(device)
            except (RuntimeError, AssertionError) as exc:
                raise WireError(f"a tensor on {device}, which this process cannot use: {exc}") from None
    if flags & 1:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise WireError(f"requires_grad on a tensor of dtype {dtype}")
        t.requires_grad_(True)
    return t, pos
