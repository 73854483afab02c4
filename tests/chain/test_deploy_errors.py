"""Deployment failures other than reverts: missing libraries, code size, invalid values."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from secant.chain import ChainConfig, DeploymentFailed, TestChain
from secant.chain.asm import assemble, deployer
from secant.compile import Compilation
from secant.compile.bytecode import load_bytecode
from secant.compile.hardhat import load_hardhat

from .conftest import FIXTURES


def test_missing_library_is_named() -> None:
    [compilation] = load_hardhat(FIXTURES / "hardhat")
    without = Compilation([c for c in compilation.contracts if c.name != "Shout"],
                          compilation.sources, compilation.roots)
    with pytest.raises(DeploymentFailed, match="Greeter links against library "
                       "contracts/Greeter.sol:Shout, which is not in the input"):
        TestChain.setup(without, args=["x"])


def test_libraries_are_deployed_once_per_chain() -> None:
    [compilation] = load_hardhat(FIXTURES / "hardhat")
    chain = TestChain()
    first = chain.deploy(compilation, args=["a"])
    second = chain.deploy(compilation, "Greeter", args=["b"], main=False)
    assert [c.name for c in chain.contracts if c.role == "library"] == ["Shout"]
    assert (first.name, second.name) == ("Greeter", "Greeter#2")
    assert chain.main is first
    assert chain.view(second, "greet").value == "b!"


def _huge(tmp_path: Path) -> Path:
    runtime = assemble(["STOP"]) + bytes(0x6001)  # one byte over the EIP-170 limit
    path = tmp_path / "Huge.bin"
    path.write_text(deployer(runtime).hex())
    return path


def test_code_size_limit_and_unlimited_option(tmp_path: Path) -> None:
    compilation = load_bytecode(_huge(tmp_path))
    with pytest.raises(DeploymentFailed, match="deploying Huge failed: created code exceeds "
                       "the size limit; pass --unlimited-code-size"):
        TestChain.setup(compilation)
    chain = TestChain.setup(compilation, config=ChainConfig(unlimited_code_size=True))
    assert chain.main is not None and len(chain.state.code(chain.main.address)) == 0x6002


def test_invalid_deployment_transaction(tmp_path: Path) -> None:
    compilation = load_bytecode(_huge(tmp_path))
    poor = ChainConfig(balance=10)
    with pytest.raises(DeploymentFailed, match="the deployment transaction is invalid: "
                       "insufficient balance"):
        TestChain.setup(compilation, value=100, config=poor)


def test_runtime_code_ignores_constructor_arguments() -> None:
    compilation = load_bytecode(FIXTURES / "bytecode/Simple05Runtime.bin-runtime")
    chain = TestChain.setup(compilation, args=["5"])
    assert any("were ignored" in note for note in chain.notes)
    contract = compilation.contracts[0]
    unlinked = replace(contract.runtime, hex=contract.runtime.hex[:-40] + "__$" + "0" * 34 + "$__")
    broken = Compilation([replace(contract, runtime=unlinked)], {}, compilation.roots)
    with pytest.raises(DeploymentFailed, match="unlinked library placeholders"):
        TestChain.setup(broken)
