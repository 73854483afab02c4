"""A fast ABI encoder for the fuzzer's argument values, compiled once per parameter list.

eth-abi validates and dispatches on every call; the fuzzer encodes calldata on every
execution, so :func:`compile_encoder` resolves the types once into nested closures and an
encoding is a handful of ``int.to_bytes`` calls.

Value representation (what the fuzzer's mutators produce):

* ``uintN``: int; ``intN``: int (negative ones two's-complement encoded); ``address``: int;
  ``bool``: bool or 0/1; ``fixed``/``ufixed``: the raw scaled int;
* ``bytesN`` and ``function`` (bytes24): bytes of that size (right-padded);
* ``bytes``: bytes; ``string``: str (UTF-8; lone surrogates pass through);
* ``T[k]``, ``T[]`` and tuples: tuples (or lists) of element values.

Integers are not range-checked on this hot path: they are wrapped to 256 bits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from secant.abi import AbiFunction, AbiParam

Encoder = Callable[[Sequence[Any]], bytes]
_Part = Callable[[Any], bytes]
MASK = (1 << 256) - 1
_ZERO = bytes(32)

_ARRAY_RE = re.compile(r"^(.*)\[(\d*)\]$")
_INT_RE = re.compile(r"^u?int(\d*)$")
_FIXED_RE = re.compile(r"^u?fixed(\d+)x(\d+)$")
_BYTES_RE = re.compile(r"^bytes(\d+)$")


def _word(value: int) -> bytes:
    return (value & MASK).to_bytes(32, "big")


def _encode_bool(value: Any) -> bytes:
    return _word(1 if value else 0)


def _encode_fixed_bytes(value: bytes) -> bytes:
    return bytes(value[:32]).ljust(32, b"\0")


def _encode_bytes(value: bytes) -> bytes:
    data = bytes(value)
    padding = -len(data) % 32
    return _word(len(data)) + data + b"\0" * padding


def _encode_string(value: str) -> bytes:
    return _encode_bytes(value.encode("utf-8", "surrogatepass"))


class _Kind:
    """A compiled type: its encoder and whether its encoding is dynamic."""

    __slots__ = ("encode", "dynamic", "head_size")

    def __init__(self, encode: _Part, dynamic: bool, head_size: int = 32) -> None:
        self.encode = encode
        self.dynamic = dynamic
        self.head_size = head_size  # bytes this type occupies in a head when static


def _sequence(kinds: Sequence[_Kind]) -> _Part:
    """Head/tail encoding of a tuple of values of ``kinds`` (the ABI's ``enc`` of tuples)."""
    if not any(k.dynamic for k in kinds):
        encoders = [k.encode for k in kinds]
        if len(encoders) == 1:
            only = encoders[0]
            return lambda values: only(values[0])
        return lambda values: b"".join([e(v) for e, v in zip(encoders, values)])
    plan = [(k.encode, k.dynamic) for k in kinds]
    head_size = sum(32 if k.dynamic else k.head_size for k in kinds)

    def encode(values: Any) -> bytes:
        heads: list[bytes] = []
        tails: list[bytes] = []
        offset = head_size
        for (enc, dynamic), value in zip(plan, values):
            data = enc(value)
            if dynamic:
                heads.append(offset.to_bytes(32, "big"))
                tails.append(data)
                offset += len(data)
            else:
                heads.append(data)
        return b"".join(heads) + b"".join(tails)

    return encode


def _array(element: _Kind, length: int | None) -> _Kind:
    if length is not None:
        fixed = _sequence([element] * length) if length else (lambda _values: b"")
        if element.dynamic:
            return _Kind(fixed, True)
        return _Kind(fixed, False, element.head_size * length)
    cache: dict[int, _Part] = {}

    def encode(values: Any) -> bytes:
        n = len(values)
        body = cache.get(n)
        if body is None:
            body = cache[n] = _sequence([element] * n) if n else (lambda _values: b"")
        return n.to_bytes(32, "big") + body(values)

    return _Kind(encode, True)


def _compile(type_text: str, components: Sequence[AbiParam]) -> _Kind:
    match = _ARRAY_RE.match(type_text)
    if match is not None:
        element = _compile(match.group(1), components)
        return _array(element, int(match.group(2)) if match.group(2) else None)
    if type_text == "tuple":
        kinds = [_compile(c.type, c.components) for c in components]
        dynamic = any(k.dynamic for k in kinds)
        return _Kind(_sequence(kinds), dynamic, sum(k.head_size for k in kinds))
    if type_text == "bool":
        return _Kind(_encode_bool, False)
    if type_text == "address" or _INT_RE.match(type_text) or _FIXED_RE.match(type_text):
        return _Kind(_word, False)
    if type_text == "bytes":
        return _Kind(_encode_bytes, True)
    if type_text == "string":
        return _Kind(_encode_string, True)
    if type_text == "function" or _BYTES_RE.match(type_text):
        return _Kind(_encode_fixed_bytes, False)
    raise ValueError(f"cannot encode ABI type {type_text!r}")


_ENCODERS: dict[tuple[str, ...], Encoder] = {}


def compile_encoder(params: Sequence[AbiParam]) -> Encoder:
    """An encoder of values for ``params`` (cached by their canonical types)."""
    key = tuple(p.canonical for p in params)
    found = _ENCODERS.get(key)
    if found is None:
        if not params:
            found = _ENCODERS[key] = lambda _values: b""
        else:
            found = _ENCODERS[key] = _sequence([_compile(p.type, p.components) for p in params])
    return found


_CALLS: dict[str, Callable[[Sequence[Any]], bytes]] = {}


def encoder_for(function: AbiFunction) -> Callable[[Sequence[Any]], bytes]:
    """Selector + encoded arguments of ``function`` (cached per signature)."""
    signature = function.signature
    found = _CALLS.get(signature)
    if found is None:
        selector = function.selector
        body = compile_encoder(function.inputs)

        def encode(args: Sequence[Any]) -> bytes:
            return selector + body(args)

        found = _CALLS[signature] = encode
    return found


def encode_call(function: AbiFunction, args: Sequence[Any]) -> bytes:
    """Calldata for ``function(*args)``."""
    return encoder_for(function)(args)
