"""Attacker contracts: forwarding, the reverting fallback, bounded reentrancy; the assembler."""

from __future__ import annotations

import pytest

from secant.abi import Abi, decode, encode
from secant.chain import AttackerKind, ChainConfig, TestChain
from secant.chain.asm import Label, Ref, assemble, deployer
from secant.chain.attackers import (
    ANSWER_SELECTOR,
    ANSWER_SIGNATURE,
    ANSWER_SLOT,
    ATTACK_SELECTOR,
    ATTACKER_ABI,
    DEFAULT_ANSWER,
    MAX_DEPTH_SLOT,
    answer_calldata,
    answering_attacker_code,
    attack_calldata,
    costly_attacker_code,
    initial_storage,
    normal_attacker_code,
    reentrancy_attacker_code,
)
from secant.chain.deploy import DeployedContract

from .conftest import ETHER, FIXTURES, chain_fixture, compiled, needs_node

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
    normal, reentrant, costly, answering = chain.attacker_contracts
    assert (normal.kind, reentrant.kind, costly.kind, answering.kind) == (
        AttackerKind.NORMAL, AttackerKind.REENTRANCY, AttackerKind.COSTLY,
        AttackerKind.ANSWERING)
    assert chain.state.code(normal.address) == normal_attacker_code()
    assert chain.state.code(reentrant.address) == reentrancy_attacker_code()
    assert chain.state.code(costly.address) == costly_attacker_code()
    assert chain.state.code(answering.address) == answering_attacker_code()
    assert chain.contract("CostlyAttacker").address == costly.address
    assert chain.contract("AnsweringAttacker").address == answering.address
    assert chain.state.storage_at(reentrant.address, MAX_DEPTH_SLOT) == 3
    assert chain.state.storage_at(answering.address, ANSWER_SLOT) == DEFAULT_ANSWER
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


@pytest.mark.parametrize("length", [0, 1, 31, 32, 33, 100])
def test_attack_calldata_is_the_abi_encoding_of_the_attack_call(length: int) -> None:
    data = bytes(range(7, 7 + length))
    target, value = 0xDEAD << 140, (1 << 256) - 3
    expected = ATTACK_SELECTOR + encode(["address", "bytes", "uint256"],
                                        [target.to_bytes(20, "big"), data, value])
    assert attack_calldata(target, data, value) == expected
    with pytest.raises(ValueError, match="uint256"):
        attack_calldata(target, data, -1)


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


# ---------------------------------------------------------------------- the answering attacker
# A caller without a compiler: calls the address in its calldata's first word with
# ``foo()`` and returns (success, the output's length, the output's first word).
ASKER = 0xA5CE
ASKING = assemble([
    0xC2985578, 0xE0, "SHL", 0, "MSTORE",                    # foo()'s selector at 0
    32, 0x20, 4, 0, 0, 0, "CALLDATALOAD", "GAS", "CALL",     # ok; output to 0x20..0x40
    0x20, "MLOAD", 0x40, "MSTORE",                           # the word at 0x40
    "RETURNDATASIZE", 0x20, "MSTORE", 0, "MSTORE",           # the size at 0x20, ok at 0
    0x60, 0, "RETURN",
])


def _ask(chain: TestChain, address: int) -> tuple[bool, int, int]:
    """What ASKER saw when it called ``foo()`` on ``address``: (success, size, word)."""
    result = chain.transact("user1", ASKER, address.to_bytes(32, "big"))
    assert result.success
    ok, size, word = decode(["bool", "uint256", "uint256"], result.output)
    return ok, size, word


def test_the_answering_attacker_answers_any_call_with_the_word_it_was_given() -> None:
    chain = TestChain()
    chain.install(ASKER, ASKING)
    chain.seal()
    answering = chain.attacker("answering")
    assert _ask(chain, answering.address) == (True, 32, DEFAULT_ANSWER)
    # Whoever sends answer(word) sets what every later call is answered.
    assert chain.transact("attacker2", answering.address, answer_calldata(1850)).success
    assert chain.state.storage_at(answering.address, ANSWER_SLOT) == 1850
    assert _ask(chain, answering.address) == (True, 32, 1850)
    top = (1 << 256) - 1
    assert chain.transact("user2", answering.address, answer_calldata(top)).success
    assert _ask(chain, answering.address) == (True, 32, top)
    # Any selector it does not implement gets the answer; a short calldata too.
    direct = chain.transact("user1", answering.address, b"\x12\x34\x56\x78" + bytes(64))
    assert direct.success and direct.output == top.to_bytes(32, "big")
    assert chain.transact("user1", answering.address, b"\x01").output == top.to_bytes(32, "big")
    # The other attackers answer nothing: the normal one refuses, the costly one counts.
    assert _ask(chain, chain.attacker("normal").address) == (False, 0, 0)
    assert _ask(chain, chain.attacker("costly").address) == (True, 0, 0)
    chain.reset()
    assert _ask(chain, answering.address) == (True, 32, DEFAULT_ANSWER)


def test_the_answer_decodes_as_every_static_type() -> None:
    word = DEFAULT_ANSWER.to_bytes(32, "big")
    assert decode(["bool"], word) == (True,)
    assert decode(["uint8"], word) == (1,)
    assert int(decode(["address"], word)[0], 16) == 1
    assert decode(["bytes32"], word) == (word,)
    assert ATTACKER_ABI.function("answer").selector == ANSWER_SELECTOR
    assert ATTACKER_ABI.function("answer").signature == ANSWER_SIGNATURE
    assert initial_storage(AttackerKind.ANSWERING) == {ANSWER_SLOT: DEFAULT_ANSWER}
    assert initial_storage(AttackerKind.COSTLY) == {}


def test_the_answering_attacker_takes_payments_within_the_stipend() -> None:
    chain = TestChain()
    answering = chain.attacker("answering")
    before = chain.balance(answering)
    paid = chain.transact("user1", answering.address, b"", value=7)
    assert paid.success and paid.output == b"" and chain.balance(answering) == before + 7
    # With the 2300-gas stipend (send/transfer) it accepts too: it is no refusing recipient.
    sender = 0x5E4D
    chain.install(sender, assemble([0, 0, 0, 0, 5, answering.address, 0, "CALL",
                                    0, "MSTORE", 32, 0, "RETURN"]), balance=100)
    stipend = chain.transact("user1", sender, b"")
    assert stipend.success and decode(["uint256"], stipend.output) == (1,)
    assert chain.balance(answering) == before + 12
    # A payment with calldata is answered as any call.
    assert chain.transact("user1", answering.address, b"\xab" * 4, value=1).output == (
        DEFAULT_ANSWER.to_bytes(32, "big"))


def test_the_answering_attacker_answers_a_static_call_and_still_forwards() -> None:
    chain = _chain_with_target()
    answering = chain.attacker("answering")
    # STATICCALL (a view function of an interface): reading the answer writes nothing.
    asker = 0x57A7
    chain.install(asker, assemble([
        0, 0, 4, 0, answering.address, "GAS", "STATICCALL",
        0, "MSTORE", "RETURNDATASIZE", 32, "MSTORE", 64, 0, "RETURN"]))
    viewed = chain.transact("user1", asker, b"")
    assert decode(["bool", "uint256"], viewed.output) == (True, 32)
    # attack() forwards as on the other attackers; reentries() is 0.
    result = chain.attack(answering, "Target", "hit")
    assert result.success and result.value == 1
    assert chain.view(answering.name, "reentries").value == 0


@needs_node
def test_a_caller_trusting_the_answer_gets_the_word_the_search_chose(
        solc_installed: list[str]) -> None:
    feed = FIXTURES / "vulnerabilities" / "assertion" / "TrustedFeed.sol"
    chain = TestChain.setup(compiled(feed), contract="FeedDesk")
    answering = chain.attacker("answering")
    # The default answer (1) is out of the desk's band: refused.
    refused = chain.call("user1", "FeedDesk", "settle", [answering.address])
    assert refused.reverted and str(refused.revert) == "Error('price out of band')"
    # The reference price passes every check.
    assert chain.call("attacker1", answering.name, "answer", [1850]).success
    assert chain.call("user1", "FeedDesk", "settle", [answering.address]).success
    # Another price within the band fails the assert (Panic 0x01).
    assert chain.call("attacker1", answering.name, "answer", [2000]).success
    failed = chain.call("user1", "FeedDesk", "settle", [answering.address])
    assert failed.reverted and "0x01" in str(failed.revert)
    assert chain.view("FeedDesk", "settled").value == 1
