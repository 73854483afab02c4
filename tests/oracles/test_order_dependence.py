"""The order-dependence oracle (SWC-114): a payout another sender cuts by going first.

The oracle swaps a run's last two transactions (``PostState.run_variant``) when the first
may have changed what the second pays its sender, and reports when the second, run first,
is paid more. Campaigns over the fixtures find the vulnerable contracts within a fixed
seed and budget and leave the look-alikes (a fixed reward, quoted prices, independent
withdrawals, an auction's refunds, a capped sale's refunds) alone; hand-written cases pin
the direction of the harm, the swap and what is never replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from secant.evm.crypto import keccak256
from secant.oracles import registry
from secant.oracles.exits import scan
from secant.oracles.order_dependence import OrderDependenceOracle
from secant.targets.contract import ContractRun, ContractTarget
from secant.types import Finding, Tx, TxSeq
from tests.compile.conftest import needs_node
from tests.oracles.hand import hand_case
from tests.oracles.test_vulnerabilities import ETHER, Case, campaign_of, chain_of, line_of

ORACLE = "order-dependence"

# Budgets are about three times what seed 0 needs today (the comment: executions to find).
VULNERABLE = [
    Case("order/Bounty.sol", "RewardBoard", ORACLE, 0, 2700, ETHER,
         marker="payable(msg.sender).transfer(reward)", confidence="likely"),  # 895
    Case("order/BuyBack.sol", "BuyBack", ORACLE, 0, 2000, ETHER,
         marker="msg.sender.transfer(count * price)", confidence="likely"),  # 678
    Case("order/FeeVault.sol", "FeeVault", ORACLE, 0, 1500,
         marker="msg.sender.transfer(amount - fee)", confidence="likely"),  # 474
]

SAFE = [
    Case("order/Bounty.sol", "FixedBoard", ORACLE, value=ETHER),
    Case("order/BuyBack.sol", "QuotedBuyBack", ORACLE, value=ETHER),
    Case("order/Independent.sol", "SavingsBank", ORACLE),
    Case("order/Independent.sol", "PullAuction", ORACLE),
    Case("order/Independent.sol", "CappedSale", ORACLE),
]

BOARD, BUYBACK, VAULT = VULNERABLE
BANK = SAFE[2]

Step = tuple[str, str, tuple[object, ...], int]  # sender, function, args, value


def check(case: Case, steps: Sequence[Step]) -> tuple[list[Finding], ContractTarget, ContractRun,
                                                  OrderDependenceOracle]:
    """The oracle's findings on a hand-written case, its target, run and oracle."""
    txs, target, oracle = hand_case(chain_of(case), ORACLE, steps)
    assert isinstance(oracle, OrderDependenceOracle)
    result = target.run(txs)
    return oracle.check(result, target), target, result, oracle


@needs_node
@pytest.mark.parametrize("case", VULNERABLE, ids=[case.id for case in VULNERABLE])
def test_a_payout_another_sender_can_cut_is_found(case: Case) -> None:
    chain = chain_of(case)
    campaign = campaign_of(case, chain, case.contract)
    campaign.run()
    [finding] = [f for f in campaign.findings.values() if f.contract == case.contract]
    assert finding.oracle == finding.kind == ORACLE and finding.swc == "SWC-114"
    assert finding.severity == "medium" and finding.confidence == "likely"
    assert finding.execs_to_find <= case.budget
    assert "Severity medium, confidence likely:" in finding.detail
    assert finding.source is not None
    assert finding.source.endswith(f"{Path(case.file).name}:{line_of(case)}")
    # The finding's case shows it again on a fresh chain, with a fresh oracle.
    fresh = chain_of(case)
    [again] = registry.build(fresh, [ORACLE])
    target = ContractTarget(fresh, again.needs | {"panics"})
    assert finding.case is not None and len(finding.case) >= 2
    assert finding.key in {f.key for f in again.check(target.run(finding.case), target)}
    # The last two transactions come from different senders; the first is the owner's.
    other, victim = finding.case[-2:]
    assert other.sender == fresh.deployer.address != victim.sender


@needs_node
@pytest.mark.parametrize("case", SAFE, ids=[case.id for case in SAFE])
def test_a_payout_no_one_can_cut_is_not_reported(case: Case,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    chain = chain_of(case)
    campaign = campaign_of(Case(case.file, case.contract, ORACLE, 0, 3000, case.value),
                           chain, None)
    variants: list[TxSeq] = []
    real = ContractTarget.run_variant

    def counting(self: ContractTarget, case: TxSeq, *args: object,
                 **kwargs: object) -> ContractRun:
        variants.append(case)
        return real(self, case, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ContractTarget, "run_variant", counting)
    summary = campaign.run()
    assert summary["findings"] == []
    # The payments ran: the verdict is the oracle's, not a lack of coverage.
    covered = campaign.fuzzer.coverage.blocks
    code = chain.code_at(chain.contract(case.contract).address)
    code_hash = keccak256(code)
    exits = scan(code, code_hash, chain.fork).exits
    assert exits and all((code_hash, site.block) in covered for site in exits)
    # Few runs are worth a swap: under one in fifty.
    assert len(variants) < 60


@needs_node
def test_only_a_cut_is_reported_not_a_raise() -> None:
    lower: list[Step] = [("deployer", "setReward(uint256)", (10,), 0),
             ("attacker1", "claim(uint256)", (3,), 0)]
    [finding], target, result, oracle = check(BOARD, lower)
    assert oracle.needs == {"calls"}  # it pays by CALL only: no self-destruct to record
    assert finding.key == (ORACLE, target.chain.contract("RewardBoard").address,
                           "claim(uint256)", "setReward(uint256)")
    assert "RewardBoard paid attacker1 10 wei" in finding.detail
    assert "claim ran first and was paid 1000 wei (then setReward succeeded)" in (
        finding.detail)
    assert "cut the payout by 990 wei" in finding.detail
    assert finding.case == result.case and target.replays == 1
    # A raise before the claim pays the claimer more: no loss, no finding.
    raise_ = [("deployer", "setReward(uint256)", (5000,), 0),
              ("attacker1", "claim(uint256)", (3,), 0)]
    findings, target, _, _ = check(BOARD, raise_)
    assert findings == [] and target.replays == 1
    # The claim first, then the change: the last transaction is paid nothing.
    findings, target, _, _ = check(BOARD, list(reversed(lower)))
    assert findings == [] and target.replays == 0


@needs_node
def test_a_fee_raised_ahead_of_a_withdrawal_three_transactions_in() -> None:
    steps = [("user1", "deposit()", (), 1000), ("deployer", "setFee(uint256)", (30,), 0),
             ("user1", "withdraw()", (), 0)]
    [finding], _, _, _ = check(VAULT, steps)
    assert "FeeVault paid user1 700 wei" in finding.detail
    assert "was paid 990 wei" in finding.detail
    assert "transaction 2 of 3 (deployer calling setFee(uint256) on FeeVault)" in (
        finding.detail)


@needs_node
def test_what_is_never_replayed() -> None:
    # The same sender twice: nobody to race.
    steps = [("deployer", "setReward(uint256)", (10,), 0),
             ("deployer", "claim(uint256)", (3,), 0)]
    findings, target, _, _ = check(BOARD, steps)
    assert findings == [] and target.replays == 0
    # A payment that carries ether buys something: its refunds are not judged.
    chain = chain_of(SAFE[4])
    [oracle] = registry.build(chain, [ORACLE])
    target = ContractTarget(chain, oracle.needs)
    users = [chain.sender(name).address for name in ("user1", "user2")]
    case = (Tx("buy()", (), users[0], 9000), Tx("buy()", (), users[1], 1500))
    result = target.run(case)
    assert [c.value for c in result.calls if c.value] == [500]  # the refund ran
    assert oracle.check(result, target) == [] and target.replays == 0
    # A quote fixes the price: the new price was written where the sale does not read.
    quoted = Case("order/BuyBack.sol", "QuotedBuyBack", ORACLE, value=ETHER)
    quote: list[Step] = [("user1", "quote()", (), 0),
                         ("deployer", "setPrice(uint256)", (5,), 0),
                         ("user1", "sell(uint256)", (3,), 0)]
    findings, target, _, _ = check(quoted, quote)
    assert findings == [] and target.replays == 0


@needs_node
def test_independent_withdrawals_are_swapped_once_and_pay_the_same() -> None:
    steps = [("user1", "deposit()", (), 1000), ("user2", "deposit()", (), 500),
             ("user1", "withdraw()", (), 0)]
    findings, target, result, oracle = check(BANK, steps)
    # user2's deposit wrote the total user1's withdrawal reads: worth a swap, which pays
    # user1 the same 1000 wei.
    assert findings == [] and target.replays == 1
    # The same shape again is not swapped again.
    assert oracle.check(target.run(result.case), target) == [] and target.replays == 1


def test_the_swap_keeps_the_victim_s_block_and_time() -> None:
    other = Tx("setPrice(uint256)", (5,), 1, blocks=2, time=30)
    victim = Tx("sell(uint256)", (3,), 2, blocks=1, time=12, storage=((0, 1),))
    first = Tx("join()", (), 2, blocks=1, time=12)
    swapped = OrderDependenceOracle._swapped((first, other, victim), 1)
    assert swapped[0] == first
    assert (swapped[1].function, swapped[1].blocks, swapped[1].time) == ("sell(uint256)", 3, 42)
    assert swapped[1].storage == ()
    assert (swapped[2].function, swapped[2].blocks, swapped[2].time) == ("setPrice(uint256)",
                                                                         0, 0)
