"""Every command-line option a message of secant mentions exists on some command."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import typer

from secant.cli.main import app

PACKAGE = Path(__file__).resolve().parents[2] / "secant"
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
NOT_OURS = {"--standard-json", "--version", "--prefix", "--help", "--offline", "--use",
            "--no-save", "--silent", "--no-audit", "--no-fund", "--ignore-scripts",
            "--allow-paths", "--loglevel", "--no-package-lock", "--head"}
"""Options of other programs secant runs or names (solc, npm, forge, ray) or that click
adds."""


def options(command: Any) -> set[str]:
    found = {opt for param in command.params
             for opt in [*param.opts, *getattr(param, "secondary_opts", [])]
             if opt.startswith("--")}
    for sub in getattr(command, "commands", {}).values():
        found |= options(sub)
    return found


def mentioned() -> dict[str, list[str]]:
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for option in OPTION.findall(node.value):
                    where.setdefault(option, []).append(f"{path.name}:{node.lineno}")
    return where


def test_every_option_a_message_names_exists() -> None:
    known = options(typer.main.get_command(app))
    missing = {option: places for option, places in mentioned().items()
               if option not in known and option not in NOT_OURS}
    assert missing == {}
