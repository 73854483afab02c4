"""``--config medusa.json``: Medusa's settings turned into secant's options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from secant.cli.medusa_config import MedusaConfigError, medusa_table
from tests.compile.conftest import needs_node, run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "chimera" / "medusa.json"


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "medusa.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_the_settings_with_an_equivalent_become_options() -> None:
    table, notes = medusa_table(FIXTURE)
    assert table == {
        "max-sequence-length": 12, "max-block-delay": 60480, "max-time-delay": 604800,
        "sender": ["0x10000", "0x20000"], "contract": "CryticTester",
        "property-prefix": ["invariant_", "property_"], "oracles": "assertion,property",
        "panic-codes": "0x01,0x11", "deployer": "0x30000", "unlimited-code-size": True,
        "workers": 2}
    assert notes == []


def test_target_contracts_deploy_in_order_and_the_last_is_the_main_one(tmp_path: Path
                                                                       ) -> None:
    path = write(tmp_path, {"fuzzing": {"targetContracts": ["Token", "Vault"], "timeout": 90,
                                        "testLimit": 5000, "testing": {
                                            "propertyTesting": {"enabled": False}}}})
    table, notes = medusa_table(path)
    # testLimit counts calls, as --calls does.
    assert table == {"contract": "Vault", "deploy": ["Token"], "time": "90s", "calls": 5000,
                     "oracles": "assertion", "unlimited-code-size": True}
    assert notes == []


def test_target_and_excluded_function_signatures_filter_the_functions(tmp_path: Path
                                                                       ) -> None:
    path = write(tmp_path, {"fuzzing": {
        "targetFunctionSignatures": ["Vault.deposit(uint256)"],
        "excludeFunctionSignatures": ["Vault.pause()", "Token.mint(address,uint256)"]}})
    assert medusa_table(path) == ({"only-function": ["Vault.deposit(uint256)"],
                                   "exclude-function": ["Vault.pause()",
                                                        "Token.mint(address,uint256)"],
                                   "unlimited-code-size": True}, [])


def test_the_code_size_check_is_off_unless_the_file_turns_it_on(tmp_path: Path) -> None:
    on = write(tmp_path, {"fuzzing": {"testChainConfig": {"codeSizeCheckDisabled": False}}})
    assert medusa_table(on) == ({}, [])


@pytest.mark.parametrize(("data", "message"), [
    ("{", "is not valid JSON"),
    ({"fuzzing": []}, "fuzzing must be an object"),
    ({"fuzzing": {"callSequenceLength": "10"}}, "'10' is not an integer"),
    ({"fuzzing": {"testing": {"assertionTesting": {"enabled": False},
                              "propertyTesting": {"enabled": False}}}},
     "neither assertion nor property testing is enabled"),
])
def test_what_cannot_be_read_is_one_error(tmp_path: Path, data: Any, message: str) -> None:
    with pytest.raises(MedusaConfigError, match=message):
        medusa_table(write(tmp_path, data))


def test_constructor_arguments_and_balances_become_named_args_and_the_value(
        tmp_path: Path) -> None:
    path = write(tmp_path, {"fuzzing": {
        "targetContracts": ["Token", "Vault"],
        "targetContractsBalances": ["0", "1.5e18"],
        "constructorArgs": {
            "Token": {"supply": "0x10", "name": "Gold, 24k"},
            "Vault": {"token": "DeployedContract:Token", "limits": [1, 2],
                      "config": {"fee": "3", "open": True}}}}})
    table, notes = medusa_table(path)
    assert table["arg"] == ["token=Token", "limits=[1, 2]", "config=(3, true)"]
    assert table["deploy-arg"] == ["Token=supply=0x10", 'Token=name="Gold, 24k"']
    assert table["value"] == 1_500_000_000_000_000_000
    assert notes == []
    # Ether for a contract deployed before the main one cannot be sent: said, not lost.
    path = write(tmp_path, {"fuzzing": {"targetContracts": ["Token", "Vault"],
                                        "targetContractsBalances": ["0x10", "0"]}})
    table, notes = medusa_table(path)
    assert "value" not in table
    assert notes == ["medusa.json: targetContractsBalances for Token not sent (secant sends "
                     "ether to the main contract's constructor only, --value)"]


@pytest.mark.parametrize(("data", "message"), [
    ({"fuzzing": {"targetContracts": ["A"], "constructorArgs": {"B": {"x": "1"}}}},
     "constructorArgs names B, which is not in targetContracts"),
    ({"fuzzing": {"targetContracts": ["A"], "constructorArgs": {"A": ["1"]}}},
     "constructorArgs.A must be an object"),
    ({"fuzzing": {"targetContracts": ["A"], "targetContractsBalances": ["lots"]}},
     "'lots' is not an amount of wei"),
    ({"fuzzing": {"targetContracts": ["A"], "targetContractsBalances": ["1.5"]}},
     "not a whole amount of wei"),
])
def test_bad_constructor_arguments_and_balances_are_one_error(tmp_path: Path, data: Any,
                                                                message: str) -> None:
    with pytest.raises(MedusaConfigError, match=message):
        medusa_table(write(tmp_path, data))


ARGS = Path(__file__).resolve().parents[1] / "fixtures" / "harnesses" / "medusa_args"


@needs_node
@pytest.mark.parametrize("balance", ["2e18", "1e18"])
def test_constructor_arguments_and_the_balance_reach_the_deployment(tmp_path: Path,
                                                                     balance: str) -> None:
    config = json.loads((ARGS / "medusa.json").read_text())
    config["fuzzing"]["targetContractsBalances"][1] = balance
    path = write(tmp_path, config)
    out = tmp_path / "out"
    proc = run_cli("fuzz", str(ARGS / "Args.sol"), "--config", str(path), "--execs", "50",
                   "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    findings = json.loads((out / "summary.json").read_text())["findings"]
    # The property fails exactly when every argument and the balance arrived as written.
    assert [f["function"] for f in findings] == (
        ["property_not_as_configured"] if balance == "2e18" else [])
