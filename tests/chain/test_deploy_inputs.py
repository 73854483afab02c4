"""Compile, deploy and call a contract from every kind of input and solc generation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from secant.chain.chain import TestChain

from .conftest import ETHER, FIXTURES, SOLIDITY, compiled, needs_node


@dataclass
class Case:
    """One input: how to deploy it and a few calls with their expected outcome."""

    path: Path
    version: str | None
    main: str
    args: list[Any] | None
    check: Callable[[TestChain], None]
    libraries: tuple[str, ...] = ()
    fuzzable: set[str] = field(default_factory=set)


def _check_04(chain: TestChain) -> None:
    user = chain.sender("user1")
    assert chain.call(user, "Simple04", "deposit", value=5 * ETHER).success  # via MathLib
    assert chain.view("Simple04", "balances", [user.address]).value == 5 * ETHER
    assert chain.view("Simple04", "total").value == 5 * ETHER
    assert chain.view("Simple04", "owner").value.lower() == chain.deployer.hex
    result = chain.call(user, "Simple04", "withdraw", [6 * ETHER])
    assert result.reverted and str(result.revert) == "Error('insufficient balance')"
    before = chain.balance(user)
    assert chain.call(user, "Simple04", "withdraw", [2 * ETHER]).success
    assert chain.balance(user) == before + 2 * ETHER  # the base fee is 0: gas is free


def _check_05(chain: TestChain) -> None:
    assert chain.view("Simple05", "stored").value == 7
    assert chain.call("user2", "Simple05", "set", [42]).success
    assert chain.view("Simple05", "get").value == 42
    failed = chain.call("attacker1", "Simple05", "set", [13])
    assert failed.reverted and failed.revert is not None
    assert failed.revert.kind == "error" and failed.revert.message == "unlucky"
    assert chain.view("Simple05", "owner").value.lower() == chain.deployer.hex


def _check_06(chain: TestChain) -> None:
    assert chain.call("user1", "Simple06", "bump", [5]).value == 5
    assert chain.call("user1", "Simple06", "bump", [2]).value == 7
    assert chain.view("Simple06", "name").value == "simple"
    assert chain.call("user1", "Simple06", "receive", value=3).success
    assert chain.balance("Simple06") == 3


def _check_07(chain: TestChain) -> None:
    assert chain.call("user1", "Simple07", "add", [(1, 2)]).success
    assert chain.call("user1", "Simple07", "add", [{"x": 3, "y": 4}]).success
    assert chain.view("Simple07", "points", [1]).values == (3, 4)
    assert chain.view("Simple07", "sum", [[1, 2, 3]]).value == 6


def _check_08(chain: TestChain) -> None:
    assert chain.call("deployer", "Simple08", "set", [5]).success
    assert chain.call("user1", "Simple08", "increment").success
    assert chain.view("Simple08", "value").value == 6
    denied = chain.call("attacker1", "Simple08", "set", [1])
    assert denied.revert is not None and denied.revert.kind == "custom"
    assert denied.revert.name == "NotOwner"
    assert denied.revert.args[0].lower() == chain.sender("attacker1").hex
    assert chain.view("Simple08", "owner").value.lower() == chain.deployer.hex  # immutable


def _check_vyper(chain: TestChain) -> None:
    assert chain.call("user1", "Counter", "add", [5]).value == 5
    assert chain.call("user1", "Counter", "add", [6]).value == 11
    too_large = chain.call("user1", "Counter", "add", [1000])
    assert too_large.revert is not None and too_large.revert.message == "too large"
    assert chain.view("Counter", "owner").value.lower() == chain.deployer.hex


def _check_foundry(chain: TestChain) -> None:
    assert chain.call("user1", "Counter", "setNumber", [7]).success
    assert chain.call("user2", "Counter", "increment").success
    assert chain.view("Counter", "number").value == 8


def _check_hardhat(chain: TestChain) -> None:
    assert chain.view("Greeter", "greet").value == "hi!"  # Shout is linked into the runtime
    assert chain.call("user1", "Greeter", "setGreeting", ["yo"]).success
    assert chain.view("Greeter", "greet").value == "yo!"
    empty = chain.call("user1", "Greeter", "setGreeting", [""])
    assert empty.revert is not None and empty.revert.message == "empty greeting"


def _check_bytecode(chain: TestChain) -> None:
    name = chain.main.name if chain.main else ""
    assert chain.view(name, "stored").value == 9
    assert chain.call("user1", name, "set", [3]).success
    assert chain.view(name, "get").value == 3


def _check_runtime(chain: TestChain) -> None:
    name = "Simple05Runtime"
    assert chain.view(name, "stored").value == 0  # no constructor ran
    assert chain.call("user1", name, "set", [3]).success
    assert chain.view(name, "get").value == 3
    assert chain.state.nonce(chain.main.address if chain.main else 0) == 1


SOLC_CASES = {
    "solc-0.4.26": Case(SOLIDITY / "Simple04.sol", "0.4.26", "Simple04", None, _check_04,
                        ("MathLib",), {"deposit()", "withdraw(uint256)"}),
    "solc-0.5.17": Case(SOLIDITY / "Simple05.sol", "0.5.17", "Simple05", ["7"], _check_05,
                        fuzzable={"set(uint256)"}),
    "solc-0.6.12": Case(SOLIDITY / "Simple06.sol", "0.6.12", "Simple06", None, _check_06,
                        fuzzable={"bump(uint256)", "receive()"}),
    "solc-0.7.6": Case(SOLIDITY / "Simple07.sol", "0.7.6", "Simple07", None, _check_07,
                       fuzzable={"add((uint128,uint128))"}),
    "solc-0.8-newest": Case(SOLIDITY / "Simple08.sol", None, "Simple08", [], _check_08,
                            fuzzable={"set(uint256)", "increment()"}),
}

OTHER_CASES = {
    "vyper": Case(FIXTURES / "vyper/Counter.vy", None, "Counter", None, _check_vyper,
                  fuzzable={"add(uint256)"}),
    "foundry": Case(FIXTURES / "foundry", None, "Counter", None, _check_foundry,
                    fuzzable={"setNumber(uint256)", "increment()"}),
    "hardhat": Case(FIXTURES / "hardhat", None, "Greeter", ["hi"], _check_hardhat, ("Shout",),
                    {"setGreeting(string)"}),
    "bytecode+abi": Case(FIXTURES / "bytecode/Simple05.bin", None, "Simple05", [9],
                         _check_bytecode, fuzzable={"set(uint256)"}),
    "runtime+abi": Case(FIXTURES / "bytecode/Simple05Runtime.bin-runtime", None,
                        "Simple05Runtime", None, _check_runtime, fuzzable={"set(uint256)"}),
}


def _run(case: Case) -> None:
    chain = TestChain.setup(compiled(case.path, case.version), args=case.args)
    assert chain.main is not None and chain.main.name == case.main
    assert chain.main.role == "main" and chain.state.code(chain.main.address)
    libraries = {c.name for c in chain.contracts if c.role == "library"}
    assert libraries == set(case.libraries)
    fuzzable = {f.signature for f in chain.fuzzable_functions()}
    assert fuzzable == case.fuzzable
    case.check(chain)
    chain.reset()
    case.check(chain)  # the same calls behave the same after a reset


@needs_node
@pytest.mark.parametrize("case", SOLC_CASES.values(), ids=SOLC_CASES.keys())
def test_deploy_and_call_each_solc_generation(solc_installed: list[str], case: Case) -> None:
    _run(case)


@pytest.mark.parametrize("case", OTHER_CASES.values(), ids=OTHER_CASES.keys())
def test_deploy_and_call_other_inputs(case: Case) -> None:
    if case.path.suffix == ".vy":
        pytest.importorskip("vyper", reason="the vyper package is not installed")
    _run(case)


@needs_node
def test_newest_08_is_used(solc_installed: list[str]) -> None:
    [compilation] = compiled(SOLIDITY / "Simple08.sol")
    assert compilation.compiler == f"solc {solc_installed[4]}"
