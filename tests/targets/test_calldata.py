"""The fuzzer's ABI encoder agrees with eth-abi on every type (differential)."""

from __future__ import annotations

from typing import Any

import eth_abi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from secant.abi import AbiFunction, AbiParam
from secant.targets.calldata import compile_encoder, encode_call, encoder_for

ELEMENTARY = (
    [f"uint{b}" for b in (8, 16, 32, 64, 128, 160, 256)]
    + [f"int{b}" for b in (8, 16, 64, 256)]
    + [f"bytes{n}" for n in (1, 4, 20, 32)]
    + ["address", "bool", "bytes", "string"]
)


def _scalar(type_text: str) -> st.SearchStrategy[Any]:
    if type_text.startswith("uint"):
        return st.integers(0, (1 << int(type_text[4:])) - 1)
    if type_text.startswith("int"):
        bits = int(type_text[3:])
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if type_text == "address":
        return st.integers(0, (1 << 160) - 1)
    if type_text == "bool":
        return st.booleans()
    if type_text == "bytes":
        return st.binary(max_size=70)
    if type_text == "string":
        return st.text(max_size=40)
    return st.binary(min_size=int(type_text[5:]), max_size=int(type_text[5:]))


def _param(depth: int) -> st.SearchStrategy[AbiParam]:
    base = st.sampled_from(ELEMENTARY).map(lambda t: AbiParam("", t))
    if depth == 0:
        return base
    inner = _param(depth - 1)
    arrays = st.tuples(inner, st.sampled_from(["[]", "[1]", "[2]"])).map(
        lambda p: AbiParam("", p[0].type + p[1], p[0].components))
    tuples = st.lists(inner, min_size=1, max_size=3).map(
        lambda cs: AbiParam("", "tuple", tuple(cs)))
    return st.one_of(base, arrays, tuples)


def _value(param: AbiParam) -> st.SearchStrategy[Any]:
    text = param.type
    if text.endswith("]"):
        head, _, size = text[:-1].rpartition("[")
        element = AbiParam("", head, param.components)
        if size:
            return st.tuples(*[_value(element)] * int(size))
        return st.lists(_value(element), max_size=3).map(tuple)
    if text == "tuple":
        return st.tuples(*[_value(c) for c in param.components])
    return _scalar(text)


@st.composite
def typed_values(draw: st.DrawFn) -> tuple[list[AbiParam], list[Any]]:
    params = draw(st.lists(_param(2), min_size=0, max_size=4))
    return params, [draw(_value(p)) for p in params]


def _eth_abi(params: list[AbiParam], values: list[Any]) -> bytes:
    return bytes(eth_abi.encode([p.canonical for p in params],
                                [p.normalize(v) for p, v in zip(params, values)]))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(typed_values())
def test_matches_eth_abi(case: tuple[list[AbiParam], list[Any]]) -> None:
    params, values = case
    assert compile_encoder(params)(values) == _eth_abi(params, values)


def test_negative_and_extreme_integers() -> None:
    params = [AbiParam("", "int8"), AbiParam("", "int256"), AbiParam("", "uint256")]
    values = [-128, -(1 << 255), (1 << 256) - 1]
    encoded = compile_encoder(params)(values)
    assert encoded[:32] == b"\xff" * 31 + b"\x80"
    assert encoded == _eth_abi(params, values)


def test_call_encoding_matches_encode_call() -> None:
    transfer = AbiFunction("transfer", (AbiParam("to", "address"), AbiParam("v", "uint256")),
                           (), "nonpayable")
    data = encoder_for(transfer)((0xAB, 7))
    assert data[:4] == transfer.selector == bytes.fromhex("a9059cbb")
    assert data == transfer.encode_call([0xAB, 7])
    mixed = AbiFunction("f", (AbiParam("s", "string"), AbiParam("xs", "uint256[]"),
                              AbiParam("p", "tuple", (AbiParam("a", "uint8"),
                                                      AbiParam("b", "bytes")))),
                        (), "nonpayable")
    args = ("héllo", (1, 2, 3), (5, b"\x01\x02"))
    assert encode_call(mixed, args) == mixed.encode_call(list(args))


def test_unknown_type_fails_at_compile_time() -> None:
    with pytest.raises(ValueError, match="cannot encode ABI type 'uint7x'"):
        compile_encoder([AbiParam("", "uint7x")])
