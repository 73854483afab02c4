"""Foundry test contracts: setUp() once, targets and senders chosen as forge chooses them."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from secant.compile import Compilation, load
from secant.targets.foundry import SetUpFailed, is_test_contract, set_up
from tests.compile.conftest import needs_node

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "foundry_style"


@functools.cache
def compiled() -> list[Compilation]:
    return load([FIXTURES / "Targets.t.sol"])


def chosen(name: str) -> dict[str, list[str]]:
    done = set_up(compiled(), name)
    return {contract.name: sorted(f.name for f in functions)
            for contract, functions in done.targets}


@needs_node
def test_default_targets_are_what_set_up_created_less_the_exclusions() -> None:
    # Alpha.a2 excluded by selector, the second Beta excluded as a contract; view functions
    # (getters, peek) are never targets.
    assert chosen("DefaultTargetsTest") == {"Alpha": ["a1"], "Beta": ["b1", "b2"]}
    done = set_up(compiled(), "DefaultTargetsTest")
    assert done.senders == [s.address for s in done.chain.senders]
    assert done.chain.main is not None and done.chain.main.name == "DefaultTargetsTest"


@needs_node
def test_target_contracts_selectors_and_senders_narrow_the_targets() -> None:
    # targetContracts names Alpha alone; targetSelectors adds Beta with b2 only.
    assert chosen("NarrowTargetsTest") == {"Alpha": ["a1", "a2"], "Beta": ["b2"]}
    done = set_up(compiled(), "NarrowTargetsTest")
    assert done.senders == [0x1001, 0x1002]
    # The senders the test names can pay for gas.
    assert all(done.chain.state.balance(s) > 0 for s in done.senders)


@needs_node
def test_set_up_state_is_the_sealed_state() -> None:
    done = set_up(compiled(), "DefaultTargetsTest")
    alpha = next(c for c, _ in done.targets if c.name == "Alpha")
    user = done.chain.sender("user1").address
    done.chain.call(user, alpha, "a1", [7])
    assert done.chain.view(alpha, "x").value == 7
    done.chain.reset()  # back to the state setUp() left: Alpha exists, x is 0
    assert done.chain.view(alpha, "x").value == 0


@needs_node
def test_a_reverting_set_up_is_one_line() -> None:
    with pytest.raises(SetUpFailed, match=r"BrokenSetUpTest.setUp\(\) reverted: .*no set-up"):
        set_up(compiled(), "BrokenSetUpTest")


@needs_node
def test_test_contracts_are_recognised() -> None:
    by_name = {c.name: c for comp in compiled() for c in comp.contracts}
    assert is_test_contract(by_name["NarrowTargetsTest"].abi.functions)
    assert not is_test_contract(by_name["Alpha"].abi.functions)
