"""Recursive Length Prefix (RLP) serialization, Ethereum's canonical encoding.

``encode`` accepts byte strings, non-negative ints (big-endian, no leading zeros; 0 is the
empty string) and arbitrarily nested lists or tuples of those. ``decode`` is strict: it
rejects non-canonical encodings (a single byte below 0x80 wrapped in a length prefix, a long
form where the short form fits, a length with leading zeros) and trailing bytes, raising
:class:`RLPError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

Encodable: TypeAlias = "bytes | bytearray | memoryview | int | Sequence[Encodable]"
"""What :func:`encode` accepts: byte strings, non-negative ints and nested sequences."""

Item: TypeAlias = "bytes | list[Item]"
"""What :func:`decode` returns: byte strings and nested lists."""


class RLPError(ValueError):
    """The input cannot be RLP-encoded, or the bytes are not canonical RLP."""


def _length_prefix(length: int, offset: int) -> bytes:
    """Header of a string (``offset`` 0x80) or list (``offset`` 0xC0) of ``length`` bytes."""
    if length < 56:
        return bytes((offset + length,))
    size = length.to_bytes((length.bit_length() + 7) // 8, "big")
    if len(size) > 8:
        raise RLPError(f"payload of {length} bytes is too long for RLP")
    return bytes((offset + 55 + len(size),)) + size


def encode_bytes(data: bytes) -> bytes:
    """RLP-encode one byte string."""
    if len(data) == 1 and data[0] < 0x80:
        return bytes(data)
    return _length_prefix(len(data), 0x80) + data


def encode_int(value: int) -> bytes:
    """RLP-encode a non-negative integer (big-endian, minimal; 0 is the empty string)."""
    if value < 0:
        raise RLPError(f"cannot RLP-encode a negative integer: {value}")
    if value < 0x80:
        return b"\x80" if value == 0 else bytes((value,))
    return encode_bytes(value.to_bytes((value.bit_length() + 7) // 8, "big"))


def encode_list_payload(payload: bytes) -> bytes:
    """Wrap the concatenation of already-encoded items into an RLP list."""
    return _length_prefix(len(payload), 0xC0) + payload


def encode(item: Encodable) -> bytes:
    """RLP-encode ``item``: bytes, a non-negative int, or a (nested) list/tuple of those."""
    if isinstance(item, bytes):
        return encode_bytes(item)
    if isinstance(item, bytearray | memoryview):
        return encode_bytes(bytes(item))
    if isinstance(item, bool):
        raise RLPError("cannot RLP-encode a bool; use an int")
    if isinstance(item, int):
        return encode_int(item)
    if isinstance(item, list | tuple):
        return encode_list_payload(b"".join(encode(sub) for sub in item))
    raise RLPError(f"cannot RLP-encode a {type(item).__name__}")


def _read_length(data: bytes, start: int, size: int) -> int:
    """Read a long-form length of ``size`` bytes at ``start``, rejecting non-canonical forms."""
    if start + size > len(data):
        raise RLPError("truncated RLP length")
    if data[start] == 0:
        raise RLPError("RLP length has leading zeros")
    length = int.from_bytes(data[start : start + size], "big")
    if length < 56:
        raise RLPError("RLP long form used for a payload shorter than 56 bytes")
    return length


def _decode_at(data: bytes, pos: int) -> tuple[Item, int]:
    """Decode the item starting at ``pos``; return it and the position after it."""
    if pos >= len(data):
        raise RLPError("truncated RLP input")
    first = data[pos]
    if first < 0x80:
        return data[pos : pos + 1], pos + 1
    if first < 0xB8:
        length = first - 0x80
        start = pos + 1
        end = start + length
        if end > len(data):
            raise RLPError("truncated RLP string")
        if length == 1 and data[start] < 0x80:
            raise RLPError("single byte below 0x80 must not have a length prefix")
        return data[start:end], end
    if first < 0xC0:
        size = first - 0xB7
        length = _read_length(data, pos + 1, size)
        start = pos + 1 + size
        end = start + length
        if end > len(data):
            raise RLPError("truncated RLP string")
        return data[start:end], end
    if first < 0xF8:
        length = first - 0xC0
        start = pos + 1
    else:
        size = first - 0xF7
        length = _read_length(data, pos + 1, size)
        start = pos + 1 + size
    end = start + length
    if end > len(data):
        raise RLPError("truncated RLP list")
    items: list[Item] = []
    cursor = start
    while cursor < end:
        sub, cursor = _decode_at(data, cursor)
        items.append(sub)
    if cursor != end:
        raise RLPError("RLP list item overruns its list")
    return items, end


def decode(data: bytes) -> Item:
    """Decode one RLP item that spans all of ``data``; raise :class:`RLPError` otherwise."""
    data = bytes(data)
    item, end = _decode_at(data, 0)
    if end != len(data):
        raise RLPError(f"{len(data) - end} trailing bytes after the RLP item")
    return item


def decode_int(item: Item) -> int:
    """Interpret a decoded byte string as a canonical integer (no leading zeros)."""
    if not isinstance(item, bytes):
        raise RLPError("expected an RLP string for an integer, got a list")
    if item[:1] == b"\x00":
        raise RLPError("RLP integer has leading zeros")
    return int.from_bytes(item, "big")
