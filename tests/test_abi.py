"""The ABI layer: types, signatures, selectors, encoding round trips, events, reverts."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from secant.abi import (
    PANIC_CODES,
    Abi,
    AbiParam,
    decode,
    decode_revert,
    encode,
    event_topic,
    function_selector,
    keccak256,
)

ABI: list[dict[str, Any]] = [
    {"type": "constructor", "stateMutability": "payable",
     "inputs": [{"name": "owner", "type": "address"}, {"name": "cap", "type": "uint"}]},
    {"type": "function", "name": "transfer", "stateMutability": "nonpayable",
     "inputs": [{"name": "to", "type": "address"}, {"name": "amount", "type": "uint256"}],
     "outputs": [{"name": "", "type": "bool"}]},
    {"type": "function", "name": "submit", "stateMutability": "payable",
     "inputs": [{"name": "orders", "type": "tuple[]", "components": [
         {"name": "maker", "type": "address"},
         {"name": "amounts", "type": "uint128[2]"},
         {"name": "meta", "type": "tuple", "components": [
             {"name": "tag", "type": "bytes4"}, {"name": "note", "type": "string"}]}]}],
     "outputs": []},
    {"type": "function", "name": "grid", "stateMutability": "pure",
     "inputs": [{"name": "g", "type": "int8[][3]"}, {"name": "b", "type": "bytes"}],
     "outputs": [{"name": "", "type": "bytes32"}]},
    {"type": "event", "name": "Transfer", "anonymous": False, "inputs": [
        {"name": "from", "type": "address", "indexed": True},
        {"name": "to", "type": "address", "indexed": True},
        {"name": "memo", "type": "string", "indexed": True},
        {"name": "value", "type": "uint256", "indexed": False}]},
    {"type": "error", "name": "Insufficient", "inputs": [
        {"name": "available", "type": "uint256"}, {"name": "needed", "type": "uint256"}]},
    {"type": "fallback", "stateMutability": "nonpayable"},
    {"type": "receive", "stateMutability": "payable"},
]

ALICE = "0x" + "11" * 20
BOB = "0x00000000000000000000000000000000000000b0"


def test_signatures_and_selectors() -> None:
    abi = Abi.from_json(ABI)
    assert abi.function("transfer").signature == "transfer(address,uint256)"
    assert abi.function("transfer").selector.hex() == "a9059cbb"
    assert abi.function("submit").signature == (
        "submit((address,uint128[2],(bytes4,string))[])")
    assert abi.function("grid").signature == "grid(int8[][3],bytes)"
    assert function_selector("balanceOf(address)").hex() == "70a08231"
    transfer = abi.events[0]
    assert transfer.signature == "Transfer(address,address,string,uint256)"
    assert event_topic("Transfer(address,address,uint256)").hex() == (
        "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
    assert abi.errors[0].selector == function_selector("Insufficient(uint256,uint256)")
    assert abi.constructor is not None and abi.constructor.payable
    assert [p.canonical for p in abi.constructor.inputs] == ["address", "uint256"]
    assert abi.fallback is not None and abi.receive is not None
    assert abi.by_selector(bytes.fromhex("a9059cbb")) is abi.function("transfer")
    assert keccak256(b"").hex().startswith("c5d2460186f7233c")


def test_legacy_abi_mutability_flags() -> None:
    abi = Abi.from_json('[{"constant": true, "inputs": [], "name": "x", "outputs": '
                        '[{"name": "", "type": "uint256"}], "payable": false, "type": "function"},'
                        '{"constant": false, "inputs": [], "name": "pay", "outputs": [],'
                        ' "payable": true, "type": "function"},'
                        '{"constant": false, "inputs": [], "name": "f", "outputs": [],'
                        ' "payable": false, "type": "function"},'
                        '{"payable": true, "type": "fallback"}]')
    assert [f.state_mutability for f in abi.functions] == ["view", "payable", "nonpayable"]
    assert abi.functions[0].read_only and abi.functions[1].payable
    assert abi.fallback is not None and abi.fallback.payable


def test_encode_call_nested_tuples_and_arrays() -> None:
    abi = Abi.from_json(ABI)
    submit = abi.function("submit")
    order = {"maker": ALICE, "amounts": [1, 2**128 - 1],
             "meta": {"tag": "0xdeadbeef", "note": "héllo"}}
    calldata = submit.encode_call([[order, (0xB0, [3, 4], (b"\x01\x02\x03\x04", ""))]])
    assert calldata[:4] == submit.selector
    (decoded,) = submit.decode_call(calldata)
    assert decoded[0] == (ALICE, (1, 2**128 - 1), (bytes.fromhex("deadbeef"), "héllo"))
    assert decoded[1] == (BOB, (3, 4), (b"\x01\x02\x03\x04", ""))
    grid = abi.function("grid")
    args = [[[-128, 127], [], [0, 1, -1]], b"\x00" * 33]
    values = grid.decode_call(grid.encode_call(args))
    assert tuple(tuple(row) for row in values[0]) == ((-128, 127), (), (0, 1, -1))
    assert grid.decode_output(b"\x07" * 32) == (b"\x07" * 32,)
    with pytest.raises(ValueError, match="expected 2 arguments"):
        abi.function("transfer").encode_call([ALICE])


@pytest.mark.parametrize(
    ("types", "values"),
    [
        (["uint8", "int256", "bool"], [255, -(2**255), True]),
        (["address", "bytes1", "bytes32"], [ALICE, b"\xff", b"\x01" * 32]),
        (["bytes", "string"], [b"", "unicode ✓"]),
        (["uint256[]", "string[2]"], [[1, 2, 3], ["a", "bc"]]),
        (["(uint256,(bool,bytes)[])"], [(5, [(True, b"x"), (False, b"")])]),
        (["uint[2][]"], [[[1, 2], [3, 4]]]),
        (["fixed128x18", "ufixed8x1"], [Decimal("-1.5"), Decimal("25.5")]),
        (["function"], [b"\x01" * 24]),
    ],
)
def test_round_trip_every_type(types: list[str], values: list[Any]) -> None:
    data = encode(types, values)
    assert len(data) % 32 == 0

    def plain(x: Any) -> Any:
        return [plain(v) for v in x] if isinstance(x, list | tuple) else x

    assert plain(decode(types, data)) == plain(values)


@given(st.lists(st.tuples(st.integers(0, 2**256 - 1), st.binary(max_size=70)), max_size=5))
def test_round_trip_property(items: list[tuple[int, bytes]]) -> None:
    data = encode(["(uint256,bytes)[]"], [items])
    assert [tuple(i) for i in decode(["(uint256,bytes)[]"], data)[0]] == items


def test_param_canonical_and_dynamic() -> None:
    param = AbiParam.from_json({"name": "p", "type": "tuple[2]", "components": [
        {"name": "a", "type": "uint"}, {"name": "b", "type": "string"}]})
    assert param.canonical == "(uint256,string)[2]"
    assert param.is_dynamic
    assert not AbiParam.from_json({"name": "x", "type": "uint256[3]"}).is_dynamic
    assert AbiParam.from_json({"name": "x", "type": "bytes"}).is_dynamic


def test_decode_event_log() -> None:
    event = Abi.from_json(ABI).events[0]
    topics = [event.topic, bytes(12) + bytes.fromhex("11" * 20),
              bytes(12) + bytes.fromhex(BOB[2:]), keccak256(b"memo")]
    decoded = event.decode_log(topics, encode(["uint256"], [42]))
    assert decoded == {"from": ALICE, "to": BOB, "memo": keccak256(b"memo"), "value": 42}
    assert Abi.from_json(ABI).event_by_topic(event.topic) == event


def test_decode_revert_reasons() -> None:
    abi = Abi.from_json(ABI)
    error = bytes.fromhex("08c379a0") + encode(["string"], ["insufficient balance"])
    reason = decode_revert(error)
    assert (reason.kind, reason.message) == ("error", "insufficient balance")
    assert str(reason) == "Error('insufficient balance')"
    panic = decode_revert(bytes.fromhex("4e487b71") + encode(["uint256"], [0x11]))
    assert panic.kind == "panic" and panic.panic_code == 0x11
    assert str(panic) == "Panic(0x11: arithmetic overflow or underflow)"
    assert PANIC_CODES[0x32] == "array index out of bounds"
    unknown_panic = decode_revert(bytes.fromhex("4e487b71") + encode(["uint256"], [0x99]))
    assert "unknown panic code 0x99" in str(unknown_panic)
    custom = abi.decode_revert(abi.errors[0].selector + encode(["uint256", "uint256"], [1, 2]))
    assert (custom.kind, custom.name, custom.args) == ("custom", "Insufficient", (1, 2))
    assert str(custom) == "Insufficient(1, 2)"
    assert decode_revert(b"").kind == "empty"
    raw = decode_revert(b"\x12\x34\x56\x78\x00")
    assert raw.kind == "raw" and str(raw) == "reverted with data 0x1234567800"
    truncated = decode_revert(bytes.fromhex("08c379a0") + b"\x00" * 5)
    assert truncated.kind == "raw"
    bad_utf8 = bytes.fromhex("08c379a0") + encode(["bytes"], [b"\xff\xfe"])
    assert decode_revert(bad_utf8).kind == "error"
