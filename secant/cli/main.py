"""The ``secant`` command line."""

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="secant: greybox fuzzer for EVM")
evm_app = typer.Typer(no_args_is_help=True, help="EVM tools: conformance state tests.")
app.add_typer(evm_app, name="evm")


@evm_app.command("version")
def version() -> None:
    """Print the secant version."""
    from secant import __version__

    typer.echo(__version__)


import secant.cli.statetest_cmd  # noqa: E402, F401  (registers ``secant evm statetest``)
from secant.cli.compile_cmd import register as _register_compile  # noqa: E402

_register_compile(app)

from secant.cli.deploy_cmd import register as _register_deploy  # noqa: E402

_register_deploy(app)

from secant.cli.bench_cmd import register as _register_bench  # noqa: E402

_register_bench(app)

from secant.cli.fuzz_cmd import register as _register_fuzz  # noqa: E402

_register_fuzz(app)
