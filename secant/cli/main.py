"""The ``secant`` command line: every command module adds its commands through ``register``."""

import typer

from secant.cli import (
    bench_cmd,
    compile_cmd,
    deploy_cmd,
    evm_cmd,
    expert_cmd,
    fuzz_cmd,
    replay_cmd,
    shrink_cmd,
)

app = typer.Typer(no_args_is_help=True, add_completion=False, help="secant: greybox fuzzer for EVM")


@app.command("version")
def version() -> None:
    """Print the secant version."""
    from secant import __version__

    typer.echo(__version__)


for _module in (fuzz_cmd, expert_cmd, replay_cmd, shrink_cmd, compile_cmd, deploy_cmd,
                evm_cmd, bench_cmd):
    _module.register(app)
