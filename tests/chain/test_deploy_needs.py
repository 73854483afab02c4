"""What a constructor needs that nobody passed: ether it demands, contracts behind addresses."""

from __future__ import annotations

from pathlib import Path

import pytest

from secant.chain.chain import TestChain
from secant.chain.deploy import CONSTRUCTOR_ETHER
from secant.chain.errors import ConstructorReverted

from .conftest import CHAIN_FIXTURES, compiled, needs_node

pytestmark = needs_node

DEPOSITS = CHAIN_FIXTURES / "Deposits.sol"
JOURNAL = (Path(__file__).resolve().parents[1] / "fixtures" / "vulnerabilities" /
           "reentrancy" / "JournalBank.sol")


def test_a_payable_constructor_that_wants_ether_is_given_some_and_says_so() -> None:
    chain = TestChain.setup(compiled(DEPOSITS), contract="NeedsDeposit")
    main = chain.main
    assert main is not None
    assert chain.view(main, "deposit").value == CONSTRUCTOR_ETHER[0] == chain.balance(main)
    assert any("reverted without ether; deployed with 1000000000000000000 wei (pass --value"
               in note for note in main.notes)


def test_ether_that_does_not_help_is_named_in_the_error_with_the_fix() -> None:
    for contract, reason in (("ExactDeposit", "send exactly 3 wei"), ("NeverDeploys", "closed")):
        with pytest.raises(ConstructorReverted) as raised:
            TestChain.setup(compiled(DEPOSITS), contract=contract)
        line = raised.value.one_line()
        assert reason in line and "also with ether: pass --value WEI" in line


def test_a_given_value_is_the_one_sent() -> None:
    chain = TestChain.setup(compiled(DEPOSITS), contract="ExactDeposit", value=3)
    assert chain.main is not None and chain.balance(chain.main) == 3
    assert not any("without ether" in note for note in chain.main.notes)


def test_an_address_the_constructor_only_converts_to_a_contract_gets_one() -> None:
    [compilation] = compiled(JOURNAL)
    bank = next(c for c in compilation.contracts if c.name == "JournalBank")
    assert bank.abi.constructor is not None
    [param] = bank.abi.constructor.inputs
    assert (param.type, param.internal_type) == ("address", "contract Journal")
    chain = TestChain.setup([compilation], contract="JournalBank")
    journal = next(c for c in chain.contracts if c.name == "Journal")
    assert journal.role == "dependency" and chain.main is not None
    assert chain.main.args == (journal.address,)
    user = chain.sender("user1")
    assert chain.call(user, "JournalBank", "deposit", value=5).success
    assert chain.view(journal, "entries").value == 1


def test_an_address_kept_as_an_address_too_is_left_to_the_generator() -> None:
    [compilation] = compiled(JOURNAL)
    either = next(c for c in compilation.contracts if c.name == "JournalOrOwner")
    assert either.abi.constructor is not None
    assert either.abi.constructor.inputs[0].internal_type is None
