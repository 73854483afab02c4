"""Quality of sequence fuzzing (issue 5): multi-transaction bugs within fixed budgets.

Harvey's demand-driven sequences (configuration A, the default) against eager sequences
(configuration D), sFuzz's adaptive seeds, and the papers' stateful examples. Medians over
10 seeds for every example and configuration: bench/sequences.py and docs/engine.md.
"""

from __future__ import annotations

import functools
import statistics
from pathlib import Path

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.engine.events import OnRun
from secant.engine.harvey.policy import HarveyPolicy
from secant.types import RunResult
from tests.compile.conftest import needs_node

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "contracts"


@functools.cache
def compiled(file: str) -> list[Compilation]:
    return load([EXAMPLES / file])


def campaign(file: str, contract: str, **config: object) -> Campaign:
    chain = TestChain.setup(compiled(file), contract=contract)
    return Campaign(chain, CampaignConfig(FuzzConfig(**config)))  # type: ignore[arg-type]


def lines(summary: dict[str, object]) -> dict[int, dict[str, object]]:
    findings = summary["findings"]
    assert isinstance(findings, list)
    return {int(f["source"].rsplit(":", 1)[1]): f for f in findings if f["source"]}


@needs_node
def test_foo_needs_a_sequence_and_demand_driven_fuzzing_builds_it() -> None:
    run = campaign("HarveyFoo.sol", "Foo", seed=1, max_execs=3000)
    summary = run.run()
    bar = lines(summary)[17]  # assert(false) in Bar
    sequence = bar["sequence"]
    assert isinstance(sequence, list) and sequence[-1]["function"] == "Bar()"
    calls = [(tx["function"], tx["args"]) for tx in sequence]
    # Either SetY(42) then CopyY (in that order, before Bar) or 42 increments.
    set_42 = [i for i, call in enumerate(calls) if call == ("SetY(int256)", [42])]
    copies = [i for i, call in enumerate(calls) if call[0] == "CopyY()"]
    assert (set_42 and copies and set_42[0] < copies[-1]) or \
        sum(1 for call in calls if call[0] == "IncX()") >= 42
    sequences = summary["sequences"]
    assert "Bar()" in sequences["demanding"]
    assert sequences["aggressive_probes"] > 0 and sequences["aggressive_hits"] > 0
    # Aggressive-mode inputs (state overrides) never reach the corpus or the findings.
    assert all(not tx.storage for seed in run.fuzzer.corpus.seeds for tx in seed.case)
    assert all("storage" not in tx for tx in sequence)


@needs_node
def test_single_transaction_mode_cannot_reach_bar() -> None:
    summary = campaign("HarveyFoo.sol", "Foo", seed=1, max_execs=3000, sequences="off").run()
    assert 17 not in lines(summary)
    assert summary["sequences"]["lengths"] == {1: len(campaign_corpus(summary))}


def campaign_corpus(summary: dict[str, object]) -> list[object]:
    lengths = summary["sequences"]["lengths"]  # type: ignore[index]
    return [None] * sum(lengths.values())


@needs_node
def test_stateful_maze_assertions_at_depths_3_6_and_10() -> None:
    found = lines(campaign("StatefulMaze.sol", "StatefulMaze", seed=0, max_execs=6000).run())
    assert {40, 46, 55} <= set(found)
    assert len(found[40]["sequence"]) >= 3 and len(found[46]["sequence"]) >= 6
    assert len(found[55]["sequence"]) >= 10
    assert found[55]["sequence"][-1]["args"] == [0xDEAD]


@needs_node
def test_crowdsale_reaches_withdraw_and_refund() -> None:
    """ILF Fig. 2: invest up to the goal then setPhase(1); or time travel, setPhase(2)."""
    run = campaign("Crowdsale.sol", "Crowdsale", seed=0, max_execs=20000)
    reached: dict[str, RunResult] = {}

    def observe(result: RunResult) -> None:
        last = result.case[-1]
        if result.last_outcome.success and last.function in ("withdraw()", "refund()"):
            reached.setdefault(last.function, result)

    run.listen(OnRun(observe))
    summary = run.run()
    assert set(reached) == {"withdraw()", "refund()"}
    refund = reached["refund()"].case
    assert any(tx.function == "setPhase(uint256)" and tx.args == (2,) for tx in refund)
    assert sum(tx.time for tx in refund) > 60 * 86400  # past `end`
    assert summary["prefix_cache"]["hits"] > 0


@needs_node
def test_caller_bank_early_withdrawal_by_one_sender() -> None:
    """deposit, lock and withdraw must come from one sender (mappings keyed by msg.sender)."""
    found = lines(campaign("CallerBank.sol", "CallerBank", seed=0, max_execs=3000).run())
    sequence = found[28]["sequence"]
    assert [tx["function"] for tx in sequence][-1] == "withdraw(uint256)"
    calls = {(tx["function"], tx["sender"]) for tx in sequence[:-1]}
    user = sequence[-1]["sender"]
    assert {("deposit()", user), ("lock(uint256)", user)} <= calls  # its own, first
    assert 0 < sequence[-1]["args"][0] < 10


@needs_node
def test_grants_claimed_whole_after_the_owner_granted_the_claimant() -> None:
    """grant(to) by the owner writes grants[to]; claim() reads grants[msg.sender]."""
    run = campaign("Grants.sol", "Grants", seed=0, max_execs=3000)
    sequence = lines(run.run())[25]["sequence"]

    def granted_before(at: int) -> bool:
        claim = sequence[at]
        claimant = run.chain.sender(claim["sender"]).address
        # The owner (deployer) granted this very claimant the amount it claims whole.
        return any(tx["function"] == "grant(address,uint256)" and tx["sender"] == "deployer"
                   and tx["args"] == [claimant, claim["args"][0]] for tx in sequence[:at])

    assert any(tx["function"] == "claim(uint256)" and granted_before(at)
               for at, tx in enumerate(sequence))


@needs_node
def test_allowance_spent_in_full_by_the_approved_spender() -> None:
    """approve(spender) writes allowance[msg.sender][spender]; transferFrom(from, ...)
    reads allowance[from][msg.sender]: two senders, one mapping entry."""
    run = campaign("Allowances.sol", "Allowances", seed=0, max_execs=3000)
    sequence = lines(run.run())[26]["sequence"]
    address = {name: run.chain.sender(name).address
               for name in {tx["sender"] for tx in sequence}}

    def approved_before(at: int) -> bool:
        pull = sequence[at]
        owner, spender = pull["args"][0], address[pull["sender"]]
        return any(tx["function"] == "approve(address,uint256)"
                   and address[tx["sender"]] == owner and tx["args"][0] == spender
                   for tx in sequence[:at])

    assert any(tx["function"] == "transferFrom(address,address,uint256)"
               and approved_before(at) for at, tx in enumerate(sequence))


@needs_node
def test_multiple_objectives_both_found_through_the_square() -> None:
    found = lines(campaign("SFuzzExamples.sol", "MultipleObjectives", seed=0,
                           max_execs=1000).run())
    assert {11, 14} <= set(found)
    assert abs(found[11]["sequence"][0]["args"][0]) == 10
    assert abs(found[14]["sequence"][0]["args"][0]) == 100


@needs_node
@pytest.mark.parametrize(("file", "contract", "line", "budget"), [
    ("HarveyFoo.sol", "Foo", 17, 2000),            # Harvey Fig. 2: SetY(42); CopyY(); Bar()
    ("StatefulMaze.sol", "StatefulMaze", 46, 8000),  # the depth-6 assertion
])
def test_demand_driven_beats_eager(file: str, contract: str, line: int, budget: int) -> None:
    """Harvey's RQ3 (configuration A against D): median executions to an assertion, 10 seeds."""

    def execs_to_assertion(seed: int, sequences: str) -> int:
        run = campaign(file, contract, seed=seed, max_execs=budget, sequences=sequences)
        hit: list[int] = []

        def observe(result: RunResult) -> None:
            if not hit and result.panics and any(
                    site.source and site.source.endswith(f":{line}")
                    for site in run.oracles[0].check(result, None)):
                hit.append(run.fuzzer.stats.execs)
                run.fuzzer.stop()

        run.listen(OnRun(observe))
        run.run()
        return hit[0] if hit else budget

    demand = statistics.median(execs_to_assertion(seed, "demand") for seed in range(10))
    eager = statistics.median(execs_to_assertion(seed, "eager") for seed in range(10))
    assert demand < eager, (demand, eager)


@needs_node
def test_same_seed_same_sequence_campaign() -> None:
    def fingerprint() -> tuple[object, ...]:
        run = campaign("HarveyFoo.sol", "Foo", seed=4, max_execs=1500)
        summary = run.run()
        return (summary["sequences"], summary["adaptive"],
                [s.case for s in run.fuzzer.corpus.seeds])
    assert fingerprint() == fingerprint()


@needs_node
def test_opposite_game_pays_out_after_start_quiz_game() -> None:
    """sFuzz Fig. 1: Try(answer) with exactly 0.1 ether after start_quiz_game(q, answer)."""
    run = campaign("SFuzzExamples.sol", "OppositeGame", seed=0, max_execs=3000)
    paid: list[RunResult] = []

    def observe(result: RunResult) -> None:
        # The `msg.value == 0.1 ether` comparison ran and held: the payout branch.
        if not paid and any(lhs == rhs == 10 ** 17 for *_, lhs, rhs in result.branches):
            paid.append(result)

    run.listen(OnRun(observe))
    run.run()
    [result] = paid
    start = next(tx for tx in result.case if tx.function.startswith("start_quiz_game"))
    last = result.case[-1]
    assert last.function == "Try(string)" and last.value == 10 ** 17
    assert last.args[0] == start.args[1]  # the response is the answer


@needs_node
def test_progress_view_shows_the_sequence_counters() -> None:
    from rich.console import Console

    from secant.campaign.progress import ProgressView

    run = campaign("HarveyFoo.sol", "Foo", seed=1, max_execs=600)
    run.run()
    console = Console(width=160, record=True)
    console.print(ProgressView(run).render())
    text = console.export_text()
    for row in ("sequence lengths", "aggressive probes", "demanding: ", "prefix cache",
                "adaptive seeds", "prediction", "last new path"):
        assert row in text, row
    stats = run.fuzzer.stats
    policy = run.fuzzer.policy
    assert isinstance(policy, HarveyPolicy)
    assert f"{stats.probes:,} ({policy.harvey.probe_hits} new paths" in text
