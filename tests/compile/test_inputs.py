"""Inputs other than Solidity files: Foundry, Hardhat, raw bytecode + ABI, Vyper."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from secant.compile import InputError, LoadOptions, load, select_contract
from secant.compile.bytecode import load_bytecode, looks_like_creation
from secant.compile.foundry import load_foundry
from secant.compile.hardhat import load_hardhat

from .conftest import FIXTURES, SOLIDITY, needs_node


def test_foundry_out_artifacts() -> None:
    compilation = load_foundry(FIXTURES / "foundry", build=False)
    assert compilation.origin == "foundry"
    assert compilation.roots == ("src/Counter.sol",)
    counter = compilation.main_contract()
    assert counter.name == "Counter" and counter.kind == "contract"
    assert {f.signature for f in counter.abi.functions} == {
        "increment()", "number()", "setNumber(uint256)"}
    assert counter.creation.size > counter.runtime.size > 0
    assert counter.ast_id is not None
    assert "0.8.19" in compilation.compiler
    # source maps resolve through the artifact's AST and the build-info source ids
    code = counter.runtime.analysis_bytes()
    mapper = compilation.mapper(counter)
    lines = {mapper.locate(pc).line: mapper.locate(pc).function  # type: ignore[union-attr]
             for pc in mapper.entries if code[pc] == 0x55}
    assert lines == {8: "setNumber", 12: "increment"}


def test_foundry_without_artifacts(tmp_path: Path) -> None:
    (tmp_path / "foundry.toml").write_text('[profile.default]\nsrc = "src"\n')
    if shutil.which("forge"):
        pytest.skip("forge is installed; it would build the project")
    with pytest.raises(InputError, match="no Foundry artifacts"):
        load_foundry(tmp_path)


def test_hardhat_build_info() -> None:
    [compilation] = load_hardhat(FIXTURES / "hardhat")
    assert compilation.origin == "hardhat"
    assert compilation.roots == ("contracts/Greeter.sol",)
    greeter = compilation.main_contract()
    assert greeter.name == "Greeter"
    assert greeter.libraries == ("contracts/Greeter.sol:Shout",)
    assert greeter.abi.constructor is not None
    assert [p.canonical for p in greeter.abi.constructor.inputs] == ["string"]
    code = greeter.runtime.analysis_bytes()
    mapper = compilation.mapper(greeter)
    assert code[0] == 0x60
    located = [mapper.locate(pc) for pc in mapper.entries]
    lines = {(loc.line, loc.function) for loc in located if loc is not None}
    assert {(22, "setGreeting"), (23, "setGreeting"), (18, "greet")} <= lines
    assert compilation.contract("Shout").kind == "library"


def test_hardhat_bare_artifacts(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "hardhat", tmp_path / "hh")
    shutil.rmtree(tmp_path / "hh/artifacts/build-info")
    [compilation] = load_hardhat(tmp_path / "hh")
    greeter = compilation.contract("Greeter")
    assert greeter.libraries == ("contracts/Greeter.sol:Shout",)
    assert greeter.runtime.size > 0 and not compilation.sources


def test_bytecode_with_abi() -> None:
    creation = load_bytecode(FIXTURES / "bytecode/Simple05.bin").main_contract()
    assert creation.creation.size > 0 and creation.runtime.empty
    assert creation.abi.function("set").signature == "set(uint256)"
    runtime = load_bytecode(FIXTURES / "bytecode/Simple05Runtime.bin-runtime").main_contract()
    assert runtime.creation.empty and runtime.runtime.size > 0
    assert runtime.deployable
    # the heuristic tells the two apart without the file suffix
    assert looks_like_creation(creation.creation.to_bytes())
    assert not looks_like_creation(runtime.runtime.to_bytes())


def test_bytecode_guess_and_abi_option(tmp_path: Path) -> None:
    runtime_hex = (FIXTURES / "bytecode/Simple05Runtime.bin-runtime").read_text()
    (tmp_path / "code.hex").write_text(runtime_hex)
    options = LoadOptions(abi=FIXTURES / "bytecode/Simple05.abi")
    [compilation] = load([tmp_path / "code.hex"], load_options=options)
    contract = compilation.main_contract()
    assert contract.creation.empty and contract.runtime.size == len(runtime_hex.strip()) // 2
    assert len(contract.abi.functions) == 4
    [no_abi] = load([tmp_path / "code.hex"])
    assert no_abi.warnings and not no_abi.main_contract().abi.functions


def test_json_artifact_as_bytecode() -> None:
    path = FIXTURES / "hardhat/artifacts/contracts/Greeter.sol/Greeter.json"
    contract = load_bytecode(path).main_contract()
    assert contract.name == "Greeter" and contract.creation.size > 0


def test_vyper_contract() -> None:
    pytest.importorskip("vyper", reason="the vyper package is not installed")
    [compilation] = load([FIXTURES / "vyper/Counter.vy"])
    counter = compilation.main_contract()
    assert counter.language == "Vyper" and counter.name == "Counter"
    assert {f.signature for f in counter.abi.functions} == {
        "add(uint256)", "counter()", "owner()"}
    assert counter.creation.size > counter.runtime.size > 0
    mapper = compilation.mapper(counter)
    located = [mapper.locate(pc) for pc in sorted(mapper.entries)]
    lines = {(loc.line, loc.function) for loc in located if loc is not None}
    assert (15, "add") in lines  # self.counter += x
    assert any(line == 14 for line, _ in lines)  # the assert


@needs_node
def test_directory_of_files_and_select(solc_installed: list[str], tmp_path: Path) -> None:
    for name in ("Simple05.sol", "Simple08.sol", "OnlyInterface.sol"):
        shutil.copy(SOLIDITY / name, tmp_path / name)
    compilations = load([tmp_path])
    assert [c.roots for c in compilations] == [
        ("OnlyInterface.sol",), ("Simple05.sol",), ("Simple08.sol",)]
    compilation, contract = select_contract(compilations)
    assert contract.name == "Simple05"
    _, named = select_contract(compilations, "Simple08")
    assert named.name == "Simple08"
