"""``secant evm statetest``: run official state-test fixtures against secant's EVM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from secant.errors import SecantError, cli_errors
from secant.statetest.fixtures import find_files


def register(app: typer.Typer) -> None:
    """Add the ``evm`` group (``statetest``) to the main app."""
    evm_app = typer.Typer(no_args_is_help=True, help="EVM tools: conformance state tests.")
    evm_app.command("statetest")(statetest_command)
    app.add_typer(evm_app, name="evm")


@cli_errors
def statetest_command(
    paths: Annotated[list[Path], typer.Argument(
        help="State-test JSON files or folders (e.g. ../shared/evm-fixtures/ethereum-tests).",
        show_default=False)],
    skip_slow: Annotated[bool, typer.Option(
        "--skip-slow", help="Skip the cases listed as slow.")] = False,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", help="Worker processes (files are spread over them).")] = 1,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also print passing and skipped cases, per-folder counts "
                                "and the slowest cases.")] = False,
) -> None:
    """Run every case of the given state tests; print one FAIL line per failing case.

    Ends with ``N passed, M failed, K skipped``; the exit code is 0 when none failed, else 1.
    """
    if jobs < 1:
        raise SecantError(f"--jobs must be at least 1, got {jobs}")
    files = find_files(paths)  # a missing path is a user error (exit 2), checked first
    if not files:
        raise SecantError(
            f"no state-test JSON files under {', '.join(str(p) for p in paths)}",
            "give state-test files or folders, e.g. ../shared/evm-fixtures",
        )
    from secant.statetest.runner import run_paths

    summary = run_paths(files, skip_slow=skip_slow, jobs=jobs, verbose=verbose,
                        emit=typer.echo)
    raise typer.Exit(0 if summary.ok else 1)

