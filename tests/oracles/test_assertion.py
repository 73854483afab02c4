"""Assertion and panic findings are deduplicated by the failing check, not the REVERT."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from secant.abi import PANIC_CODES
from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.campaign.worker import answering_attacker, function_specs, target_codes
from secant.chain.attackers import ANSWER_SIGNATURE
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.compile.solidity import CompileOptions
from secant.engine.config import FuzzConfig
from secant.evm.analysis import analyze
from secant.evm.crypto import keccak256
from secant.evm.opcodes import SSTORE
from secant.oracles import registry
from secant.oracles.assertion import DEFAULT_PANIC_CODES, AssertionOracle
from secant.targets.contract import ContractTarget
from secant.types import Tx
from tests.compile.conftest import needs_node

CHECKS = Path(__file__).resolve().parents[1] / "fixtures" / "oracles" / "Checks.sol"


@functools.cache
def checks(optimize: bool) -> list[Compilation]:
    return load([CHECKS], CompileOptions(optimize=optimize))


def sites(optimize: bool, calls: list[tuple[str, tuple[int, ...]]],
          panic_codes: frozenset[int] | None = None) -> list[tuple]:
    chain = TestChain.setup(checks(optimize), contract="Checks")
    target = ContractTarget(chain)
    oracle = AssertionOracle(chain, panic_codes)
    user = chain.sender("user1").address
    found = []
    for signature, args in calls:
        result = target.run((Tx(signature, args, user),))
        for site in oracle.sites(result):
            source = Path(site.source).name if site.source else None
            found.append((site.kind, source, site.panic_code, site.pc, site.key))
    return found


@needs_node
@pytest.mark.parametrize("optimize", [False, True], ids=["plain", "optimized"])
def test_each_assert_is_its_own_finding(optimize: bool) -> None:
    calls = [("check(uint256)", (x,)) for x in (1, 2, 3, 4, 5)]
    found = sites(optimize, calls)
    assert len(found) == 5
    assert [f[0] for f in found] == ["assertion"] * 5
    assert [f[1] for f in found] == [f"Checks.sol:{n}" for n in (11, 14, 16, 19, 21)]
    assert len({f[4] for f in found}) == 5  # five keys, though one REVERT serves them all
    # The same check failing again has the same key.
    assert sites(optimize, [("check(uint256)", (3,))])[0][4] == found[2][4]


PANICS = [("divide(uint256,uint256)", (1, 0)), ("grow(uint8)", (100,)), ("grow(uint8)", (10,)),
          ("pick(uint256)", (3,)), ("check(uint256)", (7,))]


def test_the_default_panic_codes_leave_out_the_input_checks() -> None:
    assert DEFAULT_PANIC_CODES == frozenset(PANIC_CODES) - {0x11, 0x12, 0x21, 0x31, 0x32, 0x41}


@needs_node
def test_input_check_panics_are_off_by_default_and_carry_their_code_when_asked() -> None:
    assert sites(False, PANICS) == []
    found = sites(False, PANICS, DEFAULT_PANIC_CODES | {0x11, 0x12, 0x32})
    assert [(f[0], f[1], f[2]) for f in found] == [
        ("panic", "Checks.sol:26", 0x12), ("panic", "Checks.sol:31", 0x11),
        ("panic", "Checks.sol:38", 0x32)]


@needs_node
def test_every_panic_code_can_be_switched_off_but_the_assertion() -> None:
    assert sites(False, PANICS, frozenset()) == []
    found = sites(False, [("check(uint256)", (3,)), *PANICS], frozenset({0x11}))
    assert [(f[0], f[2]) for f in found] == [("assertion", 0x01), ("panic", 0x11)]
    chain = TestChain.setup(checks(False), contract="Checks")
    oracle = AssertionOracle(chain)
    oracle.panic_codes = frozenset({0x12})  # what a campaign option sets after building
    assert oracle.panic_codes == {0x01, 0x12}


@needs_node
def test_campaign_reports_all_five_asserts_with_sequences() -> None:
    chain = TestChain.setup(checks(False), contract="Checks")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=1, max_execs=3000)))
    summary = campaign.run()
    lines = sorted(Path(f["source"]).name for f in summary["findings"]
                   if f["kind"] == "assertion")
    assert lines == [f"Checks.sol:{n}" for n in (11, 14, 16, 19, 21)]
    for finding in summary["findings"]:
        assert finding["swc"] in ("SWC-110", "")  # no overflow (SWC-101) by default
        assert finding["sequence"] and finding["execs_to_find"] > 0
        assert finding["function"] == "check"
    # Replaying a finding's test case reproduces its check.
    first = next(iter(campaign.findings.values()))
    replay = ContractTarget(TestChain.setup(checks(False), contract="Checks")).run(first.case)
    assert replay.panics


# ---------------------------------------------------------------------- one line, two signals
SAME_LINE = CHECKS.with_name("SameLine.sol")
SAME_LINE_LEGACY = CHECKS.with_name("SameLineLegacy.sol")
EVENT = "AssertionFailed event emitted"
ASSERT = "Panic(0x01): assertion failed"
BOTH = f"{EVENT}; {ASSERT}"


@functools.cache
def same_line(optimize: bool) -> list[Compilation]:
    return load([SAME_LINE], CompileOptions(optimize=optimize))


Seen = tuple[str | None, str, tuple[Any, ...]]
"""(file:line, detail, key) of a finding."""


def findings(compilations: list[Compilation], contract: str, calls: list[tuple[str, int]],
             panic_codes: frozenset[int] | None = None) -> list[list[Seen]]:
    """Per one-transaction call: (file:line, detail, key) of each finding the oracle reports."""
    chain = TestChain.setup(compilations, contract=contract)
    target = ContractTarget(chain, frozenset({"panics", "logs"}))
    oracle = AssertionOracle(chain, panic_codes)
    user = chain.sender("user1").address
    found = []
    for signature, arg in calls:
        result = target.run((Tx(signature, (arg,), user),))
        found.append([(Path(f.source).name if f.source else None, f.detail, f.key)
                      for f in oracle.check(result)])
    return found


# (call, argument, [(line, detail)] of its findings): SameLine.sol's comments say why.
SAME_LINE_CASES = [
    ("both(uint256)", 1, [("SameLine.sol:10", BOTH)]),
    ("twoLines(uint256)", 2, [("SameLine.sol:15", BOTH)]),
    ("eventOnly(uint256)", 3, [("SameLine.sol:22", EVENT)]),
    ("assertOnly(uint256)", 4, [("SameLine.sol:27", ASSERT)]),
    ("conditional(uint256)", 6, [("SameLine.sol:32", EVENT)]),
    ("conditional(uint256)", 7, [("SameLine.sol:32", BOTH)]),
    ("conditional(uint256)", 10, []),
    ("apart(uint256)", 11, [("SameLine.sol:45", EVENT), ("SameLine.sol:47", ASSERT)]),
]


@needs_node
@pytest.mark.parametrize("optimize", [False, True], ids=["plain", "optimized"])
def test_an_event_and_an_assert_on_one_line_are_one_finding(optimize: bool) -> None:
    found = findings(same_line(optimize), "SameLine",
                     [(call, arg) for call, arg, _ in SAME_LINE_CASES])
    assert [[(line, detail) for line, detail, _ in each] for each in found] == [
        expected for _, _, expected in SAME_LINE_CASES]
    keys = {(line, detail): key for each in found for line, detail, key in each}
    # The shared line has the line's key, whichever signals a run shows, then the handler
    # (the function called), ending in "event" (the reproducer then checks the recorded
    # logs).
    both, conditional = keys["SameLine.sol:10", BOTH], keys["SameLine.sol:32", BOTH]
    assert both[2:] == ("SameLine.sol:10", "both(uint256)", "event")
    assert keys["SameLine.sol:32", EVENT] == conditional
    # The event and the assert right after it: the event's line is the site's.
    assert keys["SameLine.sol:15", BOTH][2:] == ("SameLine.sol:15", "twoLines(uint256)",
                                                  "event")
    # Everywhere else the keys are the LOG's and the check's pcs, as before.
    for line, detail in [("SameLine.sol:22", EVENT), ("SameLine.sol:27", ASSERT),
                         ("SameLine.sol:45", EVENT), ("SameLine.sol:47", ASSERT)]:
        key = keys[line, detail]
        assert isinstance(key[2], int) and key[-1] == ("event" if detail == EVENT else 0x01)
    assert len(set(keys.values())) == 7  # seven sites: lines 10, 15, 22, 27, 32, 45, 47


@needs_node
def test_a_helper_failed_by_two_handlers_is_two_findings_named_by_the_handlers() -> None:
    compilations = load([CHECKS.with_name("SharedHelper.sol")])
    found = findings(compilations, "SharedHelper",
                     [("deposit(uint256)", 7), ("withdraw(uint256)", 9),
                      ("deposit(uint256)", 8), ("deposit(uint256)", 7)])
    assert [[line for line, _, _ in each] for each in found] == [
        ["SharedHelper.sol:12"], ["SharedHelper.sol:12"], [], ["SharedHelper.sol:12"]]
    keys = [each[0][2] for each in found if each]
    # One site, two handlers: two keys; the same handler again: the same key.
    assert keys[0] != keys[1] and keys[0] == keys[2]
    assert [key[-2] for key in keys] == ["deposit(uint256)", "withdraw(uint256)",
                                         "deposit(uint256)"]
    chain = TestChain.setup(compilations, contract="SharedHelper")
    oracle = AssertionOracle(chain)
    run = ContractTarget(chain, frozenset({"panics", "logs"})).run(
        (Tx("withdraw(uint256)", (9,), chain.sender("user1").address),))
    [finding] = oracle.check(run)
    assert (finding.function, finding.detail) == ("withdraw", BOTH)


@needs_node
def test_only_an_assertion_shares_the_line_of_the_event() -> None:
    # overflowing(100) emits on line 37, then overflows (Panic 0x11) before its assert.
    [found] = findings(same_line(False), "SameLine", [("overflowing(uint8)", 100)],
                       DEFAULT_PANIC_CODES | {0x11})
    assert [(line, detail) for line, detail, _ in found] == [
        ("SameLine.sol:37", EVENT),
        ("SameLine.sol:37", "Panic(0x11): arithmetic overflow or underflow")]
    assert found[0][2][2:] == ("SameLine.sol:37", "overflowing(uint8)", "event")
    assert found[1][2][-1] == 0x11


@needs_node
def test_invalid_before_solc_08_shares_the_line_of_the_event() -> None:
    [found] = findings(load([SAME_LINE_LEGACY]), "SameLineLegacy", [("both(uint256)", 1)])
    assert [(line, detail) for line, detail, _ in found] == [
        ("SameLineLegacy.sol:9",
         f"{EVENT}; INVALID opcode reached (assert in solc < 0.8)")]


@needs_node
def test_without_a_source_map_the_signals_keep_their_pcs(tmp_path: Path) -> None:
    compiled = same_line(False)[0].contract("SameLine")
    (tmp_path / "SameLine.bin-runtime").write_text(compiled.runtime.hex)
    (tmp_path / "SameLine.abi").write_text(json.dumps(list(compiled.abi.entries)))
    [found] = findings(load([tmp_path / "SameLine.bin-runtime"]), "SameLine",
                       [("both(uint256)", 1)])
    assert [(line, detail) for line, detail, _ in found] == [(None, EVENT), (None, ASSERT)]
    assert [key[-1] for _, _, key in found] == ["event", 0x01]
    assert all(isinstance(key[2], int) for _, _, key in found)


@needs_node
def test_campaign_reports_and_shrinks_one_finding_per_site() -> None:
    chain = TestChain.setup(same_line(False), contract="SameLine")
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=1, max_execs=3000)))
    summary = campaign.run()
    sites = sorted((Path(f["source"]).name, f["function"]) for f in summary["findings"])
    assert sites == [("SameLine.sol:10", "both"), ("SameLine.sol:15", "twoLines"),
                     ("SameLine.sol:22", "eventOnly"), ("SameLine.sol:27", "assertOnly"),
                     ("SameLine.sol:32", "conditional"), ("SameLine.sol:37", "overflowing"),
                     ("SameLine.sol:45", "apart"), ("SameLine.sol:47", "apart")]
    [both] = [f for f in summary["findings"] if f["function"] == "both"]
    assert both["detail"] == BOTH
    # Each site shrunk once, its case replayed alone showing its key again.
    assert summary["shrink"]["findings"] == len(sites)
    assert all(f["shrink"]["reproduced"] for f in summary["findings"])


@needs_node
def test_a_throw_before_solc_0_4_10_is_no_assertion() -> None:
    # solc 0.4.9 had no assert: its INVALID halts are throws and array bounds checks.
    legacy = load([Path(__file__).resolve().parents[1] / "fixtures" / "solidity"
                   / "Throw0409.sol"])
    chain = TestChain.setup(legacy, contract="Throw0409")
    oracle = AssertionOracle(chain)
    target = ContractTarget(chain, oracle.needs)
    sender = chain.sender("user1").address
    result = target.run((Tx("add(uint256)", (101,), sender), Tx("pick(uint256)", (7,), sender)))
    assert [o.success for o in result.outcomes] == [False, False]
    assert result.panics  # the halts are recorded, and are not assertion failures
    assert oracle.check(result, target) == []


# ---------------------------------------------------------------------- a trusted answer
FEED = CHECKS.parents[1] / "vulnerabilities" / "assertion" / "TrustedFeed.sol"


@functools.cache
def feeds() -> list[Compilation]:
    return load([FEED])


def feed_campaign(contract: str, budget: int) -> tuple[TestChain, Campaign]:
    """A campaign of the assertion oracle alone on a desk of TrustedFeed.sol, seed 0."""
    chain = TestChain.setup(feeds(), contract=contract)
    campaign = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=budget)),
                        oracles=[registry.available()["assertion"]])
    return chain, campaign


@needs_node
def test_a_feed_the_caller_names_that_answers_another_price_fails_the_assert() -> None:
    # The answering attacker named as the feed, its answer set within the band first:
    # seed 0 finds it at execution 27 (seeds 1-7 within 190).
    chain, campaign = feed_campaign("FeedDesk", 300)
    summary = campaign.run()
    [finding] = summary["findings"]
    assert finding["kind"] == "assertion" and finding["function"] == "settle"
    assert Path(finding["source"]).name == "TrustedFeed.sol:19"
    assert 0 < finding["execs_to_find"] <= 300
    answer, settle = finding["sequence"]
    assert (answer["function"], answer["to"]) == (ANSWER_SIGNATURE, "AnsweringAttacker")
    assert 1000 <= answer["args"][0] <= 3000 and answer["args"][0] != 1850
    assert settle["function"] == "settle(address)"
    assert settle["args"] == [chain.attacker("answering").address]


@needs_node
def test_a_desk_that_trusts_only_the_feed_it_created_is_not_reported() -> None:
    chain, campaign = feed_campaign("OwnFeedDesk", 3000)
    summary = campaign.run()
    assert summary["findings"] == []
    # The answering attacker was there to be named, and the assert ran and held: settle()
    # with the desk's own feed got past it to its only SSTORE (settled += 1).
    assert ANSWER_SIGNATURE in {spec.signature for spec in campaign.first.space.functions}
    assert chain.main is not None
    code = chain.code_at(chain.main.address)
    code_hash = keccak256(code)
    stores = [start for start, instructions in analyze(code, code_hash, chain.fork).blocks
              if any(op == SSTORE for _, op, _ in instructions)]
    assert stores and all((code_hash, start) in campaign.fuzzer.coverage.blocks
                          for start in stores)


@needs_node
def test_the_answering_attacker_joins_only_where_a_named_contract_is_called() -> None:
    def answering(compilations: list[Compilation], contract: str) -> tuple[bool, bool]:
        """(its answer is among the functions, its address among the dictionary's)."""
        chain = TestChain.setup(compilations, contract=contract)
        specs, _ = function_specs(chain)
        joins = answering_attacker(chain, specs, target_codes(chain)) is not None
        space = Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=1))).first.space
        called = ANSWER_SIGNATURE in {spec.signature for spec in space.functions}
        assert called == joins
        return called, chain.attacker("answering").address in space.dictionary.addresses

    # An address argument and a call to a computed address.
    assert answering(feeds(), "FeedDesk") == (True, True)
    # Only numbers to call with and nothing called: the campaign is as it was without it.
    assert answering(checks(False), "Checks") == (False, False)
    # An address argument, but only paid with send's stipend: no answer is read.
    book = load([CHECKS.parents[1] / "vulnerabilities" / "dataflow" / "IgnoredSend.sol"])
    assert answering(book, "PayoutBook") == (False, False)
