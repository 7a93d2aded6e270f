"""A weights-only unpickler: the rule of ``torch.load(weights_only=True)``, without torch.

PyTorch files are pickles.  Unpickling runs whatever callables a file names, so a pickle can never be trusted;
``torch.load(weights_only=True)`` therefore interprets the pickle opcodes itself and allows only tensor-rebuilding
functions, ``collections.OrderedDict`` and plain containers (see ``torch/_weights_only_unpickler.py``).  This module
follows the same rule with the same opcode set, and never imports or calls anything the file names: an allowed
global becomes a small marker object, and "calling" it builds a description of a tensor (:class:`TensorRef`)
or a plain Python container.  Every other global, and every opcode outside the set, is refused with one clear
message.  The result is a tree of dicts, lists, tuples, numbers, strings and :class:`TensorRef` leaves.

Storage (persistent-id) records are turned into :class:`StorageRef` by the caller's ``persistent_load``.
"""

from __future__ import annotations

import math
import struct
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.errors import NetworkFormatError
from margintheory.network_io._tensors import BFLOAT16

#: ``torch.<X>Storage`` (legacy typed storages named by persistent ids) and the element type they hold.
STORAGE_DTYPES: dict[str, np.dtype | str] = {
    "torch.DoubleStorage": np.dtype("<f8"), "torch.FloatStorage": np.dtype("<f4"),
    "torch.HalfStorage": np.dtype("<f2"), "torch.BFloat16Storage": BFLOAT16,
    "torch.LongStorage": np.dtype("<i8"), "torch.IntStorage": np.dtype("<i4"), "torch.ShortStorage": np.dtype("<i2"),
    "torch.CharStorage": np.dtype("i1"), "torch.ByteStorage": np.dtype("u1"), "torch.BoolStorage": np.dtype("?"),
    "torch.ComplexDoubleStorage": np.dtype("<c16"), "torch.ComplexFloatStorage": np.dtype("<c8"),
    "torch.storage.UntypedStorage": np.dtype("u1"),
}
#: ``torch.<dtype>`` globals (``_rebuild_tensor_v3`` names the dtype explicitly).
DTYPE_GLOBALS: dict[str, np.dtype | str] = {
    "torch.float64": np.dtype("<f8"), "torch.float32": np.dtype("<f4"), "torch.float16": np.dtype("<f2"),
    "torch.bfloat16": BFLOAT16, "torch.int64": np.dtype("<i8"), "torch.int32": np.dtype("<i4"),
    "torch.int16": np.dtype("<i2"), "torch.int8": np.dtype("i1"), "torch.uint8": np.dtype("u1"),
    "torch.bool": np.dtype("?"), "torch.complex64": np.dtype("<c8"), "torch.complex128": np.dtype("<c16"),
}
#: Globals that torch's weights-only loader allows but that describe tensors this reader does not rebuild.
UNSUPPORTED_TENSORS = {
    "torch._utils._rebuild_qtensor": "a quantized tensor",
    "torch._utils._rebuild_sparse_tensor": "a sparse tensor",
    "torch._utils._rebuild_nested_tensor": "a nested tensor",
    "torch._utils._rebuild_meta_tensor_no_storage": "a meta tensor (no data)",
    "torch._utils._rebuild_wrapper_subclass": "a tensor subclass",
    "torch._utils._rebuild_device_tensor_from_numpy": "a device tensor",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": "a device tensor",
    "torch.serialization._get_layout": "a tensor with a non-strided layout",
}


@dataclass(frozen=True)
class Global:
    """An allowed global, as a marker (the named object is never imported)."""

    path: str


@dataclass(frozen=True)
class StorageRef:
    """A storage record: ``numel`` elements of ``dtype`` stored under ``key``."""

    key: str
    dtype: np.dtype | str
    numel: int


@dataclass(frozen=True)
class TensorRef:
    """A dense tensor: a strided view (element offset, shape, strides) into a storage."""

    storage: StorageRef
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: np.dtype | str

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _ints(x: Any, what: str) -> tuple[int, ...]:
    if not isinstance(x, (tuple, list)) or not all(type(v) is int and v >= 0 for v in x):
        raise NetworkFormatError(f"tensor {what} must be a tuple of non-negative integers, got {x!r}"[:200])
    return tuple(x)


def rebuild_tensor(storage: Any, offset: Any, size: Any, stride: Any, *rest: Any, dtype: Any = None) -> TensorRef:
    """``torch._utils._rebuild_tensor[_v2|_v3]``: validate the view against its storage (no data is touched)."""
    if not isinstance(storage, StorageRef):
        raise NetworkFormatError("a tensor is rebuilt from something that is not a storage record")
    if type(offset) is not int or offset < 0:
        raise NetworkFormatError(f"tensor storage offset must be a non-negative integer, got {offset!r}")
    shape, strides = _ints(size, "size"), _ints(stride, "stride")
    if len(shape) != len(strides):
        raise NetworkFormatError(f"tensor size {shape} and stride {strides} have different lengths")
    if len(rest) > 2 and rest[2]:  # metadata: conj / neg bits change the values
        raise NetworkFormatError(f"tensor with metadata {rest[2]!r} (conjugate / negative views) is not supported")
    numel = math.prod(shape)
    extent = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1 if numel else 0
    if extent > storage.numel:
        raise NetworkFormatError(f"tensor view (offset {offset}, size {shape}, stride {strides}) reaches element "
                                 f"{extent} of a storage of {storage.numel} elements")
    return TensorRef(storage, offset, shape, strides, storage.dtype if dtype is None else dtype)


def _rebuild_v3(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any, hooks: Any, dtype: Any,
                metadata: Any = None) -> TensorRef:
    if not isinstance(dtype, Global) or dtype.path not in DTYPE_GLOBALS:
        raise NetworkFormatError(f"unsupported tensor dtype {dtype!r}")
    if not isinstance(storage, StorageRef) or DTYPE_GLOBALS[dtype.path] != storage.dtype:
        raise NetworkFormatError(f"tensor of dtype {dtype.path} rebuilt from a storage of another type: not supported")
    return rebuild_tensor(storage, offset, size, stride, requires_grad, hooks, metadata)


def _parameter(data: Any, *rest: Any) -> Any:
    if not isinstance(data, TensorRef):
        raise NetworkFormatError("a Parameter is rebuilt from something that is not a tensor")
    return data


def _from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    if not isinstance(new_type, Global) or new_type.path not in ("torch.Tensor", "torch.nn.parameter.Parameter"):
        raise NetworkFormatError(f"tensor subclass {getattr(new_type, 'path', new_type)!r} is not supported")
    return _call(func, args)


def _encode(text: Any, encoding: Any = "latin1") -> bytes:
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise NetworkFormatError("_codecs.encode is allowed only as pickle's latin1 encoding of bytes")
    return text.encode("latin1")


def _bytearray(*args: Any) -> bytearray:
    if len(args) > 1 or (args and not isinstance(args[0], (bytes, list))):
        raise NetworkFormatError("bytearray is allowed only from bytes")  # bytearray(n) would allocate n bytes
    return bytearray(*args)


def _container(kind: type) -> Callable[..., Any]:
    def build(*args: Any) -> Any:
        if len(args) > 1:
            raise NetworkFormatError(f"{kind.__name__} called with {len(args)} arguments")
        return kind(*args)

    return build


def _complex(*args: Any) -> complex:
    if len(args) > 2 or not all(type(a) in (int, float) for a in args):
        raise NetworkFormatError("complex is allowed only from numbers")
    return complex(*args)


CALLABLES: dict[str, Callable[..., Any]] = {
    "collections.OrderedDict": _container(OrderedDict),
    "collections.Counter": _container(Counter),
    "builtins.set": _container(set),
    "builtins.bytearray": _bytearray,
    "builtins.complex": _complex,
    "_codecs.encode": _encode,
    "torch.Size": lambda *a: tuple(_ints(a[0] if a else (), "size")),
    "torch.device": lambda *a: ":".join(str(x) for x in a),
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor,
    "torch._utils._rebuild_tensor_v3": _rebuild_v3,
    "torch._utils._rebuild_parameter": _parameter,
    "torch._utils._rebuild_parameter_with_state": _parameter,
    "torch._tensor._rebuild_from_type_v2": _from_type_v2,
    "torch.nn.parameter.Parameter": _parameter,
}
MARKERS = set(STORAGE_DTYPES) | set(DTYPE_GLOBALS) | {"torch.Tensor"}


def _call(func: Any, args: Any) -> Any:
    if not isinstance(func, Global) or func.path not in CALLABLES:
        raise NetworkFormatError(f"refusing to call {getattr(func, 'path', type(func).__name__)} "
                                 "(only tensor-rebuilding functions and plain containers may be called)")
    if not isinstance(args, tuple):
        raise NetworkFormatError("malformed pickle: call arguments are not a tuple")
    return CALLABLES[func.path](*args)


class Reader:
    """Bounded reads from a file object: at most ``limit`` bytes in all, short reads reported as truncation."""

    def __init__(self, fh: Any, limit: int, what: str, file_end: bool = True) -> None:
        self.fh, self.remaining, self.what, self.file_end = fh, limit, what, file_end

    def read(self, n: int) -> bytes:
        if n > self.remaining:
            if self.file_end:
                raise NetworkFormatError(f"{self.what} is truncated (a pickle record of {n} bytes runs past its end)")
            raise NetworkFormatError(f"{self.what}: the pickled structure exceeds the size limit for it")
        data = self.fh.read(n)
        if len(data) != n:
            raise NetworkFormatError(f"{self.what} is truncated (pickle stream ends early)")
        self.remaining -= n
        return data

    def readline(self) -> bytes:
        line = self.fh.readline(min(self.remaining, 512))
        self.remaining -= len(line)
        if not line.endswith(b"\n"):
            raise NetworkFormatError(f"{self.what}: malformed pickle (unterminated GLOBAL name)")
        return line


def load(reader: Reader, persistent_load: Callable[[Any], Any]) -> Any:
    """Interpret one pickle from ``reader`` under the weights-only rule; returns the reconstructed tree."""
    try:
        return _Machine(reader, persistent_load).run()
    except NetworkFormatError as exc:
        raise NetworkFormatError(f"{reader.what}: {exc}" if not str(exc).startswith(reader.what) else str(exc)) \
            from None
    except (IndexError, KeyError, TypeError, ValueError, AttributeError, struct.error, RecursionError) as exc:
        raise NetworkFormatError(f"{reader.what}: malformed pickle ({type(exc).__name__})") from None


class _Machine:
    def __init__(self, reader: Reader, persistent_load: Callable[[Any], Any]) -> None:
        self.read, self.readline = reader.read, reader.readline
        self.persistent_load = persistent_load
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.memo: dict[int, Any] = {}

    def pop_mark(self) -> list[Any]:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def run(self) -> Any:  # noqa: C901 - one branch per opcode, as in pickle.py
        read, stack = self.read, None
        while True:
            stack = self.stack
            op = read(1)[0]
            if op == 0x80:  # PROTO
                proto = read(1)[0]
                if proto > 5:
                    raise NetworkFormatError(f"unknown pickle protocol {proto}")
            elif op == 0x2E:  # STOP
                return stack.pop()
            elif op == 0x63:  # GLOBAL
                module = self.readline()[:-1].decode("utf-8")
                name = self.readline()[:-1].decode("utf-8")
                stack.append(_global(f"{module}.{name}"))
            elif op == 0x81:  # NEWOBJ
                args = stack.pop()
                cls = stack.pop()
                stack.append(_call(cls, args))
            elif op == 0x52:  # REDUCE
                args = stack.pop()
                stack[-1] = _call(stack[-1], args)
            elif op == 0x62:  # BUILD
                state = stack.pop()
                inst = stack[-1]
                if type(inst) is OrderedDict:
                    if not isinstance(state, dict):
                        raise NetworkFormatError("malformed pickle: OrderedDict state is not a dict")
                    # state holds attributes such as ``_metadata`` (module versions): not needed, not kept
                elif not isinstance(inst, TensorRef):
                    raise NetworkFormatError(f"refusing to set the state of a {type(inst).__name__}")
            elif op == 0x61:  # APPEND
                item = stack.pop()
                _as(stack[-1], list, "append to").append(item)
            elif op == 0x65:  # APPENDS
                items = self.pop_mark()
                _as(self.stack[-1], list, "extend").extend(items)
            elif op == 0x73:  # SETITEM
                value, key = stack.pop(), stack.pop()
                _as(stack[-1], dict, "set an item of")[key] = value
            elif op == 0x75:  # SETITEMS
                items = self.pop_mark()
                target = _as(self.stack[-1], dict, "set items of")
                if len(items) % 2:
                    raise NetworkFormatError("malformed pickle: odd number of items in SETITEMS")
                for i in range(0, len(items), 2):
                    target[items[i]] = items[i + 1]
            elif op == 0x28:  # MARK
                self.metastack.append(stack)
                self.stack = []
            elif op == 0x74:  # TUPLE
                items = self.pop_mark()
                self.stack.append(tuple(items))
            elif op == 0x85:  # TUPLE1
                stack[-1] = (stack[-1],)
            elif op == 0x86:  # TUPLE2
                stack[-2:] = [(stack[-2], stack[-1])]
            elif op == 0x87:  # TUPLE3
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif op == 0x4E:  # NONE
                stack.append(None)
            elif op == 0x89:  # NEWFALSE
                stack.append(False)
            elif op == 0x88:  # NEWTRUE
                stack.append(True)
            elif op == 0x29:  # EMPTY_TUPLE
                stack.append(())
            elif op == 0x5D:  # EMPTY_LIST
                stack.append([])
            elif op == 0x7D:  # EMPTY_DICT
                stack.append({})
            elif op == 0x8F:  # EMPTY_SET
                stack.append(set())
            elif op == 0x4A:  # BININT
                stack.append(struct.unpack("<i", read(4))[0])
            elif op == 0x4B:  # BININT1
                stack.append(read(1)[0])
            elif op == 0x4D:  # BININT2
                stack.append(struct.unpack("<H", read(2))[0])
            elif op == 0x47:  # BINFLOAT
                stack.append(struct.unpack(">d", read(8))[0])
            elif op == 0x58:  # BINUNICODE
                n = struct.unpack("<I", read(4))[0]
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == 0x55:  # SHORT_BINSTRING
                stack.append(read(read(1)[0]))
            elif op == 0x51:  # BINPERSID
                stack.append(self.persistent_load(stack.pop()))
            elif op == 0x68:  # BINGET
                stack.append(self.memo[read(1)[0]])
            elif op == 0x6A:  # LONG_BINGET
                stack.append(self.memo[struct.unpack("<I", read(4))[0]])
            elif op == 0x71:  # BINPUT
                self.memo[read(1)[0]] = stack[-1]
            elif op == 0x72:  # LONG_BINPUT
                self.memo[struct.unpack("<I", read(4))[0]] = stack[-1]
            elif op == 0x8A:  # LONG1
                n = read(1)[0]
                stack.append(int.from_bytes(read(n), "little", signed=True))
            else:
                raise NetworkFormatError(f"pickle opcode {bytes([op])!r} is not allowed in a weights-only file")


def _global(path: str) -> Global:
    if path in CALLABLES or path in MARKERS:
        return Global(path)
    if path in UNSUPPORTED_TENSORS:
        raise NetworkFormatError(f"holds {UNSUPPORTED_TENSORS[path]} ({path}); only dense tensors are supported")
    raise NetworkFormatError(
        f"refusing to load: the pickle names {path}, which is not a tensor-rebuilding function or a plain container "
        "(the weights-only rule of torch.load(weights_only=True); nothing it names is imported or run)"
    )


def _as(obj: Any, kind: type, action: str) -> Any:
    if type(obj) not in ((list,) if kind is list else (dict, OrderedDict, Counter)):
        raise NetworkFormatError(f"malformed pickle: cannot {action} a {type(obj).__name__}")
    return obj
