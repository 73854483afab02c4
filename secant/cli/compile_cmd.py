"""``secant compile`` and ``secant solc install|list``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from secant.compile.artifacts import Compilation, CompiledContract
from secant.compile.errors import NoDeployableContract, UnknownContract
from secant.compile.loader import LoadOptions, load
from secant.compile.semver import format_version, parse_version
from secant.compile.solc import (
    SolcManager,
    find_native,
    install,
    installed_versions,
    package_dir,
    remote_versions,
)
from secant.compile.solidity import CompileOptions
from secant.errors import SecantError, cli_errors

SolcVersionFlag = Annotated[str | None, typer.Option(
    "--solc-version", help="Use this solc version instead of the project's or the newest the "
                           "pragmas allow.")]
"""``--solc-version``: compiler version (None: the project's, else from the pragmas)."""

OptimizeFlag = Annotated[bool | None, typer.Option(
    "--optimize/--no-optimize", help="Turn the optimizer on or off (default: the project's "
                                     "setting, else off).")]
"""``--optimize/--no-optimize`` (None: the project's setting, else off)."""

OptimizerRunsFlag = Annotated[int | None, typer.Option(
    "--optimizer-runs", "--optimize-runs", help="Optimizer runs (default: the project's, "
                                                "else 200).")]
"""``--optimizer-runs N`` (None: the project's, else 200); does not turn the optimizer on."""

ViaIrFlag = Annotated[bool | None, typer.Option(
    "--via-ir/--no-via-ir", help="Compile through Yul IR (solc 0.8.13 and later; default: the "
                                 "project's setting, else off).")]
"""``--via-ir/--no-via-ir`` (None: the project's setting, else off)."""

EvmVersionFlag = Annotated[str | None, typer.Option(
    "--evm-version", help="EVM version to compile for, e.g. cancun (default: the project's, "
                          "else the compiler's).")]
"""``--evm-version NAME`` (None: the project's, else the compiler's default)."""

RemapFlag = Annotated[list[str] | None, typer.Option(
    "--remap", metavar="FROM=TO", help="Import remapping [context:]prefix=target, before the "
                                       "project's (repeatable).")]
"""``--remap FROM=TO``, repeatable; these win over the project's remappings."""


def register(app: typer.Typer) -> None:
    """Add ``compile`` and the ``solc`` group to the main app."""
    app.command("compile")(compile_command)
    solc_app = typer.Typer(no_args_is_help=True,
                           help="Solidity compilers: solc-js versions in the user cache.")
    solc_app.command("install")(solc_install)
    solc_app.command("list")(solc_list)
    app.add_typer(solc_app, name="solc")


def _contract_json(contract: CompiledContract, main: bool) -> dict[str, Any]:
    abi = contract.abi
    return {
        "name": contract.name,
        "source": contract.source,
        "kind": contract.kind,
        "language": contract.language,
        "deployable": contract.deployable,
        "main": main,
        "creation_size": contract.creation.size,
        "runtime_size": contract.runtime.size,
        "libraries": list(contract.libraries),
        "constructor": None if abi.constructor is None else {
            "inputs": [p.canonical for p in abi.constructor.inputs],
            "payable": abi.constructor.payable,
        },
        "functions": [
            {"name": f.name, "signature": f.signature, "selector": "0x" + f.selector.hex(),
             "mutability": f.state_mutability}
            for f in sorted(abi.functions, key=lambda f: f.signature)
        ],
        "fallback": None if abi.fallback is None else abi.fallback.state_mutability,
        "receive": abi.receive is not None,
        "events": sorted(e.signature for e in abi.events),
        "errors": sorted(e.signature for e in abi.errors),
    }


def _selected(compilation: Compilation, name: str | None) -> list[CompiledContract]:
    if name is None:
        return list(compilation.contracts)
    try:
        return [compilation.contract(name)]
    except UnknownContract:
        return []


def _main_of(compilation: Compilation) -> CompiledContract | None:
    try:
        return compilation.main_contract()
    except NoDeployableContract:
        return None


def _print_text(compilations: list[Compilation], name: str | None) -> None:
    for compilation in compilations:
        main = _main_of(compilation)
        roots = ", ".join(compilation.roots) or compilation.origin
        typer.echo(f"{roots}  ({compilation.compiler})")
        for contract in _selected(compilation, name):
            tag = "  [main]" if contract is main else ""
            sizes = f"creation {contract.creation.size} B, runtime {contract.runtime.size} B"
            typer.echo(f"  {contract.qualified_name}  {contract.kind}  {sizes}{tag}")
            if contract.libraries:
                typer.echo(f"    links: {', '.join(contract.libraries)}")
            ctor = contract.abi.constructor
            if ctor is not None and ctor.inputs:
                args = ",".join(p.canonical for p in ctor.inputs)
                typer.echo(f"    constructor({args}){' payable' if ctor.payable else ''}")
            for fn in sorted(contract.abi.functions, key=lambda f: f.signature):
                typer.echo(f"    0x{fn.selector.hex()}  {fn.signature}  {fn.state_mutability}")
            if contract.abi.fallback is not None:
                typer.echo(f"    fallback  {contract.abi.fallback.state_mutability}")
            if contract.abi.receive is not None:
                typer.echo("    receive  payable")
        if compilation.warnings:
            typer.echo(f"  ({len(compilation.warnings)} compiler warning"
                       f"{'s' if len(compilation.warnings) != 1 else ''})")


@cli_errors
def compile_command(
    paths: Annotated[list[Path], typer.Argument(
        help="Solidity/Vyper files, directories, Foundry or Hardhat projects, .bin + .abi")],
    contract: Annotated[str | None, typer.Option(
        "--contract", "-c", help="Show only this contract (Name or source:Name).")] = None,
    solc_version: SolcVersionFlag = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
    optimize: OptimizeFlag = None,
    optimizer_runs: OptimizerRunsFlag = None,
    via_ir: ViaIrFlag = None,
    evm_version: EvmVersionFlag = None,
    remap: RemapFlag = None,
    include_path: Annotated[list[Path] | None, typer.Option(
        "--include-path", help="Extra directory to look up imports (repeatable).")] = None,
    abi: Annotated[Path | None, typer.Option(
        "--abi", help="ABI JSON for raw bytecode input.")] = None,
    runtime: Annotated[bool | None, typer.Option(
        "--runtime/--creation", help="Raw bytecode is runtime / creation code (default: guess).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ignore the output cache.")] = False,
) -> None:
    """Compile contracts and print them with their functions, selectors and code sizes."""
    options = CompileOptions(
        solc_version=solc_version, optimize=optimize, optimize_runs=optimizer_runs,
        evm_version=evm_version, via_ir=via_ir, remappings=tuple(remap or ()),
        include_paths=tuple(include_path or ()), use_cache=not no_cache,
    )
    with SolcManager() as manager:
        compilations = load(paths, options, manager, LoadOptions(abi=abi, runtime=runtime))
        for note in manager.notes:
            print(f"note: {note}", file=sys.stderr)
    if contract is not None:
        if not any(_selected(c, contract) for c in compilations):
            known = sorted({c.name for comp in compilations for c in comp.contracts})
            raise UnknownContract(f"no contract named {contract!r} (compiled: "
                                  f"{', '.join(known) or 'none'})",
                                  "pass one of the compiled names to --contract")
    elif not any(c.deployable() for c in compilations):
        raise NoDeployableContract(
            "no deployable contract in the input (only interfaces, libraries or abstract "
            "contracts)", "add a concrete contract or compile the file that defines one")
    if as_json:
        data = {"compilations": [
            {"roots": list(comp.roots), "compiler": comp.compiler, "origin": comp.origin,
             "warnings": list(comp.warnings),
             "contracts": [_contract_json(c, c is _main_of(comp))
                           for c in _selected(comp, contract)]}
            for comp in compilations
        ]}
        typer.echo(json.dumps(data, indent=2))
    else:
        _print_text(compilations, contract)


@cli_errors
def solc_install(
    version: Annotated[str, typer.Argument(help="Version to install, e.g. 0.8.26.")],
    force: Annotated[bool, typer.Option("--force", help="Reinstall if present.")] = False,
) -> None:
    """Install a solc-js version into the user cache."""
    try:
        parsed = parse_version(version)
    except ValueError:
        raise SecantError(f"{version!r} is not a version", "give one such as 0.8.26") from None
    path = install(parsed, force=force)
    typer.echo(f"solc-js {format_version(parsed)} installed in {path}")


@cli_errors
def solc_list(
    remote: Annotated[bool, typer.Option(
        "--remote", help="Also list releases available on npm (asks npm).")] = False,
) -> None:
    """List installed solc versions (and, with --remote, installable ones)."""
    native = find_native()
    if native is not None:
        typer.echo(f"native  {native.long_version}  {native.path}")
    installed = installed_versions()
    for version in installed:
        typer.echo(f"solc-js  {format_version(version)}  {package_dir(version)}")
    if not installed and native is None:
        typer.echo("no solc installed (secant installs versions on demand)")
    if remote:
        available = [v for v in remote_versions(refresh=True) if v not in installed]
        typer.echo("available: " + " ".join(format_version(v) for v in reversed(available)))
