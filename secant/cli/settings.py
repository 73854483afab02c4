"""``secant.toml``: a project's options for every command, under the command line's.

The file is looked for in the input folder (or the input file's folder) and its parents,
the first one found wins; ``--config FILE`` names it instead. Each command reads its own
table, keyed by the command's long option names without dashes (``execs``,
``max-sequence-length``, ``oracles``; ``max_sequence_length`` is accepted too):

    [fuzz]
    execs = 50000
    seed = 7
    sequences = "demand"
    oracles = "assertion,property"
    arg = ["1000", "0x00000000000000000000000000000000000000aa"]

An option given on the command line wins over the file. A key the command does not take,
or a value of the wrong type, is a one-line error naming it. Relative paths in the file
(``out``, ``target``) are relative to the file's folder.

``--config echidna.yaml`` (a ``.yaml`` or ``.yml`` file) reads Echidna's configuration
instead, and ``--config medusa.json`` (a ``.json`` file) Medusa's: the settings with a
secant equivalent (``secant.cli.echidna_config``, ``secant.cli.medusa_config``), the others
named in a note.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

import typer

from secant.errors import SecantError

CONFIG_NAME = "secant.toml"
_PATH_KEYS = frozenset({"out"})
_NOT_IN_FILE = frozenset({"config", "list_oracles", "resume"})  # command-line-only options
_BUDGET_KEYS = frozenset({"time", "execs", "calls"})
"""The budget's options: one given on the command line replaces all the file gives (a
file's ``calls`` would otherwise still end a run the command line gave ``--execs``)."""


class ConfigError(SecantError):
    """secant.toml cannot be read or holds something the command does not take."""


def find_config(start: Path) -> Path | None:
    """The ``secant.toml`` in ``start`` (a folder, or a file's folder) or its parents."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        path = candidate / CONFIG_NAME
        if path.is_file():
            return path
    return None


def read_table(path: Path, command: str) -> dict[str, Any]:
    """The ``[command]`` table of a config file (empty when it has none)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", "check the file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}",
                          "fix the line it names (see docs/configuration.md)") from None
    table = data.get(command, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{command}] must be a table",
                          f"write the options under a [{command}] header")
    return table


def merged_options(ctx: typer.Context, start: Path, config: Path | None,
                   command: str) -> dict[str, Any]:
    """The command's parameters with the config file applied where no flag was given."""
    values = dict(ctx.params)
    path = config if config is not None else find_config(start)
    if path is None:
        return values
    if not path.is_file():
        raise ConfigError(f"{path} does not exist", "check the --config path")
    # Typer's parameters (click's, vendored), used through what every version has.
    by_option: dict[str, Any] = {}
    for declared in ctx.command.params:
        for opt in declared.opts:
            if opt.startswith("--"):
                by_option[opt[2:]] = declared
    if path.suffix in (".yaml", ".yml", ".json"):
        from secant.cli.echidna_config import echidna_table
        from secant.cli.medusa_config import medusa_table

        table, notes = (medusa_table(path) if path.suffix == ".json"
                        else echidna_table(path))
        untaken = [key for key in table if key.replace("_", "-") not in by_option]
        if untaken:
            # An Echidna or Medusa file is written for that fuzzer: what this command has
            # no option for is said, not refused.
            notes.append(f"{path.name}: secant {command} takes no {', '.join(untaken)}")
            table = {k: v for k, v in table.items() if k not in untaken}
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    else:
        table = read_table(path, command)
    budget_given = any(
        (param := by_option.get(key)) is not None and param.name is not None
        and _from_command_line(ctx, param.name) for key in _BUDGET_KEYS)
    for key, raw in table.items():
        if budget_given and key.replace("_", "-") in _BUDGET_KEYS:
            continue  # the command line's budget wins over the whole budget of the file
        param = by_option.get(key.replace("_", "-"))
        if param is None or param.name is None or param.name in _NOT_IN_FILE:
            known = ", ".join(sorted(k for k, p in by_option.items()
                                     if p.name not in _NOT_IN_FILE))
            raise ConfigError(f"{path}: [{command}] has no key {key!r}",
                              f"use one of: {known}")
        if _from_command_line(ctx, param.name):
            continue  # the command line wins
        value = raw
        if key.replace("_", "-") in _PATH_KEYS and isinstance(raw, str):
            value = str(path.parent / raw)
        if isinstance(value, list):
            value = [str(v) if not isinstance(v, str) else v for v in value]
        try:
            values[param.name] = param.process_value(ctx, value)
        except Exception as exc:  # click's BadParameter, vendored by typer
            message = getattr(exc, "message", None) or str(exc)
            raise ConfigError(f"{path}: [{command}] {key} = {raw!r}: {message}",
                              "give the value the option takes on the command line"
                              ) from None
    return values


def _from_command_line(ctx: typer.Context, name: str) -> bool:
    """Whether the parameter ``name`` was given on the command line (not defaulted)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
