"""One entry point for every kind of input.

Solidity or Vyper files, directories of them, Foundry and Hardhat projects, raw bytecode with
an ABI, JSON artifacts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from secant.compile.artifacts import Compilation, CompiledContract
from secant.compile.bytecode import BYTECODE_SUFFIXES, load_bytecode
from secant.compile.config import read_project
from secant.compile.errors import InputError, NoDeployableContract, UnknownContract
from secant.compile.hardhat import is_hardhat_project, load_hardhat
from secant.compile.project import check_options, compile_options_for, load_project
from secant.compile.solc import SolcManager
from secant.compile.solidity import CompileOptions, compile_sources, gather
from secant.compile.vyper_lang import compile_vyper


@dataclass(frozen=True)
class LoadOptions:
    """Options for non-Solidity inputs: the ABI file of raw code, runtime-vs-creation.

    ``forge_build`` runs ``forge build`` (when forge is on PATH) for a Foundry project whose
    ``out/`` is stale, instead of compiling its sources with solc.
    """

    abi: Path | None = None
    runtime: bool | None = None
    forge_build: bool = False


def _expand(path: Path) -> list[Path]:
    """Return the Solidity and Vyper files of a plain directory (non-recursive, sorted)."""
    files = sorted(p for p in path.iterdir() if p.suffix in (".sol", ".vy") and p.is_file())
    if not files:
        raise InputError(f"{path} holds no .sol or .vy file and is no Foundry or Hardhat "
                         "project", "give a contract file or a project directory")
    return files


def load(paths: list[Path], options: CompileOptions | None = None,
         manager: SolcManager | None = None,
         load_options: LoadOptions | None = None) -> list[Compilation]:
    """Compile or read every input; Solidity files share one compiler process per version.

    ``options`` hold the caller's choices; a Foundry or Hardhat project fills in the compiler
    settings they leave unchosen, for the project itself and for files inside it
    (:func:`secant.compile.project.compile_options_for`).
    """
    options = check_options(options or CompileOptions())
    extra = load_options or LoadOptions()
    own = manager is None
    active = manager or SolcManager(allow_install=options.allow_install)
    results: list[Compilation] = []
    try:
        for path in paths:
            if not path.exists():
                raise InputError(f"{path} does not exist", "check the path")
            if path.is_dir():
                project = read_project(path.resolve())
                if project is not None:
                    results.extend(load_project(project, options, active, extra.forge_build))
                    continue
                if is_hardhat_project(path):
                    results.extend(load_hardhat(path))
                    continue
                files = _expand(path)
            else:
                files = [path]
            for file in files:
                results.append(_load_file(file, compile_options_for([file], options), active,
                                          extra))
    finally:
        if own:
            active.close()
    return results


def _load_file(path: Path, options: CompileOptions, manager: SolcManager,
               extra: LoadOptions) -> Compilation:
    if path.suffix == ".sol":
        return compile_sources(gather([path], options), manager, options)
    if path.suffix == ".vy":
        return compile_vyper(path)
    if path.name.endswith(BYTECODE_SUFFIXES) or path.suffix in (".abi", ".json"):
        return load_bytecode(path, extra.abi, extra.runtime)
    raise InputError(f"do not know how to read {path.name}",
                     "give a .sol, .vy, .bin/.hex (+ .abi) or .json artifact, or a project "
                     "directory")


def select_contract(compilations: list[Compilation],
                    name: str | None = None) -> tuple[Compilation, CompiledContract]:
    """Return the contract to fuzz: the one named, else the main contract of the first input."""
    if name is not None:
        unknown: UnknownContract | None = None
        for compilation in compilations:
            try:
                return compilation, compilation.main_contract(name)
            except UnknownContract as error:
                unknown = unknown or error
        known = sorted({c.name for comp in compilations for c in comp.contracts})
        raise UnknownContract(f"no contract named {name!r} (compiled: {', '.join(known)})",
                              "pass one of the compiled names to --contract") from unknown
    for compilation in compilations:
        if compilation.deployable():
            return compilation, compilation.main_contract()
    raise NoDeployableContract(
        "no deployable contract in the input (only interfaces, libraries or abstract "
        "contracts)", "add a concrete contract or compile the file that defines one")
