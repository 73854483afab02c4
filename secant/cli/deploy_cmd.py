"""``secant deploy``: compile an input, deploy it on a fresh test chain, print the result."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from secant.cli.compile_cmd import (
    EvmVersionFlag,
    OptimizeFlag,
    OptimizerRunsFlag,
    RemapFlag,
    SolcVersionFlag,
    ViaIrFlag,
)
from secant.errors import SecantError, cli_errors

if TYPE_CHECKING:
    from secant.abi import AbiFunction
    from secant.chain.chain import TestChain


def register(app: typer.Typer) -> None:
    """Add ``deploy`` to the main app."""
    app.command("deploy")(deploy_command)


@cli_errors
def deploy_command(
    path: Annotated[Path, typer.Argument(
        help="A Solidity/Vyper file, a Foundry or Hardhat project, or .bin + .abi")],
    contract: Annotated[str | None, typer.Option(
        "--contract", "-c", help="Deploy this contract (Name or source:Name) as the main one.")
    ] = None,
    arg: Annotated[list[str] | None, typer.Option(
        "--arg", "-a", help="A constructor argument, parsed by its ABI type (repeat once per "
                            "parameter, in order). Without any, arguments are generated.")
    ] = None,
    value: Annotated[int, typer.Option("--value", help="Wei sent to the constructor.")] = 0,
    seed: Annotated[int, typer.Option(
        "--seed", help="Seed of generated constructor arguments.")] = 0,
    include_view: Annotated[bool, typer.Option(
        "--include-view", help="List view/pure functions among the fuzzable ones.")] = False,
    fork: Annotated[str, typer.Option("--fork", help="EVM fork of the chain.")] = "cancun",
    unlimited_code_size: Annotated[bool, typer.Option(
        "--unlimited-code-size", help="Lift the EIP-170/3860 contract size limits.")] = False,
    solc_version: SolcVersionFlag = None,
    optimize: OptimizeFlag = None,
    optimizer_runs: OptimizerRunsFlag = None,
    via_ir: ViaIrFlag = None,
    evm_version: EvmVersionFlag = None,
    remap: RemapFlag = None,
    abi: Annotated[Path | None, typer.Option(
        "--abi", help="ABI JSON for raw bytecode input.")] = None,
    runtime: Annotated[bool | None, typer.Option(
        "--runtime/--creation", help="Raw bytecode is runtime / creation code (default: guess).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Deploy a contract on a fresh test chain; print addresses and fuzzable functions."""
    from secant.chain.chain import ChainConfig, TestChain
    from secant.compile.loader import LoadOptions, load
    from secant.compile.solc import SolcManager
    from secant.compile.solidity import CompileOptions
    from secant.evm.forks import get_fork

    try:
        chosen_fork = get_fork(fork)
    except ValueError as exc:
        raise SecantError(str(exc), "pass --fork with one of those names") from None
    config = ChainConfig(fork=chosen_fork, seed=seed, include_read_only=include_view,
                         unlimited_code_size=unlimited_code_size)
    with SolcManager() as manager:
        options = CompileOptions(solc_version=solc_version, optimize=optimize,
                                 optimize_runs=optimizer_runs, via_ir=via_ir,
                                 evm_version=evm_version, remappings=tuple(remap or ()))
        compilations = load([path], options, manager, LoadOptions(abi=abi, runtime=runtime))
        for note in manager.notes:
            print(f"note: {note}", file=sys.stderr)
    chain = TestChain.setup(compilations, contract, arg or None, value, config)
    for note in chain.notes:
        print(f"note: {note}", file=sys.stderr)
    main = chain.main
    assert main is not None
    functions = chain.fuzzable_functions()
    if as_json:
        typer.echo(json.dumps(_as_json(chain, functions), indent=2))
        return
    typer.echo(f"deployed {main.name} at {main.hex}")
    typer.echo("contracts:")
    for deployed in chain.contracts:
        typer.echo(f"  {deployed.hex}  {deployed.name}  ({deployed.role})")
    typer.echo("senders:")
    for sender in chain.senders:
        typer.echo(f"  {sender.hex}  {sender.name}  ({sender.role.value})")
    typer.echo(f"fuzzable functions of {main.name}:")
    for fn in functions:
        selector = f"0x{fn.selector.hex()}" if fn.kind == "function" else fn.kind.ljust(10)
        typer.echo(f"  {selector}  {fn.signature if fn.kind == 'function' else ''}"
                   f"  {fn.state_mutability}".rstrip())


def _as_json(chain: TestChain, functions: list[AbiFunction]) -> dict[str, Any]:
    main = chain.main
    assert main is not None
    return {
        "main": main.name,
        "address": main.hex,
        "constructor_args_generated": main.generated_args,
        "contracts": [{"name": c.name, "address": c.hex, "role": c.role}
                      for c in chain.contracts],
        "senders": [{"name": s.name, "address": s.hex, "role": s.role.value}
                    for s in chain.senders],
        "fuzzable": [{"kind": f.kind, "signature": f.signature,
                      "selector": "0x" + f.selector.hex(), "mutability": f.state_mutability}
                     for f in functions],
        "notes": list(chain.notes),
    }
