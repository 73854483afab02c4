"""What deploying the input decides before any campaign: code too large for the chain is
compiled again with the optimizer; a constructor that fails an assertion is a finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secant.campaign.launch import (
    Planned,
    compile_inputs,
    plan_campaigns,
    write_deployment_finding,
)
from secant.campaign.manifest import read_manifest
from secant.campaign.options import CampaignOptions
from secant.chain.deploy import CodeSizeExceeded, ConstructorPanicked
from secant.chain.errors import ConstructorReverted
from tests.compile.conftest import needs_node, run_cli

SOLIDITY = Path(__file__).resolve().parents[1] / "fixtures" / "solidity"
LEDGER = SOLIDITY / "TracedLedger.sol"
CHECKS = SOLIDITY / "ConstructorChecks.sol"


def _planned(options: CampaignOptions) -> Planned:
    return plan_campaigns(options, compile_inputs(options))


@needs_node
def test_code_too_large_is_compiled_again_with_the_optimizer(tmp_path: Path) -> None:
    planned = _planned(CampaignOptions(LEDGER, out=tmp_path, seed=0))
    assert planned.options.optimize is True
    [campaign] = planned.plans
    assert campaign.name == "TracedLedger"
    assert planned.notes[0].startswith("deploying TracedLedger failed: created code exceeds "
                                       "the size limit; compiled again with the optimizer "
                                       "(200 runs)")
    # The manifest records the optimizer, so a replay or resume compiles the same code.
    compiler = planned.manifest.record["compiler"]
    assert compiler["given"]["optimize"] is True and compiler["used"]["optimize"] is True
    chain = campaign.make_chain()
    assert chain.main is not None and len(chain.state.code(chain.main.address)) < 24576


@needs_node
def test_a_choice_against_the_optimizer_is_kept(tmp_path: Path) -> None:
    with pytest.raises(CodeSizeExceeded, match="exceeds the size limit"):
        _planned(CampaignOptions(LEDGER, out=tmp_path, seed=0, optimize=False))
    unlimited = _planned(CampaignOptions(LEDGER, out=tmp_path, seed=0,
                                         unlimited_code_size=True))
    assert unlimited.options.optimize is None and not unlimited.notes
    chain = unlimited.plans[0].make_chain()
    assert chain.main is not None and len(chain.state.code(chain.main.address)) > 24576


@needs_node
def test_a_constructor_that_fails_an_assertion_is_a_finding(tmp_path: Path) -> None:
    planned = _planned(CampaignOptions(CHECKS, out=tmp_path, contract="CappedVault", seed=0))
    assert planned.plans == []
    finding = planned.deployment_finding
    assert finding is not None
    assert (finding.kind, finding.swc, finding.oracle) == ("assertion", "SWC-110", "assertion")
    assert (finding.contract, finding.function) == ("CappedVault", "constructor")
    assert finding.source is not None and finding.source.endswith("ConstructorChecks.sol:10")
    assert finding.detail.startswith("Panic(0x01): assertion failed while deploying "
                                     "CappedVault: its constructor fails (with generated "
                                     "arguments (cap_=")
    summary = write_deployment_finding(planned)
    [written] = (tmp_path / "findings").glob("assertion-*.json")
    assert json.loads(written.read_text()) == finding.to_json()
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk == summary
    assert on_disk["findings"] == [finding.to_json()] and on_disk["findings"][0]["sequence"] == []
    assert on_disk["execs"] == 0 and on_disk["deployment_finding"] is True
    # The manifest reads back: a replay deploys again (and shows the failure again).
    recorded = read_manifest(on_disk, tmp_path)
    assert recorded.selection.contract == "CappedVault"


@needs_node
def test_solc_04s_invalid_in_a_constructor_is_an_assertion(tmp_path: Path) -> None:
    planned = _planned(CampaignOptions(SOLIDITY / "Assert04Constructor.sol", out=tmp_path,
                                       seed=0))
    finding = planned.deployment_finding
    assert finding is not None and finding.kind == "assertion"
    assert finding.source is not None and finding.source.endswith("Assert04Constructor.sol:9")
    assert finding.detail.startswith("INVALID opcode reached (assert in solc < 0.8)")


@needs_node
def test_constructors_that_revert_or_hold_for_other_arguments_are_no_findings(
        tmp_path: Path) -> None:
    with pytest.raises(ConstructorReverted, match="Error\\('closed'\\)"):
        _planned(CampaignOptions(CHECKS, out=tmp_path, contract="ClosedDoor", seed=0))
    planned = _planned(CampaignOptions(CHECKS, out=tmp_path, contract="SmallBatch", seed=0))
    assert planned.deployment_finding is None and len(planned.plans) == 1


@needs_node
def test_without_the_assertion_oracle_the_failure_stays_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConstructorPanicked, match="failed an assertion at "):
        _planned(CampaignOptions(CHECKS, out=tmp_path, contract="CappedVault", seed=0,
                                 oracles="reentrancy"))


@needs_node
def test_secant_fuzz_reports_the_deployment_finding_and_exits_as_with_findings(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(SOLIDITY / "Assert04Constructor.sol"), "--execs", "100",
                   "--seed", "0", "--out", str(out), "--fail-on-findings",
                   env={"SECANT_WORKERS": "1"})
    assert proc.returncode == 1, proc.stderr
    assert "0 executions in 0.0 s, 0 paths, 0/0 branches, 1 finding(s)" in proc.stdout
    assert "[assertion, medium, certain] Assert04Constructor.constructor at " in proc.stdout
    assert "Assert04Constructor.sol:9: INVALID opcode reached" in proc.stdout
    assert "sequence: []" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert [f["function"] for f in summary["findings"]] == ["constructor"]
    # Replaying deploys again: the failure is its one-line error.
    replay = run_cli("replay", str(out))
    assert replay.returncode == 2
    assert "error: the constructor of Assert04Constructor failed an assertion at " in \
        replay.stderr
    assert "Assert04Constructor.sol:9: INVALID opcode reached" in replay.stderr
