"""A constructor that refuses its generated arguments is given other generated sets."""

from __future__ import annotations

import random

import pytest

from secant.abi import AbiParam
from secant.chain import TestChain
from secant.chain.arguments import ALTERNATIVE_SETS, END_LEAD, alternative_values, moment_value
from secant.chain.errors import ConstructorReverted

from ..compile.conftest import SOLIDITY, needs_node
from .conftest import compiled

PICKY = SOLIDITY / "PickyConstructors.sol"


def _params() -> list[AbiParam]:
    return [AbiParam("owners", "address[]"), AbiParam("shares", "uint256[]"),
            AbiParam("pair", "address[2]"), AbiParam("small", "uint8"),
            AbiParam("flag", "bool")]


def test_alternative_sets_have_common_lengths_distinct_addresses_and_small_numbers() -> None:
    senders = [0xA1, 0xA2]
    for index in range(ALTERNATIVE_SETS):
        owners, shares, pair, small, _ = alternative_values(
            _params(), random.Random(f"seed:{index}"), None, senders, index)
        assert len(owners) == len(shares)
        addresses = [*owners, *pair]
        assert len(set(addresses)) == len(addresses)
        # The senders come first, in order; fresh addresses after them.
        assert addresses[:2] == senders
        assert 0 <= small <= 255
    assert alternative_values(_params(), random.Random(1), None, senders, 1)[1] == [1]
    assert alternative_values(_params(), random.Random(1), None, senders, 2)[1] == [0, 0]
    first = alternative_values(_params(), random.Random(1), None, senders, 0)
    assert all(1 <= share <= 10 for share in first[1])
    # Deterministic in the generator.
    assert first == alternative_values(_params(), random.Random(1), None, senders, 0)


@needs_node
def test_parallel_arrays_and_distinct_owners_are_found() -> None:
    chain = TestChain.setup(compiled(PICKY), "SharedPurse")
    assert chain.main is not None
    owners, shares, quorum = chain.main.args
    assert len(owners) == len(shares) == len(set(owners)) and 0 < quorum <= len(owners)
    [note] = chain.notes
    assert note.startswith("no constructor arguments given for SharedPurse; its constructor "
                           "refused (owners_=")
    assert "(generated from seed 0), deployed with (owners_=" in note
    assert note.endswith("instead (pass --arg to choose them)")
    assert chain.main.generated_args
    # The same seed gives the same deployment.
    again = TestChain.setup(compiled(PICKY), "SharedPurse")
    assert again.main is not None and again.main.args == chain.main.args


@needs_node
def test_other_arguments_are_tried_with_ether_too() -> None:
    chain = TestChain.setup(compiled(PICKY), "SmallSecret")
    assert chain.main is not None
    assert chain.main.args[0] <= 10
    assert chain.state.balance(chain.main.address) > 0
    assert any("reverted without ether; deployed with" in note for note in chain.notes)


@needs_node
def test_a_constructor_no_set_satisfies_names_the_first_refusal() -> None:
    with pytest.raises(ConstructorReverted) as refused:
        TestChain.setup(compiled(PICKY), "NeverAccepts")
    message = str(refused.value)
    assert "reverted: Error('wrong value') (with generated arguments (value=" in message
    assert f"(and with {ALTERNATIVE_SETS} other generated argument sets)" in message


@needs_node
def test_arguments_the_user_gave_are_not_replaced() -> None:
    with pytest.raises(ConstructorReverted) as refused:
        TestChain.setup(compiled(PICKY), "NeverAccepts", args=["7"])
    assert "other generated argument sets" not in str(refused.value)


@pytest.mark.parametrize(("name", "type_", "moment"), [
    ("startTime", "uint256", "now"), ("_openingTime", "uint64", "now"),
    ("releaseDate", "uint256", "end"), ("deadline", "uint256", "end"),
    ("lockDuration", "uint256", None), ("vestingPeriod", "uint256", None),
    ("endBlock", "uint256", None), ("start", "uint8", None), ("startTime", "int256", None),
    ("amount", "uint256", None), ("", "uint256", None),
])
def test_integers_named_as_moments_get_the_chain_time(name: str, type_: str,
                                                      moment: str | None) -> None:
    now = 1_700_000_000
    expected = {"now": now, "end": now + END_LEAD, None: None}[moment]
    assert moment_value(AbiParam(name, type_), now) == expected
    assert moment_value(AbiParam(name, type_), None) is None


@needs_node
def test_a_constructor_dated_by_its_arguments_opens_at_deployment() -> None:
    chain = TestChain.setup(compiled(SOLIDITY / "DatedSale.sol"), "DatedSale")
    assert chain.main is not None
    opening, duration = chain.main.args
    # The moment is the deployment block's time; the span stays a small number.
    assert opening == chain.env.timestamp and 1 <= duration <= 1000
