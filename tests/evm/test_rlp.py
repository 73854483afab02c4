"""RLP encoding and strict decoding: ethereum/tests vectors and a pyrlp cross-check."""

from __future__ import annotations

from typing import Any

import pytest
import rlp as pyrlp  # test-only cross-check
from hypothesis import given
from hypothesis import strategies as st

from secant.evm.rlp import RLPError, decode, decode_int, encode

LOREM = b"Lorem ipsum dolor sit amet, consectetur adipisicing elit"

# (value, hex encoding) pairs from ethereum/tests RLPTests/rlptest.json.
VECTORS: list[tuple[Any, str]] = [
    (b"", "80"),
    (b"d", "64"),
    (b"cat", "83636174"),
    (b"dog", "83646f67"),
    (b"\x00", "00"),
    (b"\x7f", "7f"),
    (b"\x80", "8180"),
    (LOREM, "b838" + LOREM.hex()),
    (0, "80"),
    (1, "01"),
    (16, "10"),
    (79, "4f"),
    (127, "7f"),
    (128, "8180"),
    (1000, "8203e8"),
    (100000, "830186a0"),
    (83729609699884896815286331701780722, "8f102030405060708090a0b0c0d0e0f2"),
    (
        105315505618206987246253880190783558935785933862974822347068935681,
        "9c0100020003000400050006000700080009000a000b000c000d000e01",
    ),
    ([], "c0"),
    ([b"dog", b"god", b"cat"], "cc83646f6783676f6483636174"),
    ([b"zw", [4], 1], "c6827a77c10401"),
    ([[], [[]], [[], [[]]]], "c7c0c1c0c3c0c1c0"),
    ([[b"key1", b"val1"], [b"key2", b"val2"], [b"key3", b"val3"], [b"key4", b"val4"]],
     "ecca846b6579318476616c31ca846b6579328476616c32ca846b6579338476616c33ca846b657934"
     "8476616c34"),
    ([b"asdf", b"qwer", b"zxcv"] * 4,
     "f83c" + "84617364668471776572847a786376" * 4),
]


def _as_decoded(value: Any) -> Any:
    """What ``decode`` returns for an encoded ``value``: ints become minimal byte strings."""
    if isinstance(value, int):
        return value.to_bytes((value.bit_length() + 7) // 8, "big")
    if isinstance(value, list):
        return [_as_decoded(v) for v in value]
    return value


@pytest.mark.parametrize(("value", "expected"), VECTORS)
def test_vectors(value: Any, expected: str) -> None:
    assert encode(value).hex() == expected
    assert decode(bytes.fromhex(expected)) == _as_decoded(value)


def test_long_list_and_tuple() -> None:
    payload = [LOREM] * 3
    encoded = encode(tuple(payload))
    assert encoded[0] == 0xF8 + 0  # one length byte: 3 * 58 = 174
    assert encoded[1] == 174
    assert decode(encoded) == payload


def test_decode_int() -> None:
    assert decode_int(decode(encode(0))) == 0
    assert decode_int(decode(encode(2**256 - 1))) == 2**256 - 1
    with pytest.raises(RLPError):
        decode_int(b"\x00\x01")
    with pytest.raises(RLPError):
        decode_int([])


@pytest.mark.parametrize(
    "bad",
    [
        -1,
        True,
        "text",
        3.5,
        [1, None],
    ],
)
def test_encode_rejects(bad: Any) -> None:
    with pytest.raises(RLPError):
        encode(bad)


# Invalid encodings from ethereum/tests RLPTests/invalidRLPTest.json and friends.
INVALID = [
    "",  # empty input
    "8100",  # single byte below 0x80 with a prefix
    "817f",
    "b800",  # long form for a short string
    "b90040" + "00" * 64,  # length with leading zeros
    "b8" + "37" + "00" * 55,  # long form for 55 bytes
    "f80100",  # long-form list for a 1-byte payload
    "83646f",  # truncated string
    "c3646f",  # truncated list
    "c283646f67",  # item overruns its list
    "83646f6700",  # trailing byte
    "0000",  # trailing byte after a single byte
    "ba010000",  # truncated long length
    "bf0100000000000000",  # length far beyond the input
]


@pytest.mark.parametrize("hex_input", INVALID)
def test_decode_rejects(hex_input: str) -> None:
    with pytest.raises(RLPError):
        decode(bytes.fromhex(hex_input))


_items = st.recursive(
    st.binary(max_size=80) | st.integers(min_value=0, max_value=2**300),
    lambda children: st.lists(children, max_size=6),
    max_leaves=30,
)


@given(_items)
def test_matches_pyrlp(value: Any) -> None:
    encoded = encode(value)
    assert encoded == pyrlp.encode(value)
    assert decode(encoded) == _as_decoded(value)
    assert encode(decode(encoded)) == encoded
