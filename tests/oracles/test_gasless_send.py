"""The gasless-send oracle on hand-written cases, and the static look behind it.

sFuzz's gasless send: a payment with the 2300-gas stipend (``send``) to a recipient whose
fallback needs more gas (the chain's costly attacker writes storage) fails, and the
caller ignores the flag. The campaigns over the fixtures are in test_dataflow.py's tables.
"""

from __future__ import annotations

from collections.abc import Sequence

from secant.campaign.worker import default_senders, target_codes
from secant.chain.chain import TestChain
from secant.evm.crypto import keccak256
from secant.evm.opcodes import CALL
from secant.oracles import registry
from secant.oracles.flows import FlowOracle
from secant.oracles.gasless_send import STIPEND, stipend_payments
from secant.targets.contract import ContractRun, ContractTarget
from secant.targets.trace import dataflow_of
from secant.types import Finding, Tx
from tests.compile.conftest import needs_node
from tests.oracles.test_vulnerabilities import ETHER, Case, chain_of, compiled

ORACLE = "gasless-send"
THRONE = Case("gasless/Throne.sol", "Throne", ORACLE)
AUCTION = Case("gasless/RefundAuction.sol", "RefundAuction", ORACLE)
PULL = Case("gasless/PullRefunds.sol", "PullRefunds", ORACLE)
SPLIT = Case("gasless/FullGasSplit.sol", "FullGasSplit", ORACLE, value=ETHER)
CHECKED = Case("gasless/CheckedThrone.sol", "CheckedThrone", ORACLE)

Step = tuple[str, str, tuple[object, ...], int]  # sender, function, args, value


def account(chain: TestChain, name: object) -> object:
    """A sender, or an attacker contract by its kind (``costly``), by name; else as is."""
    if not isinstance(name, str):
        return name
    if name in ("normal", "reentrancy", "costly"):
        return chain.attacker(name).address
    return chain.sender(name).address


def run(case: Case, steps: Sequence[Step], force: bool = False
        ) -> tuple[list[Finding], ContractTarget, TestChain, ContractRun]:
    """The oracle's findings on a hand-written case (the target records the data flow)."""
    chain = chain_of(case)
    [oracle] = registry.build(chain, [ORACLE])
    assert isinstance(oracle, FlowOracle)
    if force:
        oracle.needs = frozenset({"calls"})
    target = ContractTarget(chain, frozenset({"dataflow", "calls", "panics"}))
    txs = tuple(Tx(function, tuple(account(chain, a) for a in args),
                   chain.attacker(sender).address if sender in ("normal", "costly")
                   else chain.sender(sender).address, value)
                for sender, function, args, value in steps)
    result = target.run(txs)
    return oracle.check(result, target), target, chain, result


@needs_node
def test_a_dethroned_costly_king_is_never_paid() -> None:
    steps: list[Step] = [("costly", "claim()", (), ETHER), ("user1", "claim()", (), 2 * ETHER)]
    [finding], target, chain, result = run(THRONE, steps)
    throne = chain.contract("Throne")
    assert all(o.success for o in result.outcomes)
    assert finding.swc == "SWC-104" and finding.function == "claim"
    assert finding.key == (ORACLE, keccak256(chain.code_at(throne.address)), finding.pc)
    assert finding.source is not None and finding.source.endswith("Throne.sol:22")
    assert "pay 1.98 ether to CostlyAttacker" in finding.detail
    assert "the 2300-gas stipend of send/transfer" in finding.detail
    assert "ran out of gas" in finding.detail and "confidence certain" in finding.detail
    # The calls recording saw the stipend, and the compensation stayed in the game (the
    # owner, the first king, takes none).
    [paid] = [c for c in result.calls if c.tx == 1 and c.value]
    assert paid.gas == STIPEND and not paid.success and not paid.reverted
    assert chain.state.balance(throne.address) == 3 * ETHER
    assert len(finding.case or ()) == 2


@needs_node
def test_a_king_that_takes_the_ether_or_refuses_it_is_no_gasless_send() -> None:
    # An account takes 2 ether with 2300 gas: the send worked.
    steps: list[Step] = [("user2", "claim()", (), ETHER), ("user1", "claim()", (), 2 * ETHER)]
    assert run(THRONE, steps)[0] == []
    # The normal attacker reverts: a failure, but not for want of gas (unchecked-call's).
    refused: list[Step] = [("normal", "claim()", (), ETHER),
                           ("user1", "claim()", (), 2 * ETHER)]
    findings, _, _, result = run(THRONE, refused)
    [paid] = [c for c in result.calls if c.tx == 1 and c.value]
    assert findings == [] and not paid.success and paid.reverted


@needs_node
def test_a_refund_of_zero_and_a_refund_to_the_costly_bidder() -> None:
    # The first bid refunds nobody; the second refunds the costly bidder, which starves.
    steps: list[Step] = [("costly", "bid()", (), 5), ("user1", "bid()", (), 9)]
    [finding] = run(AUCTION, steps)[0]
    assert "pay 5 wei to CostlyAttacker" in finding.detail
    assert finding.source is not None and finding.source.endswith("RefundAuction.sol:13")


@needs_node
def test_a_checked_send_that_fails_is_judged_and_not_reported() -> None:
    # PullRefunds tests the flag only for a refund above zero: no static look proves it,
    # so the oracle needs the calls recording and judges the replayed run.
    steps: list[Step] = [("costly", "bid()", (), 5), ("user1", "bid()", (), 9),
                         ("costly", "withdraw()", (), 0)]
    findings, target, chain, result = run(PULL, steps)
    [oracle] = registry.build(chain, [ORACLE])
    assert oracle.needs == frozenset({"calls"})
    flow = dataflow_of(result, target)
    assert flow is not None
    pull = chain.contract("PullRefunds").address
    [call] = [c for c in flow.calls if c.opcode == CALL and c.address == pull]
    assert not call.success and call.checked == "branch" and findings == []
    # The refund was kept for another try.
    assert chain.view("PullRefunds", "refunds", [chain.attacker("costly").address]).value == 5


@needs_node
def test_all_the_gas_pays_the_costly_member_and_a_transfer_reverts() -> None:
    # call{value:} with all the gas: the costly attacker keeps its books and is paid.
    steps: list[Step] = [("deployer", "add(address)", ("costly",), 0),
                         ("user2", "distribute()", (), 0)]
    findings, _, chain, result = run(SPLIT, steps, force=True)
    assert findings == [] and all(o.success for o in result.outcomes)
    assert chain.state.storage_at(chain.attacker("costly").address, 0) == 1
    # transfer's failure reverts the transaction: the payment is not lost (a denial of
    # service when one recipient blocks everybody, which this oracle does not report).
    bank = Case("reentrancy/Banks.sol", "Stipend", ORACLE)
    steps = [("costly", "deposit()", (), 7), ("costly", "withdraw()", (), 0)]
    findings, _, _, result = run(bank, steps, force=True)
    outcomes = result.outcomes
    assert findings == [] and outcomes[0].success and not outcomes[1].success


@needs_node
def test_the_static_look_finds_send_but_not_transfer_or_all_the_gas() -> None:
    def payments(file: str, contract: str) -> int:
        chain = TestChain.setup(compiled(file), contract=contract)
        return sum(len(stipend_payments(chain, code, code_hash))
                   for code_hash, (_, code) in target_codes(chain).items())

    assert payments("gasless/Throne.sol", "Throne") == 1
    assert payments("gasless/SplitPot.sol", "SplitPot") == 1
    assert payments("gasless/CheckedThrone.sol", "CheckedThrone") == 1  # checked, still a send
    assert payments("reentrancy/Banks.sol", "Stipend") == 0  # transfer reverts on failure
    assert payments("gasless/FullGasSplit.sol", "FullGasSplit") == 0  # all the gas


@needs_node
def test_the_costly_attacker_sends_only_where_a_send_may_fail_quietly() -> None:
    def senders(file: str, contract: str) -> set[str]:
        chain = TestChain.setup(compiled(file), contract=contract)
        names = {address: name for name, address in chain.names().items()}
        return {names[s] for s in default_senders(chain, target_codes(chain))}

    five = {"deployer", "user1", "user2", "attacker1", "attacker2"}
    assert senders("gasless/Throne.sol", "Throne") == five | {"CostlyAttacker"}
    assert senders("gasless/PullRefunds.sol", "PullRefunds") == five | {"CostlyAttacker"}
    assert senders("reentrancy/Banks.sol", "Stipend") == five
    assert senders("gasless/FullGasSplit.sol", "FullGasSplit") == five | {
        "ReentrancyAttacker"}


@needs_node
def test_a_checked_send_needs_nothing_and_two_starved_sends_are_one_finding() -> None:
    # CheckedThrone credits a failed compensation: every flag is tested, no recording.
    chain = chain_of(CHECKED)
    [oracle] = registry.build(chain, [ORACLE])
    assert oracle.needs == frozenset()
    steps: list[Step] = [("costly", "claim()", (), ETHER), ("user1", "claim()", (), 2 * ETHER)]
    findings, _, chain, _ = run(CHECKED, steps, force=True)
    costly = chain.attacker("costly").address
    assert findings == [] and chain.view("CheckedThrone", "owed", [costly]).value > 0
    # The costly attacker joins SplitPot twice: one payout, two starved sends, one site.
    pot = Case("gasless/SplitPot.sol", "SplitPot", ORACLE, value=ETHER)
    steps = [("costly", "join()", (), 0), ("costly", "join()", (), 0),
             ("user1", "join()", (), 0), ("user2", "distribute()", (), 0)]
    [finding], _, chain, result = run(pot, steps)
    starved = [c for c in result.calls if c.target == costly and c.value]
    assert len(starved) == 2 and not any(c.success for c in starved)
    assert "SplitPot.sol:23" in (finding.source or "")
