"""Plain data on the wire between the grader and a worker, without pickle.

What crosses: ``None``, ``bool``, ``int`` (any size), ``float`` (nan and inf included),
``complex``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict`` with ``str`` keys, NumPy arrays and
NumPy scalars of number, bool, string and date kinds (raw buffer, dtype, shape), dense strided
torch tensors (raw buffer, dtype, shape, device, ``requires_grad``; a CUDA tensor travels through
host memory and is restored on the receiving side's device), ``torch.Size`` (as a tuple) and the
``Handle``, ``FunctionRef`` and ``ArgRef`` tokens.

A value is accepted only when its type is exactly one of these (``type(x) is list``): a subclass
can carry behaviour (an array whose ``==`` is always true), so subclasses of these types, arrays of
object or structured dtype and tensor subclasses are refused with a ``ProtocolError`` saying why.
On the worker side any *other* object (one that does not pose as data: a cache object, an
``nn.Module``) is kept in a ``HandleTable`` and crosses as a ``Handle``; on the grader side it is
an error.

Limits: at most ``MAX_BYTES`` per message, ``MAX_DEPTH`` levels of nesting, ``MAX_ITEMS`` values.
The decoder trusts nothing: every length, count, tag, dtype and shape is checked against the
message before it is used.

Layout: a value is a one-byte tag and its fields, little endian. Array data is aligned to
``ALIGN`` bytes within the message so a received array is used in place, without a copy. A list,
tuple, dict, array or tensor met again in the same message is sent as a reference to the first
one: shared objects stay shared (as in-process: every cache of ``rnn_forward`` holds the same
``parameters``) and a message is never larger than the objects it holds.
"""

from __future__ import annotations

import math
import re
import struct
import sys
import types
from typing import Any

import numpy as np

from rnngrade.harness.runner.base import ArgRef, FunctionRef, Handle

MAX_BYTES = 512 << 20
MAX_DEPTH = 64
MAX_ITEMS = 1_000_000
ALIGN = 64
_INLINE = 2048  # raw data up to this size is copied into the message; larger is sent in place

_U8 = struct.Struct("<B")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_C128 = struct.Struct("<dd")

_NUMPY_KINDS = frozenset("biufcUSmM")
_NUMPY_SCALARS = frozenset({np.dtype(c).type for c in "?bhilqBHILQefdgFDG"}
                           | {np.datetime64, np.timedelta64})
# what ``dtype.str`` gives for the kinds above: no other type code (a deprecated alias such as
# "a" would reach NumPy and warn before being refused)
_DTYPE_RE = re.compile(r"^[<>|=][biufcUSmM]\d{1,4}(\[\d*[a-zA-Z]{1,3}\])?$")
_DEVICE_RE = re.compile(r"^(cpu|cuda(:\d{1,3})?)$")
# torch dtype name -> the NumPy dtype its bytes travel as
_TORCH_DTYPES = {
    "bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4",
    "int64": "<i8", "float16": "<f2", "bfloat16": "<i2", "float32": "<f4", "float64": "<f8",
    "complex64": "<c8", "complex128": "<c16", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8",
}
_TENSOR_DTYPES = {name: np.dtype(code) for name, code in _TORCH_DTYPES.items()}
_TENSOR_NAMES = {name: bytes([len(name)]) + name.encode() for name in _TORCH_DTYPES}
_BUILTINS = (bool, int, float, complex, str, bytes, list, tuple, dict)

T_NONE, T_TRUE, T_FALSE = b"N", b"T", b"F"
T_INT, T_BIGINT, T_FLOAT, T_COMPLEX = b"i", b"I", b"f", b"c"
T_STR, T_BYTES, T_LIST, T_TUPLE, T_DICT = b"s", b"b", b"l", b"t", b"d"
T_ARRAY, T_SCALAR, T_TENSOR = b"a", b"g", b"p"
T_HANDLE, T_FUNCTION, T_ARGREF = b"H", b"R", b"A"
T_REF = b"r"  # an earlier list, tuple, dict, array or tensor of the same message


class ProtocolError(ValueError):
    """A value that may not cross the boundary, or a message that does not decode."""


class HandleTable:
    """Worker side: objects that are not plain data, kept alive and named by a ``Handle``.

    Ids start at ``base`` so that handles from a restarted worker never alias new objects."""

    def __init__(self, base: int = 1) -> None:
        self.objects: dict[int, Any] = {}
        self._by_identity: dict[int, Handle] = {}
        self._next = base

    def handle_for(self, obj: Any) -> Handle:
        known = self._by_identity.get(id(obj))
        if known is not None and self.objects.get(known.id) is obj:
            return known
        handle = Handle(self._next, _type_name(obj))
        self._next += 1
        self.objects[handle.id] = obj
        self._by_identity[id(obj)] = handle
        return handle

    def resolve(self, handle_id: int) -> Any:
        try:
            return self.objects[handle_id]
        except KeyError:
            raise ProtocolError(f"unknown handle #{handle_id}: the object it named is gone "
                                "(the worker was restarted after a failure)") from None


def _type_name(obj: Any) -> str:
    name = getattr(type(obj), "__qualname__", None)
    return name[:100] if type(name) is str else "object"


def _torch() -> types.ModuleType | None:
    """The torch module if this process has imported it (else nothing can be a tensor)."""
    return sys.modules.get("torch")


# ----------------------------------------------------------------------------------- encoding

class _Encoder:
    def __init__(self, handles: HandleTable | None, max_bytes: int, max_depth: int,
                 max_items: int) -> None:
        self.handles = handles
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.max_items = max_items
        self.head = bytearray()
        self.parts: list[bytes | bytearray | memoryview] = []
        self.size = 0  # bytes in ``parts``
        self.items = 0
        self.memo: dict[int, int] = {}  # id of a list/tuple/dict/array/tensor sent -> its index
        self.count = 0  # lists, tuples, dicts, arrays and tensors sent so far
        self.keep: list[Any] = []  # temporaries (their ids must stay unique)
        self.torch = _torch()
        self.dispatch = _dispatch()

    def finish(self) -> list[bytes | bytearray | memoryview]:
        self._check_size(0)
        if self.head:
            self.parts.append(self.head)
        return self.parts

    def _check_size(self, extra: int) -> None:
        if self.size + len(self.head) + extra > self.max_bytes:
            raise ProtocolError(f"the data is larger than {_mib(self.max_bytes)}")

    def _text(self, text: str, width: struct.Struct = _U32) -> None:
        data = text.encode("utf-8", "surrogatepass")
        self.head += width.pack(len(data))
        self.head += data

    def _remember(self, x: Any) -> None:
        self.memo[id(x)] = self.count
        self.count += 1

    def value(self, x: Any, depth: int) -> None:
        self.items += 1
        if self.items > self.max_items:
            raise ProtocolError(f"the data has more than {self.max_items:,} items")
        if len(self.head) > 65536:
            self._check_size(0)
        method = self.dispatch.get(type(x))
        if method is None:
            self._opaque(x)
        else:
            method(self, x, depth)

    # exact types only (see the dispatch table)
    def _none(self, x: None, depth: int) -> None:
        self.head += T_NONE

    def _bool(self, x: bool, depth: int) -> None:
        self.head += T_TRUE if x else T_FALSE

    def _int(self, x: int, depth: int) -> None:
        if -(1 << 63) <= x < (1 << 63):
            self.head += T_INT
            self.head += _I64.pack(x)
        else:
            data = x.to_bytes((x.bit_length() + 8) // 8, "little", signed=True)
            self._check_size(len(data))
            self.head += T_BIGINT
            self.head += _U32.pack(len(data))
            self.head += data

    def _float(self, x: float, depth: int) -> None:
        self.head += T_FLOAT
        self.head += _F64.pack(x)

    def _complex(self, x: complex, depth: int) -> None:
        self.head += T_COMPLEX
        self.head += _C128.pack(x.real, x.imag)

    def _str(self, x: str, depth: int) -> None:
        if len(x) > 4096:
            self._check_size(len(x))
        self.head += T_STR
        self._text(x)

    def _bytes(self, x: bytes, depth: int) -> None:
        self._check_size(len(x))
        self.head += T_BYTES
        self.head += _U32.pack(len(x))
        self.head += x

    def _back_reference(self, x: Any) -> bool:
        index = self.memo.get(id(x))
        if index is None:
            return False
        self.head += T_REF
        self.head += _U32.pack(index)
        return True

    def _sequence(self, x: list | tuple, depth: int) -> None:
        if self._back_reference(x):
            return
        self._container(depth)
        self.head += T_LIST if type(x) is list else T_TUPLE
        self.head += _U32.pack(len(x))
        for item in x:
            self.value(item, depth + 1)
        self._remember(x)

    def _dict(self, x: dict, depth: int) -> None:
        if self._back_reference(x):
            return
        self._container(depth)
        self.head += T_DICT
        self.head += _U32.pack(len(x))
        for key, item in dict.items(x):
            if type(key) is not str:
                raise ProtocolError(f"a dict with a {_type_name(key)} key is not plain data: "
                                    "only dicts with str keys cross")
            self._text(key)
            self.value(item, depth + 1)
        self._remember(x)

    def _handle(self, x: Handle, depth: int) -> None:
        self.head += T_HANDLE
        self.head += _U64.pack(x.id)
        self._text(str(x.type_name)[:100])

    def _function(self, x: FunctionRef, depth: int) -> None:
        self._container(depth)
        self.head += T_FUNCTION
        self._text(str(x.name))
        args = tuple(x.args)
        self.keep.append(args)
        self.value(args, depth + 1)

    def _argref(self, x: ArgRef, depth: int) -> None:
        self.head += T_ARGREF
        self.head += _U32.pack(int(x.index))

    def _container(self, depth: int) -> None:
        if depth >= self.max_depth:
            raise ProtocolError(f"the data is nested more than {self.max_depth} levels deep")

    def _opaque(self, x: Any) -> None:
        t = type(x)
        if isinstance(x, np.ndarray):
            raise ProtocolError(f"a {_type_name(x)} (a numpy.ndarray subclass) is not plain "
                                "data: return a plain array (np.asarray(x))")
        if isinstance(x, np.generic):
            raise ProtocolError(f"a NumPy scalar of type {_type_name(x)} is not plain data")
        if self.torch is not None and isinstance(x, self.torch.Tensor):
            raise ProtocolError(f"a {_type_name(x)} (a torch.Tensor subclass) is not plain "
                                "data: return a plain tensor (x.detach())")
        for base in _BUILTINS:
            if isinstance(x, base):
                raise ProtocolError(f"a {_type_name(x)} (a subclass of {base.__name__}) is not "
                                    f"plain data: return a plain {base.__name__}")
        if self.handles is None:
            raise ProtocolError(f"a {t.__module__}.{_type_name(x)} is not plain data and "
                                "cannot be sent")
        self._handle(self.handles.handle_for(x), 0)

    def _raw(self, x: np.ndarray) -> None:
        """An array's bytes (C order), aligned: a pad count, padding, the data."""
        nbytes = x.nbytes
        offset = self.size + len(self.head)
        pad = (-(offset + 1)) % ALIGN
        self._check_size(1 + pad + nbytes)
        self.head += _PADS[pad]
        if nbytes <= _INLINE:
            self.head += x.tobytes()
        else:
            self.parts.append(self.head)
            self.size += len(self.head)
            self.head = bytearray()
            self.parts.append(_bytes_of(x))
            self.size += nbytes

    def _shape(self, shape: tuple) -> None:
        self.head += _U8.pack(len(shape))
        self.head += _SHAPES[len(shape)].pack(*shape)

    def _array(self, x: np.ndarray, depth: int) -> None:
        index = self.memo.get(id(x))
        if index is not None:
            self.head += T_REF
            self.head += _U32.pack(index)
            return
        header = _array_header(x.dtype, x.shape)
        nbytes = x.nbytes
        head = self.head
        head += header
        if nbytes <= _INLINE:
            offset = self.size + len(head)
            pad = (-(offset + 1)) % ALIGN
            if offset + 1 + pad + nbytes > self.max_bytes:
                raise ProtocolError(f"the data is larger than {_mib(self.max_bytes)}")
            head += _PADS[pad]
            head += x.tobytes()
        else:
            self._raw(x)
        self.memo[id(x)] = self.count
        self.count += 1

    def _scalar(self, x: np.generic, depth: int) -> None:
        arr = np.asarray(x)
        self.head += T_SCALAR
        self.head += _array_dtype(arr.dtype)
        data = arr.tobytes()
        self.head += _U32.pack(len(data))
        self.head += data

    def _size(self, x: Any, depth: int) -> None:
        shape = tuple(int(n) for n in x)
        self.keep.append(shape)
        self.items -= 1
        self.value(shape, depth)

    def _tensor(self, x: Any, depth: int) -> None:
        if self._back_reference(x):
            return
        torch = self.torch
        assert torch is not None  # a tensor's encoder is dispatched only once torch is loaded
        if x.layout != torch.strided or x.is_quantized or getattr(x, "is_nested", False):
            raise ProtocolError(f"a tensor with layout {x.layout} is not plain data: return a "
                                "dense tensor")
        name = _torch_dtype_name(x.dtype)
        if name not in _TORCH_DTYPES:
            raise ProtocolError(f"a tensor of dtype {x.dtype} cannot be sent")
        cpu = x.is_cpu
        device = "cpu" if cpu else str(x.device)
        if not cpu and not _DEVICE_RE.match(device):
            raise ProtocolError(f"a tensor on device {device} cannot be sent")
        if x.dim() > 64:
            raise ProtocolError("a tensor with more than 64 dimensions is not plain data")
        self._check_size(x.numel() * x.element_size())
        requires_grad = x.requires_grad
        t = x.detach() if requires_grad else x
        if t.is_conj():
            t = t.resolve_conj()
        if t.is_neg():
            t = t.resolve_neg()
        if not cpu:
            t = t.cpu()
        if not t.is_contiguous():
            t = t.contiguous()
        if name == "bfloat16":
            t = t.view(torch.int16)
        arr = t.numpy()
        self.head += T_TENSOR
        self.head += _TENSOR_NAMES[name]
        self._text(device, _U8)
        self.head += b"\x01" if requires_grad else b"\x00"
        self._shape(tuple(x.shape))
        self._raw(arr)
        self._remember(x)


_TORCH_NAMES: dict[Any, str] = {}


def _torch_dtype_name(dtype: Any) -> str:
    """``float64`` for ``torch.float64`` (remembered: building it anew costs)."""
    name = _TORCH_NAMES.get(dtype)
    if name is None:
        name = str(dtype).removeprefix("torch.")
        if len(_TORCH_NAMES) < 64:
            _TORCH_NAMES[dtype] = name
    return name


_PADS = [_U8.pack(n) + bytes(n) for n in range(ALIGN)]
_SHAPES = [struct.Struct(f"<{n}Q") for n in range(65)]
_ARRAY_DTYPES: dict[np.dtype, bytes] = {}
_DISPATCH: dict[type, Any] = {}


def _array_dtype(dtype: np.dtype) -> bytes:
    """The dtype's field (length and text); refuses what is not plain data."""
    known = _ARRAY_DTYPES.get(dtype)
    if known is not None:
        return known
    if dtype.kind not in _NUMPY_KINDS or dtype.fields is not None or dtype.subdtype:
        what = "object" if dtype.kind == "O" else "structured" if dtype.kind == "V" \
            else str(dtype)
        raise ProtocolError(f"a numpy array of {what} dtype is not plain data: return "
                            "arrays of numbers")
    text = dtype.str.encode()
    field = _U8.pack(len(text)) + text
    if len(_ARRAY_DTYPES) < 256:
        _ARRAY_DTYPES[dtype] = field
    return field


_ARRAY_HEADERS: dict[tuple, bytes] = {}


def _array_header(dtype: np.dtype, shape: tuple) -> bytes:
    """Tag, dtype and shape of an array (cached: a message often holds many alike)."""
    key = (dtype, shape)
    header = _ARRAY_HEADERS.get(key)
    if header is None:
        if len(shape) > 64:
            raise ProtocolError("an array with more than 64 dimensions is not plain data")
        header = (T_ARRAY + _array_dtype(dtype) + _U8.pack(len(shape))
                  + _SHAPES[len(shape)].pack(*shape))
        if len(_ARRAY_HEADERS) < 4096:
            _ARRAY_HEADERS[key] = header
    return header


def _dispatch() -> dict[type, Any]:
    """Exact type -> encoder method (torch's types join once torch is imported)."""
    if not _DISPATCH:
        _DISPATCH.update({
            type(None): _Encoder._none, bool: _Encoder._bool, int: _Encoder._int,
            float: _Encoder._float, complex: _Encoder._complex, str: _Encoder._str,
            bytes: _Encoder._bytes, list: _Encoder._sequence, tuple: _Encoder._sequence,
            dict: _Encoder._dict, np.ndarray: _Encoder._array, Handle: _Encoder._handle,
            FunctionRef: _Encoder._function, ArgRef: _Encoder._argref,
        })
        _DISPATCH.update(dict.fromkeys(_NUMPY_SCALARS, _Encoder._scalar))
    torch = _torch()
    if torch is not None and torch.Tensor not in _DISPATCH:
        _DISPATCH[torch.Tensor] = _Encoder._tensor
        _DISPATCH[torch.Size] = _Encoder._size
    return _DISPATCH


def _bytes_of(x: np.ndarray) -> memoryview:
    if not x.flags.c_contiguous:
        x = x.copy(order="C")
    return x.reshape(-1).view(np.uint8).data


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def encode(value: Any, *, handles: HandleTable | None = None, max_bytes: int = MAX_BYTES,
           max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS
           ) -> list[bytes | bytearray | memoryview]:
    """``value`` as a list of buffers (their concatenation is the message)."""
    encoder = _Encoder(handles, max_bytes, max_depth, max_items)
    encoder.value(value, 0)
    return encoder.finish()


def encode_bytes(value: Any, **options: Any) -> bytes:
    """``value`` as one bytes object (tests, small messages)."""
    return b"".join(bytes(part) for part in encode(value, **options))


# ----------------------------------------------------------------------------------- decoding

_DTYPE_CACHE: dict[str, np.dtype] = {}
_DECODED_HEADERS: dict[bytes, tuple] = {}  # an array's dtype and shape fields, checked


class _Decoder:
    def __init__(self, buf: bytearray, handles: HandleTable | None, max_depth: int,
                 max_items: int) -> None:
        self.buf = buf
        self.view = memoryview(buf)
        self.pos = 0
        self.handles = handles
        self.max_depth = max_depth
        self.max_items = max_items
        self.items = 0
        self.memo: list[Any] = []  # lists, tuples, dicts, arrays, tensors in order of completion
        self.copied = False  # whether some array or tensor does not share the buffer's memory

    def take(self, n: int) -> memoryview:
        end = self.pos + n
        if end > len(self.buf):
            raise ProtocolError("truncated message")
        chunk = self.view[self.pos:end]
        self.pos = end
        return chunk

    def unpack(self, fmt: struct.Struct) -> Any:
        try:
            (value,) = fmt.unpack_from(self.buf, self.pos)
        except struct.error:
            raise ProtocolError("truncated message") from None
        self.pos += fmt.size
        return value

    def text(self, width: struct.Struct = _U32) -> str:
        data = self.take(self.unpack(width))
        try:
            return str(data, "utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise ProtocolError("a string is not valid UTF-8") from None

    def value(self, depth: int) -> Any:
        self.items += 1
        if self.items > self.max_items:
            raise ProtocolError(f"more than {self.max_items:,} items")
        pos = self.pos
        if pos >= len(self.buf):
            raise ProtocolError("truncated message")
        self.pos = pos + 1
        method = _DECODERS.get(self.buf[pos])
        if method is None:
            raise ProtocolError(f"unknown tag {self.buf[pos]}")
        return method(self, depth)

    def none(self, depth: int) -> None:
        return None

    def true(self, depth: int) -> bool:
        return True

    def false(self, depth: int) -> bool:
        return False

    def int64(self, depth: int) -> int:
        return self.unpack(_I64)

    def bigint(self, depth: int) -> int:
        return int.from_bytes(self.take(self.unpack(_U32)), "little", signed=True)

    def float64(self, depth: int) -> float:
        return self.unpack(_F64)

    def complex128(self, depth: int) -> complex:
        try:
            real, imag = _C128.unpack_from(self.buf, self.pos)
        except struct.error:
            raise ProtocolError("truncated message") from None
        self.pos += _C128.size
        return complex(real, imag)

    def string(self, depth: int) -> str:
        return self.text()

    def raw_bytes(self, depth: int) -> bytes:
        return bytes(self.take(self.unpack(_U32)))

    def count(self, depth: int) -> int:
        if depth >= self.max_depth:
            raise ProtocolError(f"nested more than {self.max_depth} levels deep")
        count = self.unpack(_U32)
        if count > len(self.buf) - self.pos:  # every item takes at least one byte
            raise ProtocolError("truncated message")
        return count

    def list_(self, depth: int) -> list:
        out = [self.value(depth + 1) for _ in range(self.count(depth))]
        self.memo.append(out)
        return out

    def tuple_(self, depth: int) -> tuple:
        out = tuple([self.value(depth + 1) for _ in range(self.count(depth))])
        self.memo.append(out)
        return out

    def dict_(self, depth: int) -> dict:
        out = {}
        for _ in range(self.count(depth)):
            key = self.text()
            out[key] = self.value(depth + 1)
        self.memo.append(out)
        return out

    def reference(self, depth: int) -> Any:
        index = self.unpack(_U32)
        if index >= len(self.memo):
            raise ProtocolError("a reference to nothing sent before")
        return self.memo[index]

    def handle(self, depth: int) -> Any:
        handle_id = self.unpack(_U64)
        type_name = self.text()
        if self.handles is not None:
            return self.handles.resolve(handle_id)
        return Handle(handle_id, type_name[:100])

    def function(self, depth: int) -> FunctionRef:
        if depth >= self.max_depth:
            raise ProtocolError(f"nested more than {self.max_depth} levels deep")
        name = self.text()
        args = self.value(depth + 1)
        if type(args) is not tuple:
            raise ProtocolError("a FunctionRef's arguments must be a tuple")
        return FunctionRef(name, args)

    def argref(self, depth: int) -> ArgRef:
        return ArgRef(self.unpack(_U32))

    def dtype(self) -> np.dtype:
        text = self.text(_U8)
        dtype = _DTYPE_CACHE.get(text)
        if dtype is not None:
            return dtype
        if not _DTYPE_RE.match(text):
            raise ProtocolError(f"bad dtype {text[:20]!r}")
        try:
            dtype = np.dtype(text)
        except (TypeError, ValueError):
            raise ProtocolError(f"bad dtype {text!r}") from None
        if dtype.kind not in _NUMPY_KINDS or dtype.fields is not None or dtype.subdtype \
                or dtype.itemsize == 0:
            raise ProtocolError(f"dtype {text!r} is not plain data")
        if len(_DTYPE_CACHE) < 256:
            _DTYPE_CACHE[text] = dtype
        return dtype

    def shape(self) -> tuple[tuple[int, ...], int]:
        ndim = self.unpack(_U8)
        if ndim > 64:
            raise ProtocolError("more than 64 dimensions")
        fmt = _SHAPES[ndim]
        try:
            shape = fmt.unpack_from(self.buf, self.pos)
        except struct.error:
            raise ProtocolError("truncated message") from None
        self.pos += fmt.size
        return shape, math.prod(shape)

    def raw_array(self, dtype: np.dtype, shape: tuple[int, ...], count: int) -> np.ndarray:
        pad = self.unpack(_U8)
        start = self.pos + pad
        nbytes = count * dtype.itemsize
        if start + nbytes > len(self.buf):
            raise ProtocolError("truncated message: array data")
        self.pos = start + nbytes
        return self._placed(np.ndarray(shape, dtype, self.buf, start))

    def _placed(self, arr: np.ndarray) -> np.ndarray:
        """An array laid over the buffer, copied when unaligned, its contents checked."""
        if not arr.flags.aligned:
            arr = arr.copy()
            self.copied = True
        if arr.dtype.kind in "bU":
            _check_contents(arr)
        return arr

    def array(self, depth: int) -> np.ndarray:
        buf, pos = self.buf, self.pos
        try:
            ndim_at = pos + 1 + buf[pos]
            end = ndim_at + 1 + 8 * buf[ndim_at]
        except IndexError:
            raise ProtocolError("truncated message") from None
        key = bytes(buf[pos:end])
        known = _DECODED_HEADERS.get(key)
        if known is None:
            dtype = self.dtype()
            shape, count = self.shape()
            known = (dtype, shape, count * dtype.itemsize)
            if len(_DECODED_HEADERS) < 4096:
                _DECODED_HEADERS[key] = known
        dtype, shape, nbytes = known
        if end >= len(buf):
            raise ProtocolError("truncated message")
        start = end + 1 + buf[end]
        if start + nbytes > len(buf):
            raise ProtocolError("truncated message: array data")
        self.pos = start + nbytes
        arr = self._placed(np.ndarray(shape, dtype, buf, start))
        self.memo.append(arr)
        return arr

    def scalar(self, depth: int) -> np.generic:
        dtype = self.dtype()
        data = self.take(self.unpack(_U32))
        if len(data) != dtype.itemsize:
            raise ProtocolError("bad scalar size")
        arr = np.frombuffer(data, dtype=dtype)
        if dtype.kind in "bU":
            _check_contents(arr)
        return arr[0]

    def tensor(self, depth: int) -> Any:
        torch = _torch()
        if torch is None:
            import torch as imported

            torch = imported
        name = self.text(_U8)
        dtype = _TENSOR_DTYPES.get(name)
        if dtype is None:
            raise ProtocolError(f"bad tensor dtype {name[:20]!r}")
        device = self.text(_U8)
        if device != "cpu" and not _DEVICE_RE.match(device):
            raise ProtocolError(f"bad tensor device {device[:20]!r}")
        flags = self.unpack(_U8)
        shape, count = self.shape()
        tensor = torch.from_numpy(self.raw_array(dtype, shape, count))
        if name == "bfloat16":
            tensor = tensor.view(torch.bfloat16)
        if device != "cpu":
            if not torch.cuda.is_available():
                raise ProtocolError(f"a tensor on {device} arrived but CUDA is not available "
                                    "here")
            tensor = tensor.to(device)
            self.copied = True
        if flags & 1 and (tensor.is_floating_point() or tensor.is_complex()):
            tensor.requires_grad_(True)
        self.memo.append(tensor)
        return tensor


def _check_contents(arr: np.ndarray) -> None:
    """Bytes a bool or a str array may not hold (a bool byte of 2 compares unpredictably)."""
    if arr.size == 0:
        return
    flat = arr.reshape(-1)
    if arr.dtype.kind == "b" and flat.view(np.uint8).max() > 1:
        raise ProtocolError("a bool array holds bytes other than 0 and 1")
    if arr.dtype.kind == "U":
        codes = flat.view(arr.dtype.byteorder.replace("=", "<").replace("|", "<") + "u4")
        if int(codes.max()) > 0x10FFFF or int(((codes >= 0xD800) & (codes <= 0xDFFF)).sum()):
            raise ProtocolError("a str array holds invalid code points")


_DECODERS = {
    T_NONE[0]: _Decoder.none, T_TRUE[0]: _Decoder.true, T_FALSE[0]: _Decoder.false,
    T_INT[0]: _Decoder.int64, T_BIGINT[0]: _Decoder.bigint, T_FLOAT[0]: _Decoder.float64,
    T_COMPLEX[0]: _Decoder.complex128, T_STR[0]: _Decoder.string, T_BYTES[0]: _Decoder.raw_bytes,
    T_LIST[0]: _Decoder.list_, T_TUPLE[0]: _Decoder.tuple_, T_DICT[0]: _Decoder.dict_,
    T_ARRAY[0]: _Decoder.array, T_SCALAR[0]: _Decoder.scalar, T_TENSOR[0]: _Decoder.tensor,
    T_HANDLE[0]: _Decoder.handle, T_FUNCTION[0]: _Decoder.function, T_ARGREF[0]: _Decoder.argref,
    T_REF[0]: _Decoder.reference,
}


def decode(buf: bytes | bytearray | memoryview, *, handles: HandleTable | None = None,
           max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS,
           report: dict | None = None) -> Any:
    """The value a message holds; raises ``ProtocolError`` for anything malformed.

    Arrays and tensors share memory with ``buf`` when it is a ``bytearray``;
    ``report["in_place"]`` says whether every one of them does (an unaligned array is copied,
    a CUDA tensor moved)."""
    if not isinstance(buf, bytearray):  # a bytearray (or a channel's Payload) is used in place
        buf = bytearray(buf)
    if len(buf) > MAX_BYTES + (1 << 20):
        raise ProtocolError(f"the message is larger than {_mib(MAX_BYTES)}")
    decoder = _Decoder(buf, handles, max_depth, max_items)
    try:
        value = decoder.value(0)
    except ProtocolError:
        raise
    except (ValueError, TypeError, OverflowError, MemoryError, RuntimeError) as exc:
        raise ProtocolError(f"malformed message: {type(exc).__name__}: {exc}") from None
    if decoder.pos != len(buf):
        raise ProtocolError("trailing bytes after the message")
    if report is not None:
        report["in_place"] = not decoder.copied
    return value
