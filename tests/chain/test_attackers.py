"""Attacker contracts: forwarding, the reverting fallback, bounded reentrancy; the assembler."""

from __future__ import annotations

import pytest

from secant.abi import Abi, decode
from secant.chain import AttackerKind, ChainConfig, TestChain
from secant.chain.asm import Label, Ref, assemble, deployer
from secant.chain.attackers import (
    ATTACK_SELECTOR,
    ATTACKER_ABI,
    MAX_DEPTH_SLOT,
    attack_calldata,
    costly_attacker_code,
    normal_attacker_code,
    reentrancy_attacker_code,
)
from secant.chain.deploy import DeployedContract

from .conftest import ETHER, chain_fixture, needs_node

# A target without a compiler: counts its calls in slot 0, then calls its caller back with
# empty calldata (so an attacker's fallback runs) and returns the count.
CALLBACK_TARGET = assemble([
    0, "SLOAD", 1, "ADD", "DUP1", 0, "SSTORE",        # count += 1, count on the stack
    0, 0, 0, 0, 0, "CALLER", "GAS", "CALL", "POP",     # call the caller back, ignore result
    0, "MSTORE", 32, 0, "RETURN",                      # return count
])
TARGET = 0xCAFE
COUNTER_ABI = Abi.from_json([{"type": "function", "name": "hit", "inputs": [],
                              "outputs": [{"name": "", "type": "uint256"}],
                              "stateMutability": "nonpayable"}])


def _chain_with_target(config: ChainConfig | None = None) -> TestChain:
    chain = TestChain(config)
    chain.install(TARGET, CALLBACK_TARGET)
    chain.book.add(DeployedContract("Target", TARGET, COUNTER_ABI, "main"))
    chain.seal()
    return chain


def test_assembler_labels_pushes_and_errors() -> None:
    code = assemble([0, 255, 256, Ref("end"), "JUMP", Label("end"), "STOP"])
    assert code.hex() == "6000" "60ff" "610100" "61000b" "56" "5b" "00"
    with pytest.raises(ValueError, match="undefined label"):
        assemble([Ref("nowhere")])
    with pytest.raises(ValueError, match="unknown or unsupported mnemonic"):
        assemble(["PUSH1"])
    with pytest.raises(ValueError, match="defined twice"):
        assemble([Label("a"), Label("a")])
    with pytest.raises(ValueError, match="256-bit"):
        assemble([1 << 256])


def test_deployer_wraps_runtime_code() -> None:
    chain = TestChain()
    runtime = normal_attacker_code()
    result = chain.transact("deployer", None, deployer(runtime))
    assert result.success and result.created_address is not None
    assert chain.state.code(result.created_address) == runtime


def test_attackers_are_installed_with_abi_and_balance() -> None:
    chain = TestChain()
    normal, reentrant, costly = chain.attacker_contracts
    assert (normal.kind, reentrant.kind, costly.kind) == (
        AttackerKind.NORMAL, AttackerKind.REENTRANCY, AttackerKind.COSTLY)
    assert chain.state.code(normal.address) == normal_attacker_code()
    assert chain.state.code(reentrant.address) == reentrancy_attacker_code()
    assert chain.state.code(costly.address) == costly_attacker_code()
    assert chain.contract("CostlyAttacker").address == costly.address
    assert chain.state.storage_at(reentrant.address, MAX_DEPTH_SLOT) == 3
    assert chain.contract("NormalAttacker").abi is ATTACKER_ABI
    assert chain.balance(normal) > 0
    assert ATTACKER_ABI.function("attack").selector == ATTACK_SELECTOR
    assert chain.attacker("reentrancy") is reentrant
    assert not TestChain(ChainConfig(attacker_contracts=False)).attacker_contracts


def test_normal_attacker_fallback_reverts() -> None:
    chain = _chain_with_target()
    normal = chain.attacker("normal")
    paid = chain.transact("user1", normal.address, b"", value=1)
    assert paid.reverted  # receiving ether fails
    assert chain.transact("user1", normal.address, b"\x12\x34\x56\x78").reverted
    # attack() forwards; the target's callback into the attacker fails, which the target
    # ignores here, so the call as a whole succeeds and returns the target's output
    result = chain.attack(normal, "Target", "hit")
    assert result.success and result.value == 1
    assert chain.state.storage_at(TARGET, 0) == 1


def test_costly_attacker_accepts_only_with_more_than_the_stipend() -> None:
    chain = _chain_with_target()
    costly = chain.attacker("costly")
    before = chain.balance(costly)
    paid = chain.transact("user1", costly.address, b"", value=7)
    assert paid.success and chain.balance(costly) == before + 7
    assert chain.state.storage_at(costly.address, 0) == 1  # the fallback counted it
    # With the 2300-gas stipend (a CALL with value and gas 0: send/transfer) it runs out.
    sender = 0x5E4D
    chain.install(sender, assemble([0, 0, 0, 0, 5, costly.address, 0, "CALL",
                                    0, "MSTORE", 32, 0, "RETURN"]), balance=100)
    stipend = chain.transact("user1", sender, b"")
    assert stipend.success and decode(["uint256"], stipend.output) == (0,)  # the send failed
    assert chain.balance(sender) == 100 and chain.state.storage_at(costly.address, 0) == 1
    # attack() forwards like the normal attacker's; the target's callback is accepted.
    assert chain.attack(costly, "Target", "hit").success
    assert chain.state.storage_at(costly.address, 0) == 2


@pytest.mark.parametrize("depth", [0, 1, 3, 5])
def test_reentrancy_attacker_reenters_with_bounded_depth(depth: int) -> None:
    chain = _chain_with_target(ChainConfig(max_reentrancy_depth=depth))
    attacker = chain.attacker("reentrancy")
    result = chain.attack(attacker, "Target", "hit")
    assert result.success
    assert chain.state.storage_at(TARGET, 0) == depth + 1  # the first call plus re-entries
    assert chain.view("ReentrancyAttacker", "reentries").value == depth
    # the next attack starts counting again
    assert chain.attack(attacker, "Target", "hit").success
    assert chain.state.storage_at(TARGET, 0) == 2 * (depth + 1)
    chain.reset()
    assert chain.state.storage_at(TARGET, 0) == 0


def test_attack_forwards_calldata_value_and_reverts() -> None:
    chain = TestChain()
    echo = assemble([  # returns (caller, callvalue, calldata word 0); reverts on empty data
        "CALLDATASIZE", Ref("go"), "JUMPI", 0, 0, "REVERT",
        Label("go"), "CALLER", 0, "MSTORE", "CALLVALUE", 32, "MSTORE",
        0, "CALLDATALOAD", 64, "MSTORE", 96, 0, "RETURN",
    ])
    chain.install(0xEC40, echo)
    normal = chain.attacker("normal")
    before = chain.balance(normal)
    data = attack_calldata(0xEC40, b"\xaa" * 32, 5)
    result = chain.transact("attacker1", normal.address, data)
    assert result.success
    caller, value, word = decode(["address", "uint256", "bytes32"], result.output)
    assert int(caller, 16) == normal.address and value == 5 and word == b"\xaa" * 32
    assert chain.balance(normal) == before - 5 and chain.balance(0xEC40) == 5
    failed = chain.transact("attacker1", normal.address, attack_calldata(0xEC40, b"", 0))
    assert failed.reverted and failed.output == b""


@needs_node
def test_reentrancy_drains_a_vulnerable_bank(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Bank.sol"))
    attacker = chain.attacker("reentrancy")
    assert chain.call("user1", "Bank", "deposit", value=10 * ETHER).success
    assert chain.attack(attacker, "Bank", "deposit", value=ETHER).success
    before = chain.balance(attacker)
    result = chain.attack(attacker, "Bank", "withdraw")
    assert result.success
    # withdraw() ran once and re-entered itself three times, paying out each time
    assert chain.view("Bank", "withdrawals").value == 4
    assert chain.view(attacker.name, "reentries").value == 3
    assert chain.balance(attacker) == before + 4 * ETHER
    assert chain.view("Bank", "reserves").value == 7 * ETHER


@needs_node
def test_normal_attacker_makes_a_send_fail(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Bank.sol"))
    assert chain.attack("normal", "Bank", "deposit", value=ETHER).success
    result = chain.attack("normal", "Bank", "withdraw")
    assert result.reverted and str(result.revert) == "Error('send failed')"


@needs_node
def test_transfer_stipend_is_accepted_without_reentry(solc_installed: list[str]) -> None:
    chain = TestChain.setup(chain_fixture("Bank.sol"))
    attacker = chain.attacker("reentrancy")
    assert chain.attack(attacker, "Bank", "deposit", value=ETHER).success
    before = chain.balance(attacker)
    assert chain.attack(attacker, "Bank", "withdrawWithTransfer").success
    assert chain.view(attacker.name, "reentries").value == 0
    assert chain.balance(attacker) == before + ETHER
    normal = chain.attacker("normal")
    assert chain.attack(normal, "Bank", "deposit", value=ETHER).success
    refused = chain.attack(normal, "Bank", "withdrawWithTransfer")
    assert refused.reverted
