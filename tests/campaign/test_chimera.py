"""A harness in Recon's Chimera layout, fuzzed through both of its entry points.

``tests/fixtures/chimera`` is a Foundry project of ours: a ledger with two bugs, and under
``test/recon/`` the Setup / Properties / TargetFunctions chain with one violated and one
holding boolean property and, in the handlers, one violated and one holding assertion.
``CryticTester`` (Echidna's and Medusa's entry point: test-named properties, no ``setUp()``)
is a harness: its handlers are the transactions. ``CryticToFoundry`` (``setUp()``, forge-std's
``Test``) is a Foundry test contract whose invariant campaign targets itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from secant.abi import AbiFunction
from secant.campaign.config import CampaignConfig
from secant.campaign.plan import Selection, plan
from secant.chain.chain import ChainConfig
from secant.compile import load
from secant.engine.config import FuzzConfig
from secant.targets.foundry import forge_named, is_test_contract
from tests.compile.conftest import needs_node, run_cli
from tests.packages import forge_std_root

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chimera"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture project with forge-std linked into lib/, as ``forge install`` puts it."""
    root = tmp_path_factory.mktemp("chimera") / "project"
    shutil.copytree(FIXTURE, root)
    (root / "lib").mkdir()
    (root / "lib" / "forge-std").symlink_to(forge_std_root(), target_is_directory=True)
    return root


_RUNS: dict[str, dict[str, Any]] = {}


def fuzzed(project: Path, entry: str) -> dict[str, Any]:
    """summary.json of ``secant fuzz PROJECT --match-contract ENTRY`` (run once per entry)."""
    if entry not in _RUNS:
        out = project.parent / f"out-{entry}"
        proc = run_cli("fuzz", str(project), "--match-contract", f"^{entry}$",
                       "--execs", "2000", "--seed", "1", "--out", str(out), "--quiet")
        assert proc.returncode == 0, proc.stderr
        _RUNS[entry] = json.loads((out / "summary.json").read_text())
    return _RUNS[entry]


def reported(summary: dict[str, Any], kind: str, name: str) -> bool:
    """Whether the run reports ``name`` broken: a property by name, an assertion by the
    handler whose call failed it (Chimera's helper asserts for every handler)."""
    if kind == "property":
        return any(f["oracle"] == "property" and f["function"] == name
                   for f in summary["findings"])
    return any(f["oracle"] == "assertion" and f["sequence"][-1]["function"].startswith(name)
               for f in summary["findings"])


@needs_node
@pytest.mark.parametrize(("entry", "kind", "name", "broken"), [
    ("CryticTester", "property", "invariant_supply_is_sum", True),
    ("CryticTester", "property", "property_balances_within_supply", False),
    ("CryticTester", "assertion", "ledger_transfer", True),
    ("CryticTester", "assertion", "ledger_mint", False),
    ("CryticToFoundry", "property", "invariant_supply_is_sum", True),
    ("CryticToFoundry", "property", "property_balances_within_supply", False),
    # The fixture's foundry.toml: assertions_revert = false, [invariant] fail_on_assert.
    ("CryticToFoundry", "assertion", "ledger_transfer", True),
    ("CryticToFoundry", "assertion", "ledger_mint", False),
])
def test_each_entry_point_finds_what_is_broken_and_nothing_else(
        project: Path, entry: str, kind: str, name: str, broken: bool) -> None:
    summary = fuzzed(project, entry)
    assert reported(summary, kind, name) == broken
    if kind == "property" and not broken:
        status = {p["function"]: p["status"] for p in summary["properties"]}
        assert status[name] == "passed"


@needs_node
def test_the_tester_is_fuzzed_as_a_harness(project: Path) -> None:
    summary = fuzzed(project, "CryticTester")
    # Its handlers are the transactions: the ledger is reached only through them.
    called = {tx["function"] for f in summary["findings"] for tx in f["sequence"]}
    assert called <= {"ledger_mint(uint256)", "ledger_transfer(uint256)",
                      "ledger_burn(uint256)"}
    assert summary["findings"]


def _abi(*names: str) -> list[AbiFunction]:
    return [AbiFunction.from_json({"type": "function", "name": name, "inputs": [],
                                   "outputs": [], "stateMutability": "nonpayable"})
            for name in names]


@pytest.mark.parametrize(("names", "style", "test_contract"), [
    # Medusa's assertion-mode TestContract: test-named handlers, no setUp().
    (("testDeposit", "testWithdraw"), "auto", False),
    # Chimera's CryticTester: properties with forge's prefix, handlers, no marker.
    (("invariant_solvent", "counter_increment"), "auto", False),
    # A Foundry test contract: setUp(), or forge-std's IS_TEST().
    (("setUp", "testDeposit"), "auto", True),
    (("IS_TEST", "invariant_solvent"), "auto", True),
    # A CryticTester that inherits forge-std's Test builds its system in its constructor.
    (("IS_TEST", "invariant_solvent", "constructor"), "auto", False),
    (("setUp", "IS_TEST", "invariant_solvent", "constructor"), "auto", True),
    # Chimera's Echidna/Medusa entry point, whatever its bases declare.
    (("setUp", "IS_TEST", "invariant_solvent", "CryticTester"), "auto", False),
    (("setUp", "invariant_solvent", "CryticTester"), "foundry", True),
    # A handler that inherits forge-std's Test has no test to run.
    (("IS_TEST", "deposit"), "auto", False),
    # --harness overrides the guess, for a contract forge would run.
    (("testDeposit",), "foundry", True),
    (("setUp", "invariant_solvent"), "echidna", False),
    (("setUp", "deposit"), "foundry", False),
])
def test_test_contracts_are_told_from_harnesses(names: tuple[str, ...], style: str,
                                                test_contract: bool) -> None:
    functions = _abi(*(n for n in names if n not in ("constructor", "CryticTester")))
    name = "CryticTester" if "CryticTester" in names else "Handlers"
    assert is_test_contract(functions, style, "constructor" in names, name) == test_contract
    assert forge_named(functions) == any(n.startswith(("test", "invariant")) for n in names)


@needs_node
def test_the_harness_option_overrides_the_guess(project: Path) -> None:
    compilations = load([project])

    def slugs(**selection: Any) -> list[tuple[str, bool | None]]:
        # Each campaign with whether its reproducers treat the contract as a test contract.
        return [(p.slug, p.config.test_contract)
                for p in plan(compilations, Selection(**selection), ChainConfig(),
                              CampaignConfig(FuzzConfig(seed=0, max_execs=10)),
                              project=True)]

    # A folder runs every contract forge would, each in its own style.
    assert slugs(match_contract="^Crytic") == [("CryticTester", False),
                                               ("CryticToFoundry-invariants", True)]
    assert slugs(match_contract="^CryticTester$", harness="foundry") == [
        ("CryticTester-invariants", True)]
    assert slugs(match_contract="^CryticToFoundry$", harness="echidna") == [
        ("CryticToFoundry", False)]


@needs_node
@pytest.mark.parametrize("where", ["flag", "file"])
def test_a_bad_harness_style_is_one_line(tmp_path: Path, where: str) -> None:
    source = tmp_path / "Tester.sol"
    source.write_text("// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\n"
                      "contract Tester { function testNothing() public {} }\n")
    args = ["fuzz", str(source), "--execs", "10", "--out", str(tmp_path / "out")]
    if where == "flag":
        args += ["--harness", "medusa"]
    else:
        (tmp_path / "secant.toml").write_text('[fuzz]\nharness = "medusa"\n')
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown --harness 'medusa'")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@needs_node
def test_the_projects_echidna_config_is_read(project: Path) -> None:
    out = project.parent / "out-echidna-config"
    proc = run_cli("fuzz", ".", "--match-contract", "CryticTester", "--config", "echidna.yaml",
                   "--execs", "1000", "--seed", "1", "--out", str(out), "--quiet", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == []  # corpusDir is read too
    summary = json.loads((out / "summary.json").read_text())
    # testMode assertion: the assertions only, as Echidna checks them in that mode.
    assert summary["oracles"] == ["assertion"]
    assert [f["sequence"][-1]["function"] for f in summary["findings"]] == [
        "ledger_transfer(uint256)"]
    # The yaml's senders; 0x10000 is its deployer too, and named so.
    assert {tx["sender"] for f in summary["findings"] for tx in f["sequence"]} <= {
        "deployer", f"0x{0x20000:040x}"}
    manifest = summary["manifest"]
    assert manifest["target"]["property_prefixes"] == ["invariant_"]
    assert manifest["config"]["shrink_limit"] == 500
    fuzz = manifest["config"]["fuzz"]
    # The command line's budget wins over the file's: --execs 1000, not testLimit's
    # 5000 calls.
    assert (fuzz["max_sequence_length"], fuzz["max_execs"], fuzz["max_transactions"]) == (
        20, 1000, None)
    # corpusDir keeps secant's entries across runs, beside Echidna's own: the next run
    # starts from them.
    kept = sorted((project / "echidna" / "secant").glob("*.json"))
    assert len(kept) == summary["corpus"] > 0
    again = project.parent / "out-echidna-config-again"
    proc = run_cli("fuzz", ".", "--match-contract", "CryticTester", "--config", "echidna.yaml",
                   "--execs", "100", "--seed", "2", "--out", str(again), "--quiet",
                   cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"corpus echidna/secant: {len(kept)} of {len(kept)} entries run first"]
    shared = json.loads((again / "summary.json").read_text())["shared_corpus"]
    assert (shared["entries"], shared["run"], shared["dropped"]) == (len(kept), len(kept), 0)


@needs_node
def test_medusas_assertion_mode_test_contract_is_a_harness(tmp_path: Path) -> None:
    source = FIXTURE.parent / "harnesses" / "MedusaAssertions.sol"
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(source), "--execs", "2000", "--seed", "1", "--out", str(out),
                   "--quiet")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    # One campaign of the contract itself (not a test contract's invariants or fuzz
    # tests), whose reverting withdrawals are no failures.
    [finding] = summary["findings"]
    assert finding["oracle"] == "assertion" and finding["function"] == "testWithdraw"
    assert finding["sequence"][-1]["function"] == "testWithdraw(uint256)"


@needs_node
def test_the_projects_medusa_config_is_read(project: Path) -> None:
    out = project.parent / "out-medusa-config"
    # No --match-contract: medusa.json's targetContracts names the tester.
    proc = run_cli("fuzz", ".", "--config", "medusa.json", "--execs", "2000", "--seed", "1",
                   "--out", str(out), "--quiet", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == []  # every setting it makes is read
    summary = json.loads((out / "summary.json").read_text())
    assert summary["oracles"] == ["assertion", "property"]
    assert summary["manifest"]["chain"]["deployer"] == 0x30000  # its deployerAddress
    assert sorted(f["oracle"] for f in summary["findings"]) == ["assertion", "property"]
    assert summary["manifest"]["target"]["contract"] == "CryticTester"
    assert summary["manifest"]["config"]["fuzz"]["max_sequence_length"] == 12
