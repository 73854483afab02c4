"""``secant compile`` / ``secant solc``: output, and every user error as one line + exit 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import FIXTURES, SOLIDITY, needs_node, newest_08, run_cli


def _assert_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    code = result.returncode
    stderr = result.stderr
    assert code == 2, (code, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def _fake_install(cache: Path, version: str) -> None:
    pkg = cache / "solc" / version / "node_modules" / "solc"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text("{}")
    (pkg / "soljson.js").write_text("")


def test_error_node_missing(tmp_path: Path) -> None:
    version = newest_08()
    _fake_install(tmp_path, version)
    result = run_cli("compile", str(SOLIDITY / "Simple08.sol"), "--no-cache",
                     env={"SECANT_CACHE": str(tmp_path), "SECANT_NODE": "/nonexistent/node",
                          "SECANT_SOLC": "none"})
    _assert_error(result, "node is not installed", f"solc-js {version}",
                  "install Node.js and npm")


def test_error_npm_missing(tmp_path: Path) -> None:
    result = run_cli("compile", str(SOLIDITY / "Simple05.sol"),
                     env={"SECANT_CACHE": str(tmp_path), "SECANT_NPM": "/nonexistent/npm",
                          "SECANT_SOLC": "none"})
    _assert_error(result, "npm is not installed", "install solc-js 0.5.17")


@needs_node
def test_error_compiler_not_installable_offline(tmp_path: Path) -> None:
    result = run_cli("solc", "install", "0.5.16", env={
        "SECANT_CACHE": str(tmp_path), "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_fetch_retries": "0", "npm_config_fetch_timeout": "5000"})
    _assert_error(result, "solc 0.5.16 is not installed", "cannot reach the package registry",
                  "secant solc install 0.5.16")
    compiled = run_cli("compile", str(SOLIDITY / "Simple05.sol"), env={
        "SECANT_CACHE": str(tmp_path), "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_fetch_retries": "0", "SECANT_SOLC": "none"})
    _assert_error(compiled, "solc 0.5.17 is not installed", "(offline?)")


def test_error_unsatisfiable_pragma() -> None:
    result = run_cli("compile", str(SOLIDITY / "BadPragma.sol"))
    _assert_error(result, "no solc release satisfies 'pragma solidity ^0.9.0'",
                  "BadPragma.sol", "fix the version pragma")
    forced = run_cli("compile", str(SOLIDITY / "Simple08.sol"), "--solc-version", "0.5.17")
    _assert_error(forced, "solc 0.5.17 does not satisfy 'pragma solidity ^0.8.0'")


def test_error_vyper_pragma(tmp_path: Path) -> None:
    pytest.importorskip("vyper", reason="the vyper package is not installed")
    path = tmp_path / "Old.vy"
    path.write_text("# @version ^0.2.0\nx: public(uint256)\n")
    _assert_error(run_cli("compile", str(path)), "does not satisfy '# @version ^0.2.0'",
                  "pip install")


@needs_node
def test_error_compile_error_has_file_and_line(solc_installed: list[str]) -> None:
    result = run_cli("compile", str(SOLIDITY / "Broken.sol"))
    _assert_error(result, "tests/fixtures/solidity/Broken.sol:6:16:", "DeclarationError",
                  "Undeclared identifier", "fix the source")


@needs_node
def test_error_missing_import(solc_installed: list[str], tmp_path: Path) -> None:
    (tmp_path / "A.sol").write_text('pragma solidity ^0.8.0;\nimport "./Missing.sol";\n'
                                    "contract A {}\n")
    _assert_error(run_cli("compile", str(tmp_path / "A.sol")), "A.sol:2:1:", "Missing.sol")


@needs_node
def test_error_no_deployable_contract(solc_installed: list[str]) -> None:
    result = run_cli("compile", str(SOLIDITY / "OnlyInterface.sol"))
    _assert_error(result, "no deployable contract", "add a concrete contract")


def test_error_unknown_contract() -> None:
    result = run_cli("compile", str(FIXTURES / "foundry"), "--contract", "Nope")
    _assert_error(result, "no contract named 'Nope'", "compiled: Counter", "--contract")


def test_error_missing_path(tmp_path: Path) -> None:
    _assert_error(run_cli("compile", str(tmp_path / "nothing.sol")), "does not exist")


def test_error_bad_version() -> None:
    _assert_error(run_cli("solc", "install", "latest"), "'latest' is not a version")


@needs_node
def test_compile_prints_functions_and_sizes(solc_installed: list[str]) -> None:
    result = run_cli("compile", str(SOLIDITY / "Simple08.sol"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"(solc {newest_08()})" in out
    assert "Simple08.sol:Simple08  contract  creation" in out and "[main]" in out
    assert "0x60fe47b1  set(uint256)  nonpayable" in out
    assert "0x3fa4f245  value()  view" in out


@needs_node
def test_compile_json(solc_installed: list[str]) -> None:
    result = run_cli("compile", str(SOLIDITY / "Simple04.sol"), "--json",
                     "--contract", "Simple04")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    [compilation] = data["compilations"]
    assert compilation["compiler"] == "solc 0.4.26"
    [contract] = compilation["contracts"]
    assert contract["name"] == "Simple04" and contract["main"] and contract["deployable"]
    assert contract["libraries"] == ["tests/fixtures/solidity/Simple04.sol:MathLib"]
    by_sig = {f["signature"]: f for f in contract["functions"]}
    assert by_sig["deposit()"] == {"name": "deposit", "signature": "deposit()",
                                   "selector": "0xd0e30db0", "mutability": "payable"}
    assert contract["runtime_size"] > 0 and contract["creation_size"] > contract["runtime_size"]
    assert contract["events"] == ["Deposited(address,uint256)"]


def test_compile_other_inputs_without_node() -> None:
    for path in ("foundry", "hardhat", "bytecode/Simple05.bin"):
        result = run_cli("compile", str(FIXTURES / path), "--json")
        assert result.returncode == 0, (path, result.stderr)
        assert json.loads(result.stdout)["compilations"][0]["contracts"]


@needs_node
def test_solc_install_and_list(solc_installed: list[str]) -> None:
    installed = run_cli("solc", "install", "0.7.6")
    assert installed.returncode == 0, installed.stderr
    assert "solc-js 0.7.6 installed in" in installed.stdout
    listed = run_cli("solc", "list")
    assert listed.returncode == 0
    for version in ("0.4.26", "0.5.17", "0.6.12", "0.7.6", newest_08()):
        assert f"solc-js  {version}  " in listed.stdout
