"""Constructor arguments: parsing per ABI type, generation, formatting; sender lookup."""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

import pytest

from secant.abi import AbiParam, decode, encode
from secant.chain.accounts import default_senders, derived_address, find_sender
from secant.chain.arguments import (
    encode_arguments,
    format_value,
    generate_value,
    parse_value,
    parse_values,
)
from secant.chain.errors import ConstructorArgumentError


def _param(type_: str, components: list[dict[str, Any]] | None = None) -> AbiParam:
    return AbiParam.from_json({"name": "p", "type": type_, "components": components or []})


PAIR = [{"name": "a", "type": "uint8"}, {"name": "b", "type": "string"}]
NAMES = {"deployer": 0xD0, "Token": 0x70}

PARSE_CASES: list[tuple[str, str, Any]] = [
    ("uint256", "42", 42),
    ("uint256", "0x2a", 42),
    ("uint256", "1_000", 1000),
    ("uint256", "1e18", 10**18),
    ("uint256", "2 ether", 2 * 10**18),
    ("uint256", "1.5 gwei", 1_500_000_000),
    ("uint8", "255", 255),
    ("int8", "-128", -128),
    ("int", "-1", -1),
    ("address", "0x00000000000000000000000000000000000000aa", 0xAA),
    ("address", "deployer", 0xD0),
    ("address", "Token", 0x70),
    ("bool", "true", True),
    ("bool", "No", False),
    ("bytes32", "0x01", b"\x01" + bytes(31)),
    ("bytes4", "abcd", b"abcd"),
    ("bytes", "0xbeef", b"\xbe\xef"),
    ("bytes", "hi", b"hi"),
    ("string", "hello, world", "hello, world"),
    ("string", '"quoted \\"x\\""', 'quoted "x"'),
    ("uint256[]", "[1, 2, 0x3]", [1, 2, 3]),
    ("uint256[]", "[]", []),
    ("uint8[2][]", "[[1, 2], [3, 4]]", [[1, 2], [3, 4]]),
    ("string[]", '["a,b", "c"]', ["a,b", "c"]),
    ("address[2]", "[deployer, 0x01]", [0xD0, 1]),
    ("fixed128x18", "1.25", Decimal("1.25")),
]


@pytest.mark.parametrize(("type_", "text", "expected"), PARSE_CASES,
                         ids=[f"{t}:{x}" for t, x, _ in PARSE_CASES])
def test_parse_value(type_: str, text: str, expected: Any) -> None:
    param = _param(type_)
    value = parse_value(param, text, NAMES)
    assert value == expected
    encode([param.canonical], [param.normalize(value)])  # and it encodes


def test_parse_tuples() -> None:
    param = _param("tuple", PAIR)
    assert parse_value(param, '(7, "x, y")') == (7, "x, y")
    assert parse_value(param, "[7, z]") == (7, "z")
    array = _param("tuple[]", PAIR)
    assert parse_value(array, "[(1, a), (2, b)]") == [(1, "a"), (2, "b")]


BAD_CASES = [
    ("uint8", "256", "out of range"),
    ("uint256", "-1", "out of range"),
    ("uint256", "abc", "not a number"),
    ("uint256", "1.5", "not a whole number"),
    ("address", "0x1234zz", "not hex"),
    ("address", "nobody", "nor a known name (Token, deployer)"),
    ("bool", "maybe", "not true or false"),
    ("bytes2", "0x123456", "longer than 2 bytes"),
    ("uint8[2]", "[1]", "expected 2 elements, got 1"),
    ("uint8[]", "1, 2", "expected a list"),
    ("uint8[]", "[1, [2]", "unbalanced"),
]


@pytest.mark.parametrize(("type_", "text", "reason"), BAD_CASES,
                         ids=[f"{t}:{x}" for t, x, _ in BAD_CASES])
def test_parse_value_rejects(type_: str, text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_value(_param(type_), text, NAMES)


def test_parse_values_errors_name_the_argument() -> None:
    params = [_param("uint8"), _param("address")]
    assert parse_values(params, ["1", 5], "f") == [1, 5]  # non-strings pass through
    with pytest.raises(ConstructorArgumentError) as info:
        parse_values(params, ["1", "x"], "the constructor of C")
    text = str(info.value)
    assert "argument 2 (address p) of the constructor of C: 'x' is not a valid address" in text
    assert "\n" not in text and "; give a address value" in text
    with pytest.raises(ConstructorArgumentError, match=r"takes 2 arguments \(uint8, address\)"):
        parse_values(params, ["1"], "the constructor of C")
    with pytest.raises(ConstructorArgumentError, match=r"300 does not fit uint8"):
        encode_arguments(params, [300, 1], "the constructor of C")
    data = encode_arguments(params, [3, 0xAB], "c")
    assert decode(["uint8", "address"], data) == (3, "0x" + "00" * 19 + "ab")


GENERATED_TYPES = ["uint256", "uint8", "int16", "address", "bool", "bytes32", "bytes", "string",
                   "uint256[]", "bool[3]", "fixed128x18", "function"]


@pytest.mark.parametrize("type_", GENERATED_TYPES)
def test_generated_values_are_type_valid_and_deterministic(type_: str) -> None:
    param = _param(type_)
    values = [generate_value(param, random.Random(11)) for _ in range(2)]
    assert values[0] == values[1]
    encode([param.canonical], [param.normalize(values[0])])
    rng = random.Random(5)
    for _ in range(50):
        encode([param.canonical], [param.normalize(generate_value(param, rng))])


def test_generated_tuples_and_address_chooser() -> None:
    param = _param("tuple[2]", [{"name": "who", "type": "address"},
                                {"name": "n", "type": "uint8"}])
    value = generate_value(param, random.Random(1), lambda p, rng: 0xAB)
    assert [item[0] for item in value] == [0xAB, 0xAB]
    assert all(1 <= item[1] <= 255 for item in value)
    assert format_value(value, param).startswith("[(0x" + "00" * 19 + "ab, ")


def test_format_value() -> None:
    assert format_value([b"\x01", "a", True, (1, 2)]) == '[0x01, "a", true, (1, 2)]'
    assert format_value(5, _param("address")) == "0x" + "00" * 19 + "05"


def test_senders_lookup() -> None:
    senders = default_senders()
    deployer = senders[0]
    assert find_sender(senders, "deployer") is deployer
    assert find_sender(senders, deployer.address) is deployer
    assert find_sender(senders, deployer.hex.upper().replace("0X", "0x")) is deployer
    assert find_sender(senders, "attacker").name == "attacker1"  # a role: its first member
    assert str(deployer) == f"deployer ({deployer.hex})"
    assert deployer.address == derived_address("sender deployer")
    with pytest.raises(KeyError):
        find_sender(senders, 0x1234)
    with pytest.raises(ValueError):
        default_senders(users=-1)


def test_named_arguments_are_put_in_parameter_order() -> None:
    params = [AbiParam("owner", "address"), AbiParam("cap", "uint256"),
              AbiParam("label", "string")]
    names = {"deployer": 0x30000}
    assert parse_values(params, ["cap=5", "label=a=b", "owner=deployer"], "C", names) == [
        0x30000, 5, "a=b"]
    # Not all of them names of parameters: positional, a string with '=' included.
    assert parse_values(params, ["deployer", "7", "cap=5"], "C", names) == [0x30000, 7, "cap=5"]
    with pytest.raises(ConstructorArgumentError, match="no value for label"):
        parse_values(params, ["cap=5", "owner=deployer"], "C", names)
    with pytest.raises(ConstructorArgumentError, match="cap is given twice"):
        parse_values(params, ["cap=5", "cap=6", "owner=deployer"], "C", names)
