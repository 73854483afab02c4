"""``secant bench``: throughput figures (printed, never asserted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from secant.errors import cli_errors


def register(app: typer.Typer) -> None:
    """Add the ``bench`` group to the main app."""
    bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: figures, never pass/fail.")
    bench_app.command("evm")(bench_evm)
    app.add_typer(bench_app, name="bench")


@cli_errors
def bench_evm(
    quick: Annotated[bool, typer.Option("--quick", help="Short run (smoke test).")] = False,
    no_pyevm: Annotated[bool, typer.Option("--no-pyevm", help="Skip the py-evm baseline.")]
    = False,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write figures here.")]
    = None,
) -> None:
    """EVM transactions/s and opcodes/s on fixed workloads, next to py-evm in the same run."""
    from rich.console import Console
    from rich.table import Table

    from secant.bench.evm_bench import run

    console = Console(stderr=True)
    figures, skipped = run(quick=quick, with_pyevm=not no_pyevm,
                           report=lambda msg: console.print(f"[dim]{msg}[/dim]"))
    table = Table(title="secant EVM throughput (best of repeats)")
    for column in ("workload", "opcodes/tx", "plain tx/s", "instrumented tx/s",
                   "py-evm tx/s", "instrumented Mops/s", "instrumented / py-evm"):
        table.add_column(column, justify="right" if column != "workload" else "left")
    for f in figures:
        ratio = f"{f.traced_tx_s / f.pyevm_tx_s:.1f}x" if f.pyevm_tx_s else "n/a"
        table.add_row(
            f"{f.name}\n[dim]{f.detail}[/dim]", f"{f.opcodes_per_tx:,}",
            f"{f.plain_tx_s:,.0f}", f"{f.traced_tx_s:,.0f}",
            f"{f.pyevm_tx_s:,.1f}" if f.pyevm_tx_s else "n/a",
            f"{f.traced_tx_s * f.opcodes_per_tx / 1e6:.2f}", ratio,
        )
    Console(width=150).print(table)
    typer.echo("secant: whole transactions, state restored after each; instrumented = the "
               "fuzzer's trace recorder (coverage, comparisons, storage, panics). py-evm: "
               "CancunComputation.apply_computation with snapshot/revert.")
    if json_path is not None:
        json_path.write_text(json.dumps([f.__dict__ for f in figures], indent=2) + "\n")
    erc20 = next(f for f in figures if f.name == "erc20-transfer")
    if erc20.pyevm_tx_s:
        typer.echo(f"instrumented speedup over py-evm: {erc20.traced_tx_s / erc20.pyevm_tx_s:.1f}x")
    else:
        typer.echo(f"instrumented speedup over py-evm: n/a ({skipped or 'skipped'})")
