"""The command line imports a command's module only when that command is needed.

``secant version`` and ``secant --help`` must not import the campaign, the engine,
eth-abi or (for ``version``) rich: they cost seconds on a busy machine. What is pinned
here is which modules get imported, never a wall-clock time. The lazy command list must
still read exactly as the eager one did.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from secant.cli.main import COMMANDS, app, version

PROBE = """
import json, sys
from secant.cli.main import app
try:
    app(sys.argv[1:], prog_name="secant")
except SystemExit:
    pass
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
"""
"""Runs ``secant ARGS`` in a fresh interpreter, then prints every module it imported."""

HEAVY = ("eth_abi", "eth_utils", "pydantic", "parsimonious", "rich", "secant.campaign",
         "secant.engine", "secant.compile", "secant.evm", "secant.chain", "secant.abi")
"""Packages the command modules pull in and a short command must not."""

COMMAND_MODULES = tuple(sorted({spec.module for spec in COMMANDS.values()}))


def run_secant(*args: str) -> tuple[str, list[str]]:
    """``secant ARGS`` in a subprocess: its output and the modules it imported."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, timeout=60, env={"COLUMNS": "100", "PATH": ""})
    output, _, modules = proc.stdout.rpartition("\nMODULES ")
    assert proc.returncode == 0, proc.stderr
    return output, json.loads(modules)


def imported(modules: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_version_imports_no_command_module_nor_heavy_package() -> None:
    output, modules = run_secant("version")
    assert output.strip() == __import__("secant").__version__
    assert imported(modules, HEAVY + COMMAND_MODULES) == []


def test_help_lists_every_command_without_importing_them() -> None:
    output, modules = run_secant("--help")
    # A panel row naming a command: "│ name  help"; wrapped help lines start with spaces.
    listed = [match[1] for line in output.splitlines()
              if (match := re.match(r"│ ([a-z]\S*) ", line))]
    assert listed == ["version", *COMMANDS]
    # typer renders help with rich; nothing of secant's commands is needed for it.
    assert imported(modules, tuple(p for p in HEAVY if p != "rich") + COMMAND_MODULES) == []


def eager_app() -> typer.Typer:
    """The command line built as it was before it was lazy: every module registered."""
    eager = typer.Typer(no_args_is_help=True, add_completion=False, help=app.info.help)
    eager.command("version")(version)
    for module in dict.fromkeys(spec.module for spec in COMMANDS.values()):
        importlib.import_module(module).register(eager)
    return eager


@pytest.mark.parametrize("args", [["--help"], [], ["fuz"], ["nosuchcommand"]],
                         ids=["help", "no-args", "typo", "unknown"])
def test_top_level_reads_as_the_eager_command_line(args: list[str]) -> None:
    runner = CliRunner()
    lazy, eager = runner.invoke(app, args), runner.invoke(eager_app(), args)
    assert (lazy.output, lazy.exit_code) == (eager.output, eager.exit_code)


def test_every_command_help_reads_as_before() -> None:
    runner = CliRunner()
    eager = eager_app()
    for name in COMMANDS:
        lazy_help = runner.invoke(app, [name, "--help"])
        assert lazy_help.exit_code == 0
        assert lazy_help.output == runner.invoke(eager, [name, "--help"]).output


def test_a_lazy_command_runs_and_errors_as_before() -> None:
    result = CliRunner().invoke(app, ["fuzz"])
    assert result.exit_code == 2
    assert "no contract to fuzz" in result.output
    group = typer.main.get_command(app)
    assert sorted(group.commands) == sorted(["version", *COMMANDS])  # type: ignore[attr-defined]
