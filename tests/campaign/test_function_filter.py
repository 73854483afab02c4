"""``--only-function`` and ``--exclude-function``: which functions a campaign calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from secant.campaign.function_filter import FunctionFilter
from secant.cli.main import app
from secant.engine.mutators import FunctionSpec
from secant.errors import SecantError
from tests.compile.conftest import needs_node

READS = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "PropertyReads.sol"

VAULT = 0xA11CE
SPECS = [FunctionSpec("deposit(uint256)", None, (), False),
         FunctionSpec("deposit(uint256,address)", None, (), False),
         FunctionSpec("pause()", None, (), False),
         FunctionSpec("receive", None, (), True),
         FunctionSpec("pause()", VAULT, (), False)]


def names(address: int | None) -> str:
    return "Harness" if address is None else "Vault"


def kept(only: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> list[str]:
    specs, _ = FunctionFilter(only, exclude).apply(SPECS, names)
    return [f"{names(spec.to)}.{spec.signature}" for spec in specs]


@pytest.mark.parametrize(("pattern", "left_out"), [
    ("deposit", ["Harness.deposit(uint256)", "Harness.deposit(uint256,address)"]),
    ("deposit(uint256)", ["Harness.deposit(uint256)"]),
    ("Harness.deposit( uint256, address )", ["Harness.deposit(uint256,address)"]),
    ("pause()", ["Harness.pause()", "Vault.pause()"]),
    ("Vault.pause()", ["Vault.pause()"]),
    ("Harness.receive()", ["Harness.receive"]),
])
def test_a_pattern_names_a_function_by_name_signature_and_contract(
        pattern: str, left_out: list[str]) -> None:
    every = kept()
    assert kept(exclude=(pattern,)) == [name for name in every if name not in left_out]
    assert kept(only=(pattern,)) == left_out


def test_only_and_exclude_together_and_patterns_that_name_nothing() -> None:
    specs, notes = FunctionFilter(("deposit", "Token.mint(uint256)"), ("deposit(uint256)",)
                                  ).apply(SPECS, names)
    assert [spec.signature for spec in specs] == ["deposit(uint256,address)"]
    assert notes == ["--only-function 'Token.mint(uint256)' names no function of the campaign"]


def test_a_filter_that_leaves_nothing_to_call_is_an_error() -> None:
    with pytest.raises(SecantError, match="no function is left to call: "
                                          "--only-function Vault.withdraw"):
        FunctionFilter(("Vault.withdraw",)).apply(SPECS, names)
    assert FunctionFilter().apply(SPECS, names) == (SPECS, [])


@needs_node
def test_a_harness_runs_without_the_functions_its_echidna_yaml_filters(tmp_path: Path) -> None:
    config = tmp_path / "echidna.yaml"
    config.write_text('filterFunctions: ["ReadSets.bumpLeft(uint256)", "ReadSets.open()"]\n'
                      "filterBlacklist: true\n")
    result = CliRunner().invoke(app, [
        "fuzz", str(READS), "--contract", "ReadSets", "--config", str(config), "--execs",
        "1500", "--seed", "3", "--oracles", "property", "--out", str(tmp_path / "out"),
        "--quiet"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    status = {p["function"]: p["status"] for p in summary["properties"]}
    # What the filtered functions alone could break holds; the rest fails as without it.
    assert status == {"echidna_left_below_40": "passed", "echidna_right_below_40": "failed",
                      "echidna_ledger_below_500": "failed",
                      "echidna_open_under_a_day": "passed"}
