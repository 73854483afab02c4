"""Assertion and panic findings are deduplicated by the failing check, not the REVERT."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from secant.abi import PANIC_CODES
from secant.campaign.campaign import Campaign, CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import Compilation, load
from secant.compile.solidity import CompileOptions
from secant.engine.fuzzer import FuzzConfig
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

