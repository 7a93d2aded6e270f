"""A weights-only unpickler: the rule of ``torch.load(weights_only=True)``, without torch.

PyTorch files are pickles.  Unpickling runs whatever callables a file names, so a pickle can never be trusted;
``torch.load(weights_only=True)`` therefore interprets the pickle opcodes itself and allows only tensor-rebuilding
functions, ``collections.OrderedDict`` and plain containers (see ``torch/_weights_only_unpickler.py``).  This module
follows the same rule with the same opcode set, and never imports or calls anything the file names: an allowed
global becomes a small marker object, and "calling" it builds a description of a tensor (:class:`TensorRef`)
or a plain Python container.  Every other global, and every opcode outside the set, is refused with one clear
message.  The result is a tree of dicts, lists, tuples, numbers, strings and :class:`TensorRef` leaves.

Storage (persistent-id) records are turned into :class:`StorageRef` by the caller's ``persistent_load``.

**The reader bounds its own work** (:class:`Limits`; the numbers are stated in docs/network-files.md), so that
a small hostile pickle can neither hang the process nor crash it:

* every opcode counts against ``Limits.objects`` (one per 512 bytes of the memory budget), and the time budget is
  checked as the pickle runs;
* every container records its *size* -- its nodes when shared (memoized) objects are counted at each use, which is
  what any later walk of the tree visits -- and its *height*; a container larger than ``Limits.objects`` or nested
  deeper than :data:`MAX_DEPTH` levels is refused as it is built (``L_i = (L_{i-1}, L_{i-1})`` is a 2^60-node tree
  in 400 bytes: refused after ~22 levels);
* a container is *sealed* once it is placed in another one (or in a call's arguments): changing it afterwards, which
  ``pickle`` never writes except for a cycle, is refused, so the recorded sizes stay exact;
* only strings, numbers, bytes, ``None`` and flat tuples of them are hashed (dict keys, set and Counter elements):
  hashing a tuple nested 10^6 deep recurses in C without a guard and crashes CPython;
* messages show untrusted values through :func:`show` (``reprlib``, a few items and characters), never ``str(x)``.
"""

from __future__ import annotations

import math
import reprlib
import struct
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.errors import NetworkFormatError, RefusedError
from margintheory.network_io._tensors import BFLOAT16
from margintheory.runtime.budget import format_seconds

#: containers nested deeper than this are refused (as the pickle runs, and again by the tree walk)
MAX_DEPTH = 64
#: a container's height as the machine builds it: the tree's 64 levels, plus the argument tuple and the (key, value)
#: pair of a call that builds a container from pairs
_HEIGHT_LIMIT = MAX_DEPTH + 3
#: tensor dimensions (numpy's limit); sizes, strides and offsets are int64 in torch
MAX_DIMS = 64
#: memory-budget bytes per pickle operation / tree node allowed (about 4 Mi at the default 2 GiB budget)
BYTES_PER_OBJECT = 512
#: memory-budget bytes per character of the tree's dotted names (every node's, as ``TensorFile.flat`` builds them;
#: 32 Mi characters at the default budget)
BYTES_PER_NAME_CHAR = 64
#: the tree, shared objects counted at each use, may have at most this many nodes per pickle byte read so far, plus
#: :data:`TREE_SLACK`: sharing cannot make a small pickle an expensive tree (a 400-byte memo bomb stays tiny)
TREE_NODES_PER_BYTE = 16
TREE_SLACK = 1 << 16
_CONTAINER_TYPES = frozenset({list, tuple, dict, set, OrderedDict, Counter})


@dataclass(frozen=True)
class Limits:
    """The work one PyTorch file may cause: ``objects`` pickle operations (and tree nodes, shared objects counted at
    each use), ``name_chars`` characters of dotted names, and a ``deadline`` (``time.monotonic()``) from the time
    budget ``seconds``."""

    objects: int
    name_chars: int
    deadline: float | None = None
    seconds: float | None = None

    @classmethod
    def for_budget(cls, max_memory: int, max_seconds: float | None = None) -> Limits:
        n = max(1 << 16, max_memory // BYTES_PER_OBJECT)
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        return cls(n, max(1 << 20, max_memory // BYTES_PER_NAME_CHAR), deadline, max_seconds)

    def check_time(self, what: str) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            assert self.seconds is not None
            raise RefusedError(f"{what}: reading the file takes longer than the time budget max_seconds = "
                               f"{format_seconds(self.seconds)}", parameter="max_seconds", limit=self.seconds)

    def too_many(self, what: str) -> NetworkFormatError:
        return NetworkFormatError(
            f"{what} the limit of {self.objects} for this memory budget (one per {BYTES_PER_OBJECT} bytes; shared "
            "objects count at each use)", parameter="max_memory")


class _Short(reprlib.Repr):
    """``reprlib`` with small limits; mappings, sets and unknown objects by type and size only (no sorting, no
    ``repr`` of objects this module did not make)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxtuple, self.maxlist, self.maxstring, self.maxlong, self.maxother = 3, 4, 4, 40, 40, 40

    def repr_bytes(self, x: bytes, level: int) -> str:
        return repr(x[:self.maxstring]) + ("..." if len(x) > self.maxstring else "")

    def repr_Global(self, x: Global, level: int) -> str:
        return self.repr_str(x.path, level)

    def repr_instance(self, x: Any, level: int) -> str:
        size = f" of {len(x)}" if isinstance(x, (Mapping, set, frozenset, bytearray)) else ""
        return f"<{type(x).__name__}{size}>"

    repr_dict = repr_set = repr_frozenset = repr_instance


_SHORT = _Short()


def show(x: Any) -> str:
    """A short, bounded-time rendering of an untrusted value for a message (``reprlib``: a few items, levels and
    characters)."""
    return _SHORT.repr(x)


def check_key(x: Any, what: str) -> None:
    """Refuse to hash anything but strings, numbers, bytes, ``None``, dtype-like markers and flat tuples of them:
    hashing is then linear in the key's length (a tuple nested 10^6 deep would recurse in C and crash CPython)."""
    t = type(x)
    if t in _KEY_TYPES or (t is tuple and all(type(v) in _KEY_TYPES for v in x)):
        return
    kind = "nested tuple" if t is tuple else t.__name__
    raise NetworkFormatError(f"refusing a {kind} as {what}: only strings, numbers, bytes, None and flat tuples of "
                             "them are hashed")

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


#: what is hashed (dict keys, set and Counter elements), alone or in flat tuples: hashing each takes time linear in
#: its size (a Global marker hashes its path)
_KEY_TYPES = frozenset({str, int, float, complex, bool, bytes, type(None), Global})


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
    if (type(x) not in (tuple, list) or len(x) > MAX_DIMS
            or not all(type(v) is int and 0 <= v < 2**63 for v in x)):
        raise NetworkFormatError(f"tensor {what} must be a tuple of at most {MAX_DIMS} integers in [0, 2^63), "
                                 f"got {show(x)}")
    return tuple(x)


def rebuild_tensor(storage: Any, offset: Any, size: Any, stride: Any, *rest: Any, dtype: Any = None) -> TensorRef:
    """``torch._utils._rebuild_tensor[_v2|_v3]``: validate the view against its storage (no data is touched)."""
    if not isinstance(storage, StorageRef):
        raise NetworkFormatError("a tensor is rebuilt from something that is not a storage record")
    if type(offset) is not int or not 0 <= offset < 2**63:
        raise NetworkFormatError(f"tensor storage offset must be an integer in [0, 2^63), got {show(offset)}")
    shape, strides = _ints(size, "size"), _ints(stride, "stride")
    if len(shape) != len(strides):
        raise NetworkFormatError(f"tensor size {shape} and stride {strides} have different lengths")
    if len(rest) > 2 and rest[2]:  # metadata: conj / neg bits change the values
        raise NetworkFormatError(f"tensor with metadata {show(rest[2])} (conjugate / negative views) is not "
                                 "supported")
    numel = math.prod(shape)
    extent = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) + 1 if numel else 0
    if extent > storage.numel:
        raise NetworkFormatError(f"tensor view (offset {offset}, size {shape}, stride {strides}) reaches element "
                                 f"{extent} of a storage of {storage.numel} elements")
    return TensorRef(storage, offset, shape, strides, storage.dtype if dtype is None else dtype)


def _rebuild_v3(storage: Any, offset: Any, size: Any, stride: Any, requires_grad: Any, hooks: Any, dtype: Any,
                metadata: Any = None) -> TensorRef:
    if not isinstance(dtype, Global) or dtype.path not in DTYPE_GLOBALS:
        raise NetworkFormatError(f"unsupported tensor dtype {show(dtype)}")
    if not isinstance(storage, StorageRef) or DTYPE_GLOBALS[dtype.path] != storage.dtype:
        raise NetworkFormatError(f"tensor of dtype {dtype.path} rebuilt from a storage of another type: not supported")
    return rebuild_tensor(storage, offset, size, stride, requires_grad, hooks, metadata)


def _parameter(data: Any, *rest: Any) -> Any:
    if not isinstance(data, TensorRef):
        raise NetworkFormatError("a Parameter is rebuilt from something that is not a tensor")
    return data


def _from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    if not isinstance(new_type, Global) or new_type.path not in ("torch.Tensor", "torch.nn.parameter.Parameter"):
        raise NetworkFormatError(f"tensor subclass {show(new_type)} is not supported")
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
        if args:
            _check_items(kind, args[0])
        return kind(*args)

    return build


def _check_items(kind: type, arg: Any) -> None:
    """What ``set`` / ``Counter`` / ``OrderedDict`` would hash is checked by :func:`check_key` first."""
    what = f"{kind.__name__} key" if kind is not set else "set element"
    if isinstance(arg, Mapping):
        items: Iterable[Any] = arg.keys()
    elif type(arg) in (list, tuple):
        items = arg
        if kind is OrderedDict:
            if not all(type(pair) in (list, tuple) and len(pair) == 2 for pair in arg):
                raise NetworkFormatError("OrderedDict is allowed only from (key, value) pairs")
            items = [pair[0] for pair in arg]
    elif type(arg) in (str, bytes) and kind is not OrderedDict:
        return  # characters / byte values
    else:
        raise NetworkFormatError(f"{kind.__name__} built from a {type(arg).__name__}")
    for x in items:
        check_key(x, what)


def _device(*args: Any) -> str:
    if not 1 <= len(args) <= 2 or not all(type(a) in (str, int) for a in args):
        raise NetworkFormatError("torch.device is allowed only from a device type and an index")
    return ":".join(str(a) for a in args)


def _size(*args: Any) -> tuple[int, ...]:
    if len(args) > 1:
        raise NetworkFormatError(f"torch.Size called with {len(args)} arguments")
    return _ints(args[0] if args else (), "size")


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
    "torch.Size": _size,
    "torch.device": _device,
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
        name = func.path if isinstance(func, Global) else type(func).__name__
        raise NetworkFormatError(f"refusing to call {name} "
                                 "(only tensor-rebuilding functions and plain containers may be called)")
    if not isinstance(args, tuple):
        raise NetworkFormatError("malformed pickle: call arguments are not a tuple")
    return CALLABLES[func.path](*args)


class Reader:
    """Reads from a pickle held in memory (at most the pickle size limit); running past its end is reported as
    truncation (``file_end``) or as exceeding the size limit."""

    def __init__(self, data: bytes | bytearray, what: str, file_end: bool = True) -> None:
        self.data, self.pos, self.what, self.file_end = bytes(data), 0, what, file_end

    def _past_end(self, n: int) -> NetworkFormatError:
        if self.file_end:
            return NetworkFormatError(f"{self.what} is truncated (a pickle record of {n} bytes runs past its end)")
        return NetworkFormatError(f"{self.what}: the pickled structure exceeds the size limit for it")

    def read(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise self._past_end(n)
        data = self.data[self.pos:end]
        self.pos = end
        return data

    def byte(self) -> int:
        pos = self.pos
        if pos >= len(self.data):
            raise self._past_end(1)
        self.pos = pos + 1
        return self.data[pos]

    def readline(self) -> bytes:
        end = self.data.find(b"\n", self.pos, self.pos + 512)
        if end < 0:
            if len(self.data) - self.pos < 512 and not self.file_end:
                raise self._past_end(512)
            raise NetworkFormatError(f"{self.what}: malformed pickle (unterminated GLOBAL name)")
        line = self.data[self.pos:end + 1]
        self.pos = end + 1
        return line


def load(reader: Reader, persistent_load: Callable[[Any], Any], limits: Limits) -> Any:
    """Interpret one pickle from ``reader`` under the weights-only rule and ``limits``; returns the tree."""
    try:
        return _Machine(reader, persistent_load, limits).run()
    except NetworkFormatError as exc:
        text = str(exc)
        raise NetworkFormatError(text if text.startswith(reader.what) else f"{reader.what}: {text}",
                                 parameter=exc.parameter) from None
    except (IndexError, KeyError, TypeError, ValueError, AttributeError, struct.error, RecursionError) as exc:
        raise NetworkFormatError(f"{reader.what}: malformed pickle ({type(exc).__name__})") from None


class _Node:
    """What the machine knows of a container it made: its size (nodes, shared objects counted at each use), its
    height (levels of containers) and whether it was placed in another container (``sealed``)."""

    __slots__ = ("obj", "size", "height", "sealed")

    def __init__(self, obj: Any, size: int, height: int) -> None:
        self.obj, self.size, self.height, self.sealed = obj, size, height, False  # obj: keeps id(obj) unique


class _Machine:
    def __init__(self, reader: Reader, persistent_load: Callable[[Any], Any], limits: Limits) -> None:
        self.reader, self.read, self.readline, self.what = reader, reader.read, reader.readline, reader.what
        self.persistent_load = persistent_load
        self.limits = limits
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.memo: dict[int, Any] = {}
        self.nodes: dict[int, _Node] = {}

    def check_steps(self, steps: int) -> None:
        """Every operation creates at most one object or slot: their number and the time are checked as it runs."""
        if steps > self.limits.objects:
            raise self.limits.too_many("the pickle runs more operations than")
        self.limits.check_time(self.what)

    def made(self, obj: Any, children: Iterable[Any] = ()) -> Any:
        """Record a container made from ``children`` (sealing those that are containers); returns ``obj``."""
        size, height = 1, 1
        for child in children:
            node = self.nodes.get(id(child))
            if node is None:
                size += 1
            else:
                node.sealed = True
                size += node.size
                height = max(height, node.height + 1)
        self._check(size, height)
        self.nodes[id(obj)] = _Node(obj, size, height)
        return obj

    def called(self, func: Any, args: Any) -> Any:
        result = _call(func, args)
        if type(result) not in _CONTAINER_TYPES:
            return result
        children = [*result.keys(), *result.values()] if isinstance(result, Mapping) else result
        return self.made(result, children)

    def grow(self, target: Any, kind: type, action: str, items: Iterable[Any]) -> Any:
        """``target`` (a list, or a dict for (key, value) ``items``) about to receive ``items``: checked, counted."""
        _as(target, kind, action)
        node = self.nodes[id(target)]
        if node.sealed:
            raise NetworkFormatError("malformed pickle: a container is changed after it was placed in another (a "
                                     "cycle, or a shared object changed after use)")
        for item in items:
            if item is target:
                raise NetworkFormatError("the pickled object contains a cycle")
            child = self.nodes.get(id(item))
            if child is None:
                node.size += 1
            else:
                child.sealed = True
                node.size += child.size
                node.height = max(node.height, child.height + 1)
        self._check(node.size, node.height)
        return target

    def _check(self, size: int, height: int) -> None:
        if height > _HEIGHT_LIMIT:
            raise NetworkFormatError(f"objects nested deeper than {MAX_DEPTH} levels")
        if size > self.limits.objects:
            raise self.limits.too_many("the pickled object has more parts than")
        if size > TREE_SLACK + TREE_NODES_PER_BYTE * self.reader.pos:
            raise NetworkFormatError(
                f"the pickled object reuses shared objects so often that its tree has {size} parts after "
                f"{self.reader.pos} bytes (at most {TREE_NODES_PER_BYTE} per byte, plus {TREE_SLACK}, are accepted)")

    def set_items(self, items: list[Any]) -> None:
        if len(items) % 2:
            raise NetworkFormatError("malformed pickle: odd number of items in SETITEMS")
        target = self.grow(self.stack[-1], dict, "set items of", items)
        for i in range(0, len(items), 2):
            check_key(items[i], "dict key")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def pop_mark(self) -> list[Any]:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def run(self) -> Any:  # noqa: C901 - one branch per opcode, as in pickle.py (frequent ones first)
        byte, read, stack, steps = self.reader.byte, self.read, None, 0
        while True:
            stack = self.stack
            op = byte()
            steps += 1
            if not steps & 4095:
                self.check_steps(steps)
            if op == 0x71:  # BINPUT
                self.memo[byte()] = stack[-1]
            elif op == 0x68:  # BINGET
                stack.append(self.memo[byte()])
            elif op == 0x4B:  # BININT1
                stack.append(byte())
            elif op == 0x58:  # BINUNICODE
                n = struct.unpack("<I", read(4))[0]
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif op == 0x28:  # MARK
                self.metastack.append(stack)
                self.stack = []
            elif op == 0x72:  # LONG_BINPUT
                self.memo[struct.unpack("<I", read(4))[0]] = stack[-1]
            elif op == 0x6A:  # LONG_BINGET
                stack.append(self.memo[struct.unpack("<I", read(4))[0]])
            elif op == 0x74:  # TUPLE
                items = self.pop_mark()
                self.stack.append(self.made(tuple(items), items))
            elif op == 0x52:  # REDUCE
                args = stack.pop()
                stack[-1] = self.called(stack[-1], args)
            elif op == 0x85:  # TUPLE1
                stack[-1] = self.made((stack[-1],), stack[-1:])
            elif op == 0x86:  # TUPLE2
                stack[-2:] = [self.made((stack[-2], stack[-1]), stack[-2:])]
            elif op == 0x87:  # TUPLE3
                stack[-3:] = [self.made((stack[-3], stack[-2], stack[-1]), stack[-3:])]
            elif op == 0x4A:  # BININT
                stack.append(struct.unpack("<i", read(4))[0])
            elif op == 0x4D:  # BININT2
                stack.append(struct.unpack("<H", read(2))[0])
            elif op == 0x89:  # NEWFALSE
                stack.append(False)
            elif op == 0x88:  # NEWTRUE
                stack.append(True)
            elif op == 0x4E:  # NONE
                stack.append(None)
            elif op == 0x29:  # EMPTY_TUPLE
                stack.append(self.made(()))
            elif op == 0x7D:  # EMPTY_DICT
                stack.append(self.made({}))
            elif op == 0x5D:  # EMPTY_LIST
                stack.append(self.made([]))
            elif op == 0x8F:  # EMPTY_SET
                stack.append(self.made(set()))
            elif op == 0x75:  # SETITEMS
                self.set_items(self.pop_mark())
            elif op == 0x73:  # SETITEM
                value, key = stack.pop(), stack.pop()
                self.set_items([key, value])
            elif op == 0x65:  # APPENDS
                items = self.pop_mark()
                self.grow(self.stack[-1], list, "extend", items).extend(items)
            elif op == 0x61:  # APPEND
                item = stack.pop()
                self.grow(stack[-1], list, "append to", (item,)).append(item)
            elif op == 0x51:  # BINPERSID
                stack.append(self.persistent_load(stack.pop()))
            elif op == 0x63:  # GLOBAL
                module = self.readline()[:-1].decode("utf-8")
                name = self.readline()[:-1].decode("utf-8")
                stack.append(_global(f"{module}.{name}"))
            elif op == 0x62:  # BUILD
                state = stack.pop()
                inst = stack[-1]
                if type(inst) is OrderedDict:
                    if not isinstance(state, dict):
                        raise NetworkFormatError("malformed pickle: OrderedDict state is not a dict")
                    # state holds attributes such as ``_metadata`` (module versions): not needed, not kept
                elif not isinstance(inst, TensorRef):
                    raise NetworkFormatError(f"refusing to set the state of a {type(inst).__name__}")
            elif op == 0x81:  # NEWOBJ
                args = stack.pop()
                cls = stack.pop()
                stack.append(self.called(cls, args))
            elif op == 0x47:  # BINFLOAT
                stack.append(struct.unpack(">d", read(8))[0])
            elif op == 0x55:  # SHORT_BINSTRING
                stack.append(read(byte()))
            elif op == 0x8A:  # LONG1
                stack.append(int.from_bytes(read(byte()), "little", signed=True))
            elif op == 0x80:  # PROTO
                if byte() > 5:
                    raise NetworkFormatError("unknown pickle protocol")
            elif op == 0x2E:  # STOP
                return stack.pop()
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
