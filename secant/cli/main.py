"""The ``secant`` command line: :data:`COMMANDS` lists every command and its module.

A command's module is imported only when that command runs (or shows its own help): the
modules pull in the campaign, the engine, the compilers and eth-abi, which ``secant
version`` and ``secant --help`` do not need. Each module adds its commands through
``register(app)``; see :mod:`secant.cli.lazy`.
"""

import typer

from secant.cli.lazy import LazyCommand, LazyGroup, LightCommand

COMMANDS: dict[str, LazyCommand] = {
    "fuzz": LazyCommand("secant.cli.fuzz_cmd", "Fuzz a contract, a harness or a Foundry test "
                                               "contract; write OUT/summary.json."),
    "expert": LazyCommand("secant.cli.expert_cmd", "Run ILF's symbolic expert on a contract; "
                                                   "write its choices to OUT/dataset.jsonl."),
    "replay": LazyCommand("secant.cli.replay_cmd", "Rebuild a campaign's chain from its "
                                                   "summary.json manifest and replay its cases."),
    "shrink": LazyCommand("secant.cli.shrink_cmd", "Shrink findings of a finished campaign and "
                                                   "rewrite their files."),
    "compile": LazyCommand("secant.cli.compile_cmd", "Compile contracts and print them with "
                                                     "their functions, selectors and code sizes."),
    "deploy": LazyCommand("secant.cli.deploy_cmd", "Deploy a contract on a fresh test chain; "
                                                   "print addresses and fuzzable functions."),
    "solc": LazyCommand("secant.cli.compile_cmd", "Solidity compilers: solc-js versions in the "
                                                  "user cache."),
    "evm": LazyCommand("secant.cli.evm_cmd", "EVM tools: conformance state tests."),
    "bench": LazyCommand("secant.cli.bench_cmd", "Benchmarks: figures, never pass/fail."),
    "learn": LazyCommand("secant.cli.learn_cmd", "The learned policy (ILF): build its dataset "
                                                 "from a pinned corpus, train its networks."),
}
"""Every command but ``version``, in ``secant --help`` order, with the line it shows there.

Each summary repeats the first paragraph of the command's docstring (or its group's help);
tests/cli/test_lazy.py checks that they agree.
"""


class SecantGroup(LazyGroup):
    """The top-level ``secant`` group: ``version`` is eager, :data:`COMMANDS` lazy."""

    lazy_commands = COMMANDS


app = typer.Typer(cls=SecantGroup, no_args_is_help=True, add_completion=False,
                  help="secant: greybox fuzzer for EVM")


@app.callback()
def _group() -> None:
    # Typer turns an app with a single registered command into that command; a callback
    # keeps ``secant`` a group whose other commands come from COMMANDS. It does nothing.
    pass


@app.command("version", cls=LightCommand)
def version() -> None:
    """Print the secant version."""
    from secant import __version__

    typer.echo(__version__)
