"""Which calldata word holds which argument, and which values an argument word may take.

The solver finds new values for calldata *words* (``tx{i}_w{k}``); a test case holds
*arguments* in the fuzzer's value representation (``secant.targets.calldata``: ints,
bools, bytes, str, tuples). :func:`word_slots` lays a function's arguments out the way
the ABI encodes them (heads and tails, as the fuzzer's encoder does) and says, for each
word after the selector, which leaf of the arguments it holds and of what kind:

* ``uint``/``int``/``fixed``/``ufixed`` of ``bits`` bits, ``address``, ``bool``, ``bytesN``
  (``bits`` = 8N; ``function`` is ``bytes24``): one value in one word;
* ``bytes``: 32 bytes of a ``bytes`` value's content, from byte ``start``;
* ``fixed-layout``: an offset or a length of a dynamic value, or a string's content. These
  stay as they are (the solver pins them): an offset or a length changes where everything
  after it lies, and arbitrary bytes are rarely a string the fuzzer can hold.

:func:`word_domain` gives the z3 constraint that keeps a word a valid encoding of its kind
(an ``address`` below 2**160, a ``bool`` 0 or 1, an ``intN`` sign-extended, ...), and
:func:`apply_words` writes solved words back into the arguments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3

__all__ = ["FIXED_LAYOUT", "WordSlot", "apply_words", "parameter_types", "word_domain",
           "word_slots"]

FIXED_LAYOUT = "fixed-layout"
"""The kind of a word the solver must not change (offsets, lengths, string contents)."""

_ARRAY = re.compile(r"^(.*)\[(\d*)\]$")
_INT = re.compile(r"^(u?)int(\d*)$")
_FIXED = re.compile(r"^(u?)fixed(\d+)x(\d+)$")
_BYTES_N = re.compile(r"^bytes(\d+)$")
_MASK = (1 << 256) - 1


@dataclass(frozen=True, slots=True)
class WordSlot:
    """Calldata word ``word`` (counted from byte 4) holds the leaf at ``path`` of the args.

    ``path`` indexes the argument tuple, then nested tuples and arrays. ``kind`` is one of
    ``uint``, ``int``, ``address``, ``bool``, ``bytesN``, ``bytes`` and ``fixed-layout``;
    ``bits`` the width of an integer or ``bytesN`` value, ``start`` where a ``bytes``
    chunk begins in its value and ``length`` the value's length.
    """

    word: int
    path: tuple[int, ...]
    kind: str
    bits: int = 256
    start: int = 0
    length: int = 0


def parameter_types(signature: str) -> list[str]:
    """The parameter types of ``name(t1,t2,...)`` (tuples kept whole: ``(uint256,bool)[]``)."""
    open_at = signature.find("(")
    if open_at < 0 or not signature.endswith(")"):
        return []
    return _split(signature[open_at + 1:-1])


def _split(inner: str) -> list[str]:
    """Split a comma-separated type list at the top level of parentheses."""
    if not inner:
        return []
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(inner):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[start:index])
            start = index + 1
    parts.append(inner[start:])
    return parts


def _is_dynamic(kind: str) -> bool:
    match = _ARRAY.match(kind)
    if match is not None:
        return not match.group(2) or _is_dynamic(match.group(1))
    if kind.startswith("("):
        return any(_is_dynamic(part) for part in _split(kind[1:-1]))
    return kind in ("bytes", "string")


def _head_size(kind: str) -> int:
    """Bytes a static ``kind`` takes in place (32 for a dynamic one: its offset)."""
    if _is_dynamic(kind):
        return 32
    match = _ARRAY.match(kind)
    if match is not None:
        return int(match.group(2)) * _head_size(match.group(1))
    if kind.startswith("("):
        return sum(_head_size(part) for part in _split(kind[1:-1]))
    return 32


def word_slots(signature: str, args: Sequence[Any]) -> list[WordSlot]:
    """Every word of the encoding of ``args`` for ``signature``'s parameters, in order.

    Empty when the arguments do not fit the parameters (the solver then changes none).
    """
    types = parameter_types(signature)
    if len(types) != len(args):
        return []
    slots: list[WordSlot] = []
    try:
        _sequence(types, list(args), 0, (), slots)
    except (TypeError, ValueError, IndexError):
        return []
    return sorted(slots, key=lambda slot: slot.word)


def _sequence(types: Sequence[str], values: Sequence[Any], start: int,
              path: tuple[int, ...], slots: list[WordSlot]) -> int:
    """Lay out a tuple of ``values`` at byte ``start``; return the bytes it takes."""
    if len(types) != len(values):
        raise ValueError("arity")
    head = start
    tail = start + sum(_head_size(kind) for kind in types)
    for index, (kind, value) in enumerate(zip(types, values)):
        if _is_dynamic(kind):
            slots.append(WordSlot(head // 32, path + (index,), FIXED_LAYOUT))
            tail += _value(kind, value, tail, path + (index,), slots)
            head += 32
        else:
            head += _value(kind, value, head, path + (index,), slots)
    return tail - start


def _value(kind: str, value: Any, start: int, path: tuple[int, ...],
           slots: list[WordSlot]) -> int:
    """Lay out one value of ``kind`` at byte ``start``; return the bytes it takes."""
    match = _ARRAY.match(kind)
    if match is not None:
        element, length = match.group(1), match.group(2)
        items = list(value)
        if length:
            if len(items) != int(length):
                raise ValueError("array length")
            return _sequence([element] * len(items), items, start, path, slots)
        slots.append(WordSlot(start // 32, path, FIXED_LAYOUT))  # the length
        return 32 + _sequence([element] * len(items), items, start + 32, path, slots)
    if kind.startswith("("):
        return _sequence(_split(kind[1:-1]), list(value), start, path, slots)
    if kind in ("bytes", "string"):
        data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
        slots.append(WordSlot(start // 32, path, FIXED_LAYOUT))  # the length
        words = (len(data) + 31) // 32
        for k in range(words):
            if kind == "bytes":
                slots.append(WordSlot(start // 32 + 1 + k, path, "bytes", 256, 32 * k,
                                      len(data)))
            else:
                slots.append(WordSlot(start // 32 + 1 + k, path, FIXED_LAYOUT))
        return 32 * (1 + words)
    slots.append(_leaf(kind, start // 32, path))
    return 32


def _leaf(kind: str, word: int, path: tuple[int, ...]) -> WordSlot:
    if kind == "address":
        return WordSlot(word, path, "address", 160)
    if kind == "bool":
        return WordSlot(word, path, "bool", 1)
    if kind == "function":
        return WordSlot(word, path, "bytesN", 192)
    match = _INT.match(kind)
    if match is not None:
        return WordSlot(word, path, "uint" if match.group(1) else "int",
                        int(match.group(2) or 256))
    match = _FIXED.match(kind)
    if match is not None:
        return WordSlot(word, path, "uint" if match.group(1) else "int", int(match.group(2)))
    match = _BYTES_N.match(kind)
    if match is not None:
        return WordSlot(word, path, "bytesN", 8 * int(match.group(1)))
    return WordSlot(word, path, FIXED_LAYOUT)


def word_domain(slot: WordSlot, word: Any) -> Any | None:
    """The z3 constraint keeping ``word`` a valid encoding of ``slot``; None: any value.

    ``bytes`` chunks keep the padding after the value's end zero (the length is fixed).
    """
    kind, bits = slot.kind, slot.bits
    if kind in ("uint", "address") and bits < 256:
        return z3.ULT(word, z3.BitVecVal(1 << bits, 256))
    if kind == "bool":
        return z3.ULE(word, z3.BitVecVal(1, 256))
    if kind == "int" and bits < 256:
        return word == z3.SignExt(256 - bits, z3.Extract(bits - 1, 0, word))
    if kind == "bytesN" and bits < 256:
        return z3.Extract(255 - bits, 0, word) == 0
    if kind == "bytes":
        used = slot.length - slot.start
        if used < 32:
            return z3.Extract(255 - 8 * used, 0, word) == 0
    return None


def apply_words(args: tuple[Any, ...], slots: Sequence[WordSlot],
                words: Mapping[int, int]) -> tuple[Any, ...]:
    """``args`` with the leaves of the words in ``words`` (index -> new word) replaced."""
    result: Any = _thaw(args)
    for slot in slots:
        if slot.word not in words or slot.kind == FIXED_LAYOUT:
            continue
        word = words[slot.word] & _MASK
        if slot.kind == "bytes":
            old = _get(result, slot.path)
            chunk = word.to_bytes(32, "big")[:max(0, slot.length - slot.start)]
            new = bytes(old[:slot.start]) + chunk + bytes(old[slot.start + len(chunk):])
            result = _set(result, slot.path, new)
        else:
            old = _get(result, slot.path)
            result = _set(result, slot.path, _leaf_value(slot, word, old))
    frozen = _freeze(result)
    assert isinstance(frozen, tuple)
    return frozen


def _leaf_value(slot: WordSlot, word: int, old: Any) -> Any:
    """The fuzzer's representation of ``word`` as a value of ``slot``'s kind."""
    kind, bits = slot.kind, slot.bits
    if kind == "bool":
        return bool(word) if isinstance(old, bool) else int(bool(word))
    if kind == "int":
        value = word & ((1 << bits) - 1)
        return value - (1 << bits) if value >> (bits - 1) else value
    if kind == "bytesN":
        return word.to_bytes(32, "big")[:bits // 8]
    return word & ((1 << bits) - 1) if bits < 256 else word


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_thaw(item) for item in value]
    return value


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(item) for item in value)
    return value


def _get(tree: Any, path: tuple[int, ...]) -> Any:
    for index in path:
        tree = tree[index]
    return tree


def _set(tree: Any, path: tuple[int, ...], value: Any) -> Any:
    if not path:
        return value
    node = tree
    for index in path[:-1]:
        node = node[index]
    node[path[-1]] = value
    return tree
