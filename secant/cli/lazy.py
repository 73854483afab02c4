"""A command group that imports a command's module only when that command is needed.

Every command module of ``secant`` pulls in the campaign, the engine, the compilers and
eth-abi, so importing them all up front made ``secant version`` or ``secant --help`` pay
seconds on a busy machine before doing anything. :class:`LazyGroup` knows each lazy
command by name, module and one-line help: listing the commands (``secant --help``) needs
only those, and running one, or asking for its own ``--help``, imports its module and
builds its click command exactly as an eager ``register(app)`` would.

Typer has no lazy groups; this is a :class:`typer.core.TyperGroup` whose ``commands``
mapping loads on access, so typer's own lookup, "did you mean" suggestions and anything
that walks ``group.commands`` keep working unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import typer
import typer.core
import typer.main

if TYPE_CHECKING:
    from typer import _click as click  # typer vendors click; its commands are these classes


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives and what ``--help`` of its parent says about it.

    ``module`` must define ``register(app: typer.Typer)`` adding the command (it may add
    others too, each listed with the same module). ``summary`` is the line the parent's
    ``--help`` shows for it: the first paragraph of the command's help, on one line (the
    listing shows it as a plain visible command, so a lazy command is never hidden).
    """

    module: str
    summary: str


class _LazyCommands(MutableMapping[str, "click.Command"]):
    """A group's commands: the eager ones, then the lazy ones, loaded when looked up."""

    def __init__(self, eager: MutableMapping[str, click.Command], lazy: Mapping[str, LazyCommand],
                 load: Callable[[str], Mapping[str, click.Command]]) -> None:
        self._eager = eager
        self._lazy = lazy
        self._load = load
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name in self._eager:
            return self._eager[name]
        if name not in self._lazy:
            raise KeyError(name)
        if name not in self._loaded:
            built = self._load(self._lazy[name].module)
            if name not in built:
                raise RuntimeError(f"{self._lazy[name].module}.register adds no command "
                                   f"{name!r}")
            # One module may register several listed commands (``compile`` and ``solc``).
            self._loaded.update((key, command) for key, command in built.items()
                                if key in self._lazy)
        return self._loaded[name]

    def peek(self, name: str) -> click.Command | None:
        """The command if it is eager or already loaded, else None (nothing is imported)."""
        command = self._eager.get(name)
        return command if command is not None else self._loaded.get(name)

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._eager[name] = command

    def __delitem__(self, name: str) -> None:
        del self._eager[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._eager
        yield from (name for name in self._lazy if name not in self._eager)

    def __len__(self) -> int:
        return len(self._eager) + sum(name not in self._eager for name in self._lazy)


def _plain_help_flag(option: typer.core.TyperOption | None) -> None:
    """Let ``--help`` skip typer's pydantic coercion: its value is None or True as parsed.

    typer (0.29) coerces every parameter's value through a pydantic TypeAdapter built on
    first use, even an absent flag's None; for ``secant version`` that build (importing
    pydantic) was half of the start-up. typer's pass-through coercion accepts exactly the
    bools and None a flag yields. A typer without that machinery is left as it is.
    """
    if option is None or getattr(option, "_runtime_param", False) is not None:
        return
    try:
        from typer._coercion import PassThroughRuntimeParam
    except ImportError:  # pragma: no cover - a typer without pydantic coercion
        return
    descriptor = getattr(option, "type_descriptor", None)
    if descriptor is not None and descriptor.annotation is bool:
        option._runtime_param = PassThroughRuntimeParam(
            annotation=bool, parameter_info=descriptor.parameter_info)


class LightCommand(typer.core.TyperCommand):
    """A typer command whose ``--help`` flag is parsed without importing pydantic."""

    def get_help_option(self, ctx: click.Context) -> typer.core.TyperOption | None:
        """The ``--help`` option, parsed as a plain flag."""
        option = super().get_help_option(ctx)
        _plain_help_flag(option)
        return option


class LazyGroup(typer.core.TyperGroup):
    """A typer group whose ``lazy_commands`` are imported when they are run or inspected.

    Subclass it with ``lazy_commands`` set and pass the subclass as ``typer.Typer(cls=...)``.
    The commands registered on the Typer itself stay eager and are listed first.
    """

    lazy_commands: ClassVar[Mapping[str, LazyCommand]] = {}
    """The lazy commands by name, in the order ``--help`` lists them."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._commands = _LazyCommands(self.commands, self.lazy_commands, self._build)
        self.commands = self._commands
        self._listing = False

    def _build(self, module_name: str) -> Mapping[str, click.Command]:
        """Import a command module and build the click commands its ``register`` adds."""
        module = importlib.import_module(module_name)
        # The module registers on a Typer of its own, converted the way typer converts the
        # top-level app, so each command's options and help come out as if eager.
        staging = typer.Typer(rich_markup_mode=self.rich_markup_mode,
                              suggest_commands=self.suggest_commands)
        module.register(staging)
        return typer.main.get_group(staging).commands

    def get_help_option(self, ctx: click.Context) -> typer.core.TyperOption | None:
        """The ``--help`` option, parsed as a plain flag."""
        option = super().get_help_option(ctx)
        _plain_help_flag(option)
        return option

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, eager then lazy, without loading any."""
        # TyperGroup's own list_commands walks commands.items(), which would load them all.
        return list(self.commands)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The named command; while listing commands for help, a summary of an unloaded one."""
        if self._listing and cmd_name in self.lazy_commands:
            loaded = self._commands.peek(cmd_name)
            if loaded is not None:
                return loaded
            return typer.core.TyperCommand(name=cmd_name,
                                           help=self.lazy_commands[cmd_name].summary)
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Write the group's help; its command list takes each lazy command's summary."""
        # Both typer's rich help and click's plain help list the commands through
        # get_command; the flag keeps them from importing every command module.
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
