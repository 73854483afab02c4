"""Which campaigns an input gives: a whole system, or a Foundry test contract's invariants
and fuzz tests; forge's --match-test filter; each violation found, nothing that holds."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.plan import UNPAYABLE_FUNDS, CampaignPlan, Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import Compilation, load
from secant.compile.forge_testing import ForgeTesting
from secant.engine.config import FuzzConfig
from tests.compile.conftest import needs_node

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@functools.cache
def compiled(path: str) -> list[Compilation]:
    return load([FIXTURES / path])


def plans(path: str, execs: int, **selection: Any) -> list[CampaignPlan]:
    return plan(compiled(path), Selection(**selection), ChainConfig(),
                CampaignConfig(FuzzConfig(seed=0, max_execs=execs)), project=False)


def run(campaign_plan: CampaignPlan) -> dict[str, Any]:
    campaign = Campaign(campaign_plan.make_chain(), campaign_plan.config,
                        oracles=campaign_plan.oracles, functions=campaign_plan.functions,
                        senders=campaign_plan.senders, block_steps=campaign_plan.block_steps)
    return campaign.run()


@needs_node
def test_a_foundry_test_contract_runs_its_invariants_and_fuzz_tests() -> None:
    invariant, fuzz = plans("foundry_style/VaultInvariants.t.sol", 3000)
    assert (invariant.slug, fuzz.slug) == ("VaultInvariantTest-invariants",
                                           "VaultInvariantTest-fuzz-tests")
    # The invariant campaign calls only the vault, as targetContracts() says.
    assert invariant.functions is not None
    assert {f.signature for f in invariant.functions} == {"deposit(uint256)",
                                                         "withdraw(uint256)"}
    summary = run(invariant)
    status = {p["function"]: p["status"] for p in summary["properties"]}
    assert status == {"invariant_assets_equal_shares": "failed",
                      "invariant_decoy_untouched": "passed"}
    assert [f["function"] for f in summary["findings"]] == ["invariant_assets_equal_shares"]
    summary = run(fuzz)
    assert summary["sequences"]["lengths"] == {1: summary["corpus"]}  # stateless
    [finding] = summary["findings"]
    assert finding["function"] == "testFuzz_skim_is_zero_after_deposit"
    assert "the dead amount" in finding["detail"]
    assert finding["sequence"][0]["args"] == [0xDEAD]


@needs_node
def test_foundrys_settings_shape_the_invariant_campaign() -> None:
    forge = ForgeTesting(depth=3, max_time_delay=60, fail_on_revert=True, where="foundry.toml")
    invariant, _ = plans("foundry_style/VaultInvariants.t.sol", 300, forge=forge)
    assert (invariant.config.fuzz.max_sequence_length,
            invariant.config.fuzz.max_time_delay) == (3, 60)
    assert any("fail_on_revert" in note for note in invariant.notes)
    # An option the user set wins over the project's.
    [chosen, _] = plans("foundry_style/VaultInvariants.t.sol", 300, forge=forge,
                        given=frozenset({"max_sequence_length"}))
    assert chosen.config.fuzz.max_sequence_length == 16
    # fail_on_revert: a reverted handler call (withdrawing more than one holds) is a finding.
    summary = run(invariant)
    reverts = [f for f in summary["findings"] if f["kind"] == "revert"]
    assert reverts and all("reverted (fail_on_revert)" in f["detail"] for f in reverts)
    assert {f["function"] for f in reverts} <= {"deposit", "withdraw"}
    assert max(len(f["sequence"]) for f in summary["findings"]) <= 3


@needs_node
def test_forges_runs_and_timeout_are_the_budget_unless_the_user_gives_one() -> None:
    forge = ForgeTesting(depth=4, runs=10, timeout=60, fuzz_runs=50, fuzz_seed=7,
                         where="foundry.toml")
    invariant, fuzz = plans("foundry_style/VaultInvariants.t.sol", 300, forge=forge)
    settings = invariant.config.fuzz
    assert (settings.max_execs, settings.max_transactions, settings.max_time,
            settings.seed) == (None, 40, 60, 7)
    assert invariant.own_budget and fuzz.own_budget
    assert "foundry.toml: --calls 40 and --time 60s (from [invariant] runs and timeout)" in (
        invariant.notes)
    # Each fuzz test gets forge's runs, one call per execution.
    assert fuzz.functions is not None
    assert fuzz.config.fuzz.max_transactions == 50 * len(fuzz.functions)
    assert fuzz.config.fuzz.max_time is None
    # A budget the user gave wins, and forge's is not applied at all.
    chosen, tests = plans("foundry_style/VaultInvariants.t.sol", 300, forge=forge,
                          given=frozenset({"execs", "seed"}))
    assert (chosen.config.fuzz.max_execs, chosen.config.fuzz.max_transactions,
            chosen.config.fuzz.seed) == (300, None, 0)
    assert not chosen.own_budget and not tests.own_budget
    assert summary_calls(invariant) >= 40


def summary_calls(campaign_plan: CampaignPlan) -> int:
    calls = run(campaign_plan)["transactions"]
    assert isinstance(calls, int)
    return calls


@needs_node
def test_match_test_keeps_the_named_tests_only() -> None:
    [only] = plans("foundry_style/VaultInvariants.t.sol", 500, match_test="deposit_counts")
    assert only.slug == "VaultInvariantTest-fuzz-tests"
    assert only.functions is not None
    assert [f.signature for f in only.functions] == ["testFuzz_deposit_counts(uint64)"]
    assert run(only)["findings"] == []


@needs_node
def test_the_contracts_a_constructor_created_are_called_only_when_asked() -> None:
    # By default (as Echidna's allContracts: false) only the main and --deploy contracts.
    [main_only] = plans("harnesses/WholeSystem.sol", 2000)
    assert main_only.functions is not None
    assert {f.signature for f in main_only.functions} == {"noop()"}
    assert run(main_only)["findings"] == []


@needs_node
def test_the_whole_system_is_fuzzed() -> None:
    [whole] = plans("harnesses/WholeSystem.sol", 2000, all_contracts=True)
    assert whole.functions is not None
    assert {(f.signature, f.to is None) for f in whole.functions} == {
        ("noop()", True), ("take(uint256)", False)}
    summary = run(whole)
    [finding] = summary["findings"]
    assert finding["function"] == "echidna_pool_not_empty"
    assert finding["sequence"][-1]["function"] == "take(uint256)"
    assert finding["sequence"][-1]["to"] == "Pool"


@needs_node
def test_a_plain_contract_also_calls_what_its_constructor_created() -> None:
    [shop] = plans("created/PricedShop.sol", 300)
    assert shop.functions is not None
    assert {(f.signature, f.to is None) for f in shop.functions} == {
        ("quote(uint256)", True), ("setPrice(uint256)", False)}
    [finding] = run(shop)["findings"]
    assert [tx["function"] for tx in finding["sequence"]] == ["setPrice(uint256)",
                                                              "quote(uint256)"]
    # Told not to (--no-all-contracts), the feed is never called and nothing is found.
    [main_only] = plans("created/PricedShop.sol", 300, all_contracts=False)
    assert main_only.functions is not None
    assert {f.signature for f in main_only.functions} == {"quote(uint256)"}
    assert run(main_only)["findings"] == []
    # A harness with a property calls only itself unless told to (Echidna's default).
    [harness] = plans("harnesses/WholeSystem.sol", 300)
    assert harness.functions is not None
    assert {f.signature for f in harness.functions} == {"noop()"}


@needs_node
def test_a_parameter_declared_as_a_contract_gets_an_instance() -> None:
    [clearing] = plans("created/Clearing.sol", 1200)  # found after about 400
    chain = clearing.make_chain()
    ledger = next(c for c in chain.contracts if c.name == "Ledger")
    assert ledger.role == "dependency"  # deployed, not called by the campaign itself
    assert not any(c.name == "IFeed" for c in chain.contracts)  # no code to deploy
    assert any("deployed a Ledger for Clearing.settle(ledger)" in n for n in chain.notes)
    assert clearing.functions is not None
    assert {f.signature for f in clearing.functions} == {"settle(address,uint256)",
                                                         "quote(address)"}
    # A settlement on that ledger breaks the assertion: its address is one to draw.
    [finding] = run(clearing)["findings"]
    assert finding["function"] == "settle"
    assert [tx["args"][0] for tx in finding["sequence"]] == [ledger.address]


@needs_node
def test_after_invariant_runs_at_the_end_of_every_case() -> None:
    [invariant] = plans("foundry_style/AfterInvariant.t.sol", 3000)
    summary = run(invariant)
    status = {p["function"]: (p["kind"], p["status"]) for p in summary["properties"]}
    assert status == {"invariant_small": ("invariant", "passed"),
                      "afterInvariant": ("after", "failed")}
    [finding] = summary["findings"]
    assert [tx["function"] for tx in finding["sequence"]].count("bump()") >= 3


@needs_node
def test_the_bundled_foundry_project_reports_exactly_its_broken_invariant() -> None:
    project = Path(__file__).resolve().parents[2] / "examples" / "vault-project"
    # Seeds 0-3 break it after 8036, 1003, 2472 and 2652 executions.
    [invariant] = plan(load([project]), Selection(), ChainConfig(),
                       CampaignConfig(FuzzConfig(seed=1, max_execs=6000)), project=True)
    assert invariant.slug == "VaultInvariantTest-invariants"
    summary = run(invariant)
    status = {p["function"]: p["status"] for p in summary["properties"]}
    assert status == {"invariant_total_shares_match_holders": "failed",
                      "invariant_tokens_match_the_books": "passed"}
    [finding] = summary["findings"]
    assert "total shares drifted" in finding["detail"]
    # Time had to pass the term (the handler's vm.warp, or a block-time step of the case)
    # before a withdrawal broke the books.
    calls = [tx["function"] for tx in finding["sequence"]]
    assert "wait(uint256)" in calls or any(tx.get("time") for tx in finding["sequence"])
    assert calls[-1] == "withdraw(uint256,uint256)"


@needs_node
def test_fuzz_tests_with_cheatcodes() -> None:
    [fuzz] = plans("foundry_style/CheatFuzz.t.sol", 3000)
    summary = run(fuzz)
    [finding] = summary["findings"]
    assert finding["function"] == "testFuzz_savers_get_back_what_they_saved"
    [call] = finding["sequence"]
    amount = call["args"][0]
    assert amount >= 10**18 and "time" not in call and call["sender"] == "deployer"
    assert finding["detail"].endswith(f"assertion failed: {amount + 1} != {amount}')")


@needs_node
def test_dstest_failed_flag_fails_an_invariant() -> None:
    [invariant] = plans("foundry_style/FailedFlag.t.sol", 1000)
    summary = run(invariant)
    status = {p["function"]: p["status"] for p in summary["properties"]}
    assert status == {"invariant_reading_small": "failed", "invariant_reading_fits": "passed"}
    [finding] = summary["findings"]
    assert "failed() flag was set" in finding["detail"]
    assert finding["sequence"][-1]["args"][0] > 1000


@needs_node
def test_the_first_block_is_echidnas_for_harnesses_and_forges_for_test_contracts() -> None:
    [harness] = plans("harnesses/Conventions.sol", 10, contract="Latches")
    env = harness.make_chain().env
    assert (env.number, env.timestamp) == (4_370_000, 1_524_785_992)
    [invariant] = plans("foundry_style/AfterInvariant.t.sol", 10)
    env = invariant.make_chain().env
    assert (env.number, env.timestamp) == (1, 1)
    for path, contract in (("harnesses/Conventions.sol", "Latches"),
                           ("foundry_style/AfterInvariant.t.sol", None)):
        [chosen] = plans(path, 10, contract=contract, block_number=7, block_time=8)
        env = chosen.make_chain().env
        assert (env.number, env.timestamp) == (7, 8)


@needs_node
def test_the_senders_a_user_names_send_every_transaction_and_are_funded() -> None:
    named = [0x1234, 0xBEEF]
    for path, contract in (("harnesses/Conventions.sol", "Latches"),
                           ("foundry_style/AfterInvariant.t.sol", None)):
        [chosen] = plans(path, 300, contract=contract, senders=named)
        chain = chosen.make_chain()
        assert all(chain.state.balance(s) > 0 for s in named)
        campaign = Campaign(chain, chosen.config, oracles=chosen.oracles,
                            functions=chosen.functions, senders=chosen.senders,
                            block_steps=chosen.block_steps)
        campaign.run()
        senders = {tx.sender for seed in campaign.fuzzer.corpus.seeds for tx in seed.case}
        assert senders and senders <= set(named)


@needs_node
def test_a_test_contract_may_exceed_the_code_size_limit(tmp_path: Path) -> None:
    # forge deploys test contracts without EIP-170's limit; their targets keep it.
    padding = "x" * 26_000
    source = tmp_path / "Big.t.sol"
    source.write_text(f"""// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Small {{
    uint256 public count;

    function bump() external {{
        count += 1;
    }}
}}

contract BigTest {{
    Small internal small;
    string internal constant PADDING = "{padding}";

    function setUp() public {{
        small = new Small();
    }}

    function padding() external pure returns (string memory) {{
        return PADDING;
    }}

    function invariant_below_two() public view {{
        require(small.count() < 2, "two");
    }}
}}
""")
    [invariant] = plan(load([source]), Selection(), ChainConfig(),
                       CampaignConfig(FuzzConfig(seed=0, max_execs=500)), project=False)
    chain = invariant.make_chain()
    test = chain.main
    assert test is not None and test.name == "BigTest"
    assert len(chain.code_at(test.address)) > 24_576
    [finding] = run(invariant)["findings"]
    assert finding["function"] == "invariant_below_two"


@needs_node
def test_a_contract_that_pays_out_but_takes_no_ether_starts_with_some() -> None:
    # No payable function, a payout behind tx.origin: funded, and the note says so.
    [payout] = plans("vulnerabilities/dataflow/OriginPayout.sol", 10, contract="OriginPayout")
    chain = payout.make_chain()
    assert chain.main is not None and chain.balance(chain.main) == UNPAYABLE_FUNDS
    assert any("OriginPayout can pay ether out but no transaction can pay it" in note
               for note in chain.notes)
    # A payable deposit is the way in: left as deployed.
    [bank] = plans("vulnerabilities/reentrancy/OldBank.sol", 10, contract="EtherBank")
    banked = bank.make_chain()
    assert banked.main is not None and banked.balance(banked.main) == 0
    # Nothing pays out: nothing to fund.
    [registry] = plans("vulnerabilities/takeover/OpenInit.sol", 10, contract="FeeRegistry")
    plain = registry.make_chain()
    assert plain.main is not None and plain.balance(plain.main) == 0


@needs_node
def test_a_test_contract_creates_contracts_over_the_size_limits_as_under_forge() -> None:
    [invariant] = plans("foundry_style/LargeCreations.t.sol", 300)
    summary = run(invariant)
    [finding] = summary["findings"]
    assert finding["function"] == "invariant_no_oversized_children"
    assert [tx["function"] for tx in finding["sequence"]] == ["grow()"]
