"""ABI types as the mutators see them, and paths into argument values.

:func:`vtype` turns an ``AbiParam`` into a :class:`VType` tree once; the mutators then
work on values in the fuzzer's representation (see ``secant.targets.calldata``): ints for
integers and addresses (signed ints for ``intN``), bools, bytes, str, and tuples for arrays
and structs.

A *path* indexes into an argument tuple and on into nested arrays/tuples; :func:`leaves`
lists the scalar leaves (and dynamic containers, whose length is a mutable parameter),
:func:`get_at`/:func:`set_at` read and rebuild immutable values along a path. Integer views
(:func:`int_domain`, :func:`to_int`, :func:`from_int`) let the secant predictor treat
``uintN``, ``intN`` and ``bytesN`` as numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from secant.abi import AbiParam
from secant.engine.secant_method import Domain

_ARRAY_RE = re.compile(r"^(.*)\[(\d*)\]$")
_INT_RE = re.compile(r"^(u?)int(\d*)$")
_FIXED_RE = re.compile(r"^(u?)fixed(\d+)x(\d+)$")
_BYTES_RE = re.compile(r"^bytes(\d+)$")

Path = tuple[int, ...]


@dataclass(frozen=True)
class VType:
    """One ABI type as the mutators see it.

    ``kind`` is uint, int, address, bool, fbytes (bytesN), bytes, string, array or tuple;
    ``bits`` for integers (8*N for bytesN); ``length`` for fixed arrays (None: dynamic);
    ``elem`` / ``fields`` for arrays / tuples.
    """

    kind: str
    bits: int = 0
    length: int | None = None
    elem: VType | None = None
    fields: tuple[VType, ...] = ()

    def __str__(self) -> str:
        if self.kind in ("uint", "int"):
            return f"{self.kind}{self.bits}"
        if self.kind == "fbytes":
            return f"bytes{self.bits // 8}"
        if self.kind == "array":
            return f"{self.elem}[{'' if self.length is None else self.length}]"
        if self.kind == "tuple":
            return "(" + ",".join(str(f) for f in self.fields) + ")"
        return self.kind


@lru_cache(maxsize=4096)
def _parse(type_text: str, components: tuple[AbiParam, ...]) -> VType:
    match = _ARRAY_RE.match(type_text)
    if match is not None:
        elem = _parse(match.group(1), components)
        return VType("array", length=int(match.group(2)) if match.group(2) else None, elem=elem)
    if type_text == "tuple":
        return VType("tuple", fields=tuple(vtype(c) for c in components))
    if type_text in ("address", "bool", "bytes", "string"):
        return VType(type_text, bits=160 if type_text == "address" else 0)
    if type_text == "function":
        return VType("fbytes", bits=192)
    match = _INT_RE.match(type_text)
    if match is not None:
        return VType("uint" if match.group(1) else "int", bits=int(match.group(2) or 256))
    match = _FIXED_RE.match(type_text)
    if match is not None:  # the raw scaled integer
        return VType("uint" if match.group(1) else "int", bits=int(match.group(2)))
    match = _BYTES_RE.match(type_text)
    if match is not None:
        return VType("fbytes", bits=8 * int(match.group(1)))
    raise ValueError(f"unsupported ABI type {type_text!r}")


def vtype(param: AbiParam) -> VType:
    """The mutators' view of an ABI parameter's type."""
    return _parse(param.type, param.components)


def leaves(vt: VType, value: Any, path: Path = ()) -> list[tuple[Path, VType]]:
    """Every mutable place inside ``value``: scalars, and dynamic containers themselves.

    A dynamic container (bytes, string, ``T[]``) appears itself (its length and contents
    are mutated as a whole) and, for arrays, so do its elements.
    """
    kind = vt.kind
    if kind == "array":
        out: list[tuple[Path, VType]] = [(path, vt)] if vt.length is None else []
        assert vt.elem is not None
        for i, item in enumerate(value):
            out.extend(leaves(vt.elem, item, (*path, i)))
        return out
    if kind == "tuple":
        out = []
        for i, (field_type, item) in enumerate(zip(vt.fields, value)):
            out.extend(leaves(field_type, item, (*path, i)))
        return out
    return [(path, vt)]


_FLAT: dict[tuple[VType, ...], list[tuple[Path, VType]] | None] = {}


def args_leaves(types: Sequence[VType], args: Sequence[Any]) -> list[tuple[Path, VType]]:
    """The leaves of a whole argument list (paths start with the argument index)."""
    key = tuple(types)
    flat = _FLAT.get(key, ())
    if flat == ():
        # Without arrays and tuples the leaves are the arguments, whatever their values:
        # worked out once per signature (mutators ask for them on every mutation).
        flat = _FLAT[key] = (None if any(vt.kind in ("array", "tuple") for vt in key)
                             else [((i,), vt) for i, vt in enumerate(key)])
    if flat is not None and len(args) == len(key):
        return list(flat)
    out: list[tuple[Path, VType]] = []
    for i, (vt, value) in enumerate(zip(types, args)):
        out.extend(leaves(vt, value, (i,)))
    return out


def get_at(value: Any, path: Path) -> Any:
    """The part of ``value`` at ``path``."""
    for i in path:
        value = value[i]
    return value


def set_at(value: Any, path: Path, new: Any) -> Any:
    """A copy of the tuple ``value`` with the part at ``path`` replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    items = list(value)
    items[head] = set_at(items[head], rest, new)
    return tuple(items)


def type_at(types: Sequence[VType], path: Path) -> VType:
    """The type of the part at ``path`` of an argument list."""
    vt = types[path[0]]
    for i in path[1:]:
        if vt.kind == "array":
            assert vt.elem is not None
            vt = vt.elem
        else:
            vt = vt.fields[i]
    return vt


def int_domain(vt: VType) -> Domain | None:
    """The integer range prediction may use for ``vt`` (None: not an integer)."""
    if vt.kind == "uint" or vt.kind == "fbytes":
        return Domain.unsigned(vt.bits)
    if vt.kind == "int":
        return Domain.signed(vt.bits)
    return None


def to_int(vt: VType, value: Any) -> int:
    """The integer view of a value (bytesN big-endian)."""
    if vt.kind == "fbytes":
        return int.from_bytes(value, "big")
    return int(value)


def from_int(vt: VType, number: int) -> Any:
    """The value of type ``vt`` whose integer view is ``number`` (wrapped to the width)."""
    bits = vt.bits
    mask = (1 << bits) - 1
    if vt.kind == "fbytes":
        return (number & mask).to_bytes(bits // 8, "big")
    number &= mask
    if vt.kind == "int" and number >> (bits - 1):
        number -= 1 << bits
    return number


def to_unsigned(vt: VType, value: Any) -> int:
    """The two's-complement bit pattern of an integer, address or bytesN value."""
    if vt.kind == "fbytes":
        return int.from_bytes(value, "big")
    if vt.kind == "bool":
        return int(bool(value))
    return int(value) & ((1 << vt.bits) - 1)
