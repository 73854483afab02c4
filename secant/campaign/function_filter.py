"""Which functions a campaign may call: ``--only-function`` and ``--exclude-function``.

Echidna's ``filterFunctions`` (a blacklist, or a whitelist with ``filterBlacklist: false``)
and Medusa's ``targetFunctionSignatures`` / ``excludeFunctionSignatures`` say the same: a
suite's authors keep handlers out of the campaign (an admin function that would break every
invariant, a helper that only burns executions) or name the only ones to call. A pattern
names a function as ``name``, ``name(types)``, ``Contract.name`` or
``Contract.name(types)`` (the tools' own form); ``fallback`` and ``receive`` name those.

A function is called when some ``only`` pattern names it (or there is none) and no
``exclude`` pattern does. A pattern that names no function of the campaign is a note (a
project's file may name contracts of another harness); a filter that leaves nothing to call
is an error that names the patterns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from secant.engine.mutators import FunctionSpec
from secant.errors import SecantError


@dataclass(frozen=True)
class FunctionFilter:
    """The ``only`` and ``exclude`` patterns of a campaign (none: every function)."""

    only: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.only or self.exclude)

    def apply(self, specs: Sequence[FunctionSpec], contract_of: Callable[[int | None], str]
              ) -> tuple[list[FunctionSpec], list[str]]:
        """The specs the filter keeps, and notes on patterns that named nothing.

        ``contract_of`` names the contract a spec's ``to`` is (None: the main one).
        """
        if not self:
            return list(specs), []
        named = [(spec, contract_of(spec.to)) for spec in specs]
        used: set[str] = set()

        def hits(patterns: tuple[str, ...], spec: FunctionSpec, contract: str) -> bool:
            found = [p for p in patterns if _names(p, contract, spec.signature)]
            used.update(found)
            return bool(found)

        kept = [spec for spec, contract in named
                if (not self.only or hits(self.only, spec, contract))
                and not hits(self.exclude, spec, contract)]
        notes = [f"--{flag}-function {pattern!r} names no function of the campaign"
                 for flag, patterns in (("only", self.only), ("exclude", self.exclude))
                 for pattern in patterns if pattern not in used]
        if specs and not kept:
            raise SecantError(
                "no function is left to call: "
                + ", ".join([*(f"--only-function {p}" for p in self.only),
                             *(f"--exclude-function {p}" for p in self.exclude)]),
                "name functions as NAME, NAME(TYPES) or CONTRACT.NAME(TYPES) "
                "(e.g. Vault.deposit(uint256)), or drop the filter")
        return kept, notes


def _names(pattern: str, contract: str, signature: str) -> bool:
    """Whether ``pattern`` names the function ``signature`` of ``contract``."""
    text = "".join(pattern.split())
    name = signature.split("(", 1)[0]
    head, _, tail = text.partition("(")
    owner, dot, function = head.rpartition(".")
    if dot and owner != contract:
        return False
    if not tail:  # no types: any overload of the name
        return function == name
    if signature in ("fallback", "receive"):
        return text.rpartition(".")[2] == f"{signature}()"
    return f"{function}({tail}" == signature
