"""Users' harnesses: every violated property is found within a fixed seed and budget, and
nothing that holds is reported (table-driven over tests/fixtures/harnesses)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.engine.config import FuzzConfig
from secant.oracles.property import Property, PropertyOracle
from secant.targets.contract import ContractTarget
from secant.types import Tx, TxOutcome
from tests.compile.conftest import needs_node
from tests.packages import openzeppelin_modules

HARNESSES = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses"


@functools.cache
def compiled(file: str) -> list[Compilation]:
    return load([HARNESSES / file])


def run(file: str, contract: str, seed: int, execs: int) -> dict[str, object]:
    chain = TestChain.setup(compiled(file), contract=contract)
    return Campaign(chain, CampaignConfig(FuzzConfig(seed=seed, max_execs=execs))).run()


# (file, contract, seed, budget, failing properties, passing properties)
PROPERTY_CASES = [
    ("EchidnaStyle.sol", "Vault", 0, 8000,
     {"echidna_total_covers_my_balance"}, {"echidna_total_is_bounded"}),
    ("MedusaStyle.sol", "Machine", 0, 3000,
     {"property_never_stage_three"}, {"property_stage_at_most_three"}),
    # echidna_revert_ properties must revert; a property broken at once (untouched) goes on
    # being evaluated, so the search still finds the two-step door.
    ("Conventions.sol", "Latches", 0, 2000,
     {"echidna_untouched", "echidna_door_shut", "echidna_revert_unless_first"},
     {"echidna_revert_always"}),
]


@needs_node
@pytest.mark.parametrize(("file", "contract", "seed", "budget", "failing", "passing"),
                         PROPERTY_CASES, ids=[case[1] for case in PROPERTY_CASES])
def test_boolean_properties(file: str, contract: str, seed: int, budget: int,
                            failing: set[str], passing: set[str]) -> None:
    summary = run(file, contract, seed, budget)
    status = {p["function"]: p["status"] for p in summary["properties"]}  # type: ignore[attr-defined]
    assert status == {**{name: "failed" for name in failing},
                      **{name: "passed" for name in passing}}
    reported = {f["function"] for f in summary["findings"]  # type: ignore[attr-defined]
                if f["kind"] == "property"}
    assert reported == failing
    for finding in summary["findings"]:  # type: ignore[attr-defined]
        if finding["kind"] == "property":
            # The sequence is the prefix after which the property failed: its last call is
            # the transaction that broke it.
            assert finding["sequence"] and finding["oracle"] == "property"
            assert finding["detail"].endswith(f"after {len(finding['sequence'])} transaction"
                                              + ("s" if len(finding["sequence"]) > 1 else ""))


def watched_latches() -> tuple[PropertyOracle, ContractTarget, int]:
    """Conventions.sol's Latches with a property oracle watching; a user's address."""
    chain = TestChain.setup(compiled("Conventions.sol"), contract="Latches")
    oracle = PropertyOracle(chain)
    target = ContractTarget(chain)
    target.step_observers = [oracle]
    return oracle, target, chain.sender("user1").address


@needs_node
def test_a_failed_property_leaves_the_paths_of_other_cases_as_they_were() -> None:
    # The corpus counts how often each path ran: a case's path must not change because
    # another case broke a property (the old seeds would look unvisited for ever).
    oracle, target, user = watched_latches()
    turn = (Tx("turnFirst(int256)", (5,), user),)  # a wrong key: no property fails
    before = target.run(turn)
    assert oracle.check(before, None) == []
    broken = target.run((Tx("touch()", (), user),))
    assert [f.function for f in oracle.check(broken, None)] == ["echidna_untouched"]
    after = target.run(turn)
    assert after.path_id == before.path_id
    assert oracle.check(after, None) == []
    assert oracle.check(target.run((Tx("touch()", (), user),)), None) == []  # reported once


@needs_node
def test_a_switched_off_oracle_calls_what_did_not_fail_unchecked() -> None:
    # An oracle that raised stopped checking runs (Fuzzer.drop_oracle): a property it had
    # not seen fail was not seen to hold either.
    oracle, target, user = watched_latches()
    broken = oracle.check(target.run((Tx("touch()", (), user),)), None)
    findings = {f.key: f for f in broken}
    holding = {p["function"]: p["status"] for p in oracle.summary(findings)["properties"]}
    assert holding["echidna_untouched"] == "failed" and "passed" in holding.values()
    oracle.switched_off = True
    after = {p["function"]: p["status"] for p in oracle.summary(findings)["properties"]}
    assert after == {name: "failed" if status == "failed" else "unchecked"
                     for name, status in holding.items()}


@needs_node
def test_with_nothing_to_call_the_deployed_state_is_judged() -> None:
    summary = run("Conventions.sol", "Deployed", 0, 1000)
    status = {p["function"]: p["status"] for p in summary["properties"]}  # type: ignore[attr-defined]
    assert status == {"echidna_seed_is_seven": "passed", "echidna_seed_is_eight": "failed"}
    [finding] = summary["findings"]  # type: ignore[misc]
    assert finding["sequence"] == [] and finding["detail"].endswith("on the deployed state")
    assert summary["execs"] == 1  # one run of the empty case, then nothing left to do


@needs_node
@pytest.mark.parametrize(("max_time_delay", "status"), [(None, "passed"),
                                                        (365 * 86400, "failed")])
def test_one_transaction_moves_the_clock_at_most_max_time_delay(max_time_delay: int | None,
                                                                 status: str) -> None:
    # None: a harness gets Echidna's week per transaction (16 weeks < a year).
    chain = TestChain.setup(compiled("Conventions.sol"), contract="Clock")
    config = FuzzConfig(seed=0, max_execs=3000, max_time_delay=max_time_delay)
    summary = Campaign(chain, CampaignConfig(config)).run()
    [prop] = summary["properties"]  # type: ignore[index]
    assert prop["status"] == status
    assert max(summary["sequences"]["lengths"]) <= 16  # type: ignore[index]


@needs_node
def test_the_broken_sequence_replays_to_the_violation() -> None:
    chain = TestChain.setup(compiled("MedusaStyle.sol"), contract="Machine")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=3000)))
    campaign.run()
    [finding] = [f for f in campaign.findings.values() if f.kind == "property"]
    assert finding.case is not None
    fresh = TestChain.setup(compiled("MedusaStyle.sol"), contract="Machine")
    ContractTarget(fresh).run(finding.case)  # leaves the chain in the case's post-state
    assert fresh.view("Machine", "property_never_stage_three").value is False
    assert fresh.view("Machine", "stage").value == 3


@needs_node
def test_assertion_mode_calls_pure_and_view_functions_and_reads_events() -> None:
    summary = run("AssertionMode.sol", "Checked", 0, 8000)
    assertions = {(f["contract"], f["function"], f["detail"].split(":")[0])
                  for f in summary["findings"]  # type: ignore[attr-defined]
                  if f["kind"] == "assertion"}
    assert assertions == {("Checked", "pureCheck", "Panic(0x01)"),
                          ("Checked", "viewCheck", "Panic(0x01)"),
                          # Named by the handler, whose call emitted it in Reporter.
                          ("Checked", "eventCheck", "AssertionFailed event emitted")}
    # The getters of public state variables are not fuzzed; neverWraps holds.
    assert not any(f["function"] in ("counter", "reporter", "neverWraps")
                   for f in summary["findings"])  # type: ignore[attr-defined]


@needs_node
def test_optimization_reports_the_best_value_and_its_case() -> None:
    # Both ends exactly: seeds 4, 5 and 7 of 0-11 reach 1000 within the budget, the others
    # 500 to 999.
    summary = run("Optimize.sol", "Spread", 4, 8000)
    [row] = summary["properties"]  # type: ignore[misc]
    assert row["kind"] == "optimization" and row["status"] == "optimized"
    assert row["best"] == 1000
    assert [tx["function"] for tx in row["sequence"]][-1] == "setHigh(int16)"
    assert summary["findings"] == []


@needs_node
def test_a_linear_objective_is_maximised_to_its_cliff() -> None:
    # Echidna's and Medusa's own suites ask for most of the optimum of such an objective;
    # input prediction solves the linear part and the cliff's comparison (-level > best).
    summary = run("Cliff.sol", "Cliff", 0, 3000)
    [row] = summary["properties"]  # type: ignore[misc]
    assert row["best"] == 6999
    assert row["sequence"][-1]["args"] == [-6999]


@needs_node
def test_a_harness_over_openzeppelin_from_npm(tmp_path: Path) -> None:
    modules = openzeppelin_modules()
    (tmp_path / "node_modules").symlink_to(modules, target_is_directory=True)
    (tmp_path / "remappings.txt").write_text("@openzeppelin/=node_modules/@openzeppelin/\n")
    (tmp_path / "TokenHarness.sol").write_text((HARNESSES / "oz" / "TokenHarness.sol")
                                                .read_text())
    chain = TestChain.setup(load([tmp_path]), contract="TokenHarness")
    summary = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=4000))).run()
    status = {p["function"]: p["status"] for p in summary["properties"]}
    assert status == {"echidna_supply_is_fixed": "passed", "echidna_no_tokens_taken": "failed"}
    [finding] = [f for f in summary["findings"] if f["kind"] == "property"]
    assert finding["sequence"][-1]["function"] == "rescue(address,uint256)"


def counted_reads() -> tuple[PropertyOracle, ContractTarget, int, dict[str, int]]:
    """PropertyReads.sol's ReadSets watched by a property oracle that counts its calls."""
    chain = TestChain.setup(compiled("PropertyReads.sol"), contract="ReadSets")
    oracle = PropertyOracle(chain)
    target = ContractTarget(chain, resume=True)  # a case goes on from the last run's state
    target.step_observers = [oracle]
    calls: dict[str, int] = {}
    real = oracle._call

    def counting(prop: Property, *args: Any) -> TxOutcome:
        calls[prop.name] = calls.get(prop.name, 0) + 1
        return real(prop, *args)

    oracle._call = counting  # type: ignore[method-assign]
    return oracle, target, chain.sender("user1").address, calls


@needs_node
def test_a_property_is_called_again_only_when_what_it_read_changed() -> None:
    oracle, target, user, calls = counted_reads()
    left, right = Tx("bumpLeft(uint256)", (1,), user), Tx("bumpRight(uint256)", (3,), user)
    target.run((left, Tx("bumpLeft(uint256)", (2,), user)))
    # On the deployed state, after the first transaction, and the left one after the second.
    assert calls == {"echidna_left_below_40": 3, "echidna_right_below_40": 2,
                     "echidna_ledger_below_500": 2, "echidna_open_under_a_day": 2}
    calls.clear()
    target.run((left, Tx("bumpLeft(uint256)", (3,), user), right,
                Tx("deposit(uint256)", (7,), user)))
    # It resumes after the first transaction, with the values taken there; each of the
    # others touches the slots of one property (the ledger's through its own contract).
    assert calls == {"echidna_left_below_40": 1, "echidna_right_below_40": 1,
                     "echidna_ledger_below_500": 1}
    calls.clear()
    # A later block: nothing opened, the clock property decided without reading the block
    # (`openedAt == 0`), so it is not asked again either.
    target.run((left, Tx("bumpLeft(uint256)", (3,), user), right,
                Tx("deposit(uint256)", (7,), user, time=60)))
    assert calls == {"echidna_ledger_below_500": 1}


@needs_node
def test_kept_values_still_fail_where_the_property_fails() -> None:
    oracle, target, user, calls = counted_reads()
    opened = (Tx("open()", (), user), Tx("bumpLeft(uint256)", (9,), user),
              Tx("bumpRight(uint256)", (9,), user, time=86_400))
    found = oracle.check(target.run(opened), None)
    assert [(f.function, len(f.case or ())) for f in found] == [("echidna_open_under_a_day", 3)]
    assert calls["echidna_open_under_a_day"] == 3  # deployed, after open(), a day later
    assert calls["echidna_left_below_40"] == 3  # deployed, first, after bumpLeft


@needs_node
def test_keeping_values_leaves_the_campaign_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    # The values are kept only where the call would do exactly what it did, and its
    # comparisons are logged again: the same seed and budget give the same campaign.
    # A seed whose campaign breaks every property within the budget, so that the values
    # kept decide something (any such seed will do).
    kept = run("PropertyReads.sol", "ReadSets", 0, 1500)
    monkeypatch.setattr(PropertyOracle, "keeps_values", False)
    called = run("PropertyReads.sol", "ReadSets", 0, 1500)
    for summary in (kept, called):
        for finding in summary["findings"]:  # type: ignore[attr-defined]
            finding.pop("time_to_find_s")
    same = ("findings", "properties", "coverage", "paths", "corpus", "sequences")
    assert {k: kept.get(k) for k in same} == {k: called.get(k) for k in same}
    assert {p["status"] for p in kept["properties"]} == {"failed"}  # type: ignore[attr-defined]
