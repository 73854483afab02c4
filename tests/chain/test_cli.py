"""``secant deploy``: its output, and every deployment error as one line + exit code 2."""

from __future__ import annotations

import json
import subprocess

import pytest

from secant.abi import RevertReason
from secant.chain.errors import ConstructorReverted
from secant.errors import EXIT_USER_ERROR

from .conftest import CHAIN_FIXTURES, FIXTURES, SOLIDITY, needs_node, run_cli

pytestmark = needs_node

REVERTING = str(CHAIN_FIXTURES / "Reverting.sol")


def _assert_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == EXIT_USER_ERROR == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


ERROR_CASES = {
    "revert-error-string": (
        [REVERTING, "--contract", "RequireCtor", "--arg", "3"],
        ["the constructor of RequireCtor reverted: Error('x too small')", "--arg"]),
    "revert-panic": (
        [REVERTING, "-c", "PanicCtor", "--arg", "0"],
        ["the constructor of PanicCtor reverted: Panic(0x12: division or modulo by zero)"]),
    "revert-custom-error": (
        [REVERTING, "-c", "CustomCtor", "-a", "1"],
        ["the constructor of CustomCtor reverted: TooSmall(1, 10)"]),
    "revert-without-data": (
        [REVERTING, "-c", "BareRevertCtor"],
        ["the constructor of BareRevertCtor reverted: reverted without data"]),
    "no-deployable-contract": (
        [str(SOLIDITY / "OnlyInterface.sol")],
        ["no deployable contract", "add a concrete contract"]),
    "unknown-contract": (
        [REVERTING, "--contract", "Nope"],
        ["no contract named 'Nope' (compiled: BareRevertCtor, CustomCtor, PanicCtor, "
         "RequireCtor)", "pass one of the compiled names to --contract"]),
    "bad-argument": (
        [REVERTING, "-c", "RequireCtor", "--arg", "ten"],
        ["argument 1 (uint256 x_) of the constructor of RequireCtor: 'ten' is not a valid "
         "uint256", "give a uint256 value"]),
    "wrong-argument-count": (
        [REVERTING, "-c", "RequireCtor", "--arg", "11", "--arg", "12"],
        ["the constructor of RequireCtor takes 1 argument (uint256), got 2",
         "pass one --arg per constructor parameter"]),
    "not-payable": (
        [REVERTING, "-c", "RequireCtor", "--arg", "11", "--value", "5"],
        ["the constructor of RequireCtor is not payable", "deploy without a value"]),
    "unknown-fork": (
        [REVERTING, "--fork", "frontier"],
        ["unknown fork 'frontier'"]),
}


@pytest.mark.parametrize("args", [c[0] for c in ERROR_CASES.values()], ids=ERROR_CASES.keys())
def test_deploy_errors_exit_2_with_one_line(solc_installed: list[str], args: list[str]) -> None:
    fragments = next(c[1] for c in ERROR_CASES.values() if c[0] is args)
    _assert_error(run_cli("deploy", *args), *fragments)


def test_constructor_reverted_text() -> None:
    error = ConstructorReverted("C", RevertReason("error", b"", "no", "Error"),
                                " (with generated arguments (x=1))")
    assert str(error) == ("the constructor of C reverted: Error('no') (with generated "
                          "arguments (x=1)); pass constructor arguments it accepts with --arg "
                          "(one per parameter), or choose another contract with --contract")


def test_deploy_prints_contracts_and_functions(solc_installed: list[str]) -> None:
    result = run_cli("deploy", str(FIXTURES / "hardhat"), "--arg", "hello")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("deployed Greeter at 0x")
    assert any(line.endswith("Shout  (library)") for line in lines)
    assert any(line.endswith("ReentrancyAttacker  (attacker)") for line in lines)
    assert any("attacker2  (attacker)" in line for line in lines)
    assert lines[-1].strip() == "0xa4136862  setGreeting(string)  nonpayable"
    assert result.stderr == ""


def test_deploy_json_with_generated_arguments(solc_installed: list[str]) -> None:
    result = run_cli("deploy", str(SOLIDITY / "Simple05.sol"), "--json", "--include-view",
                     "--seed", "4")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["main"] == "Simple05" and data["constructor_args_generated"]
    assert {f["signature"] for f in data["fuzzable"]} == {
        "get()", "owner()", "set(uint256)", "stored()"}
    assert [s["role"] for s in data["senders"]] == [
        "deployer", "user", "user", "attacker", "attacker"]
    assert result.stderr.startswith("note: no constructor arguments given for Simple05; "
                                    "generated (initial=")
    assert "from seed 4" in result.stderr
