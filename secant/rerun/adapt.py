"""Recorded test cases carried over to code that changed since they were recorded.

A resumed campaign (``secant fuzz --resume OUT``) reads its corpus and findings back as
JSON sequences (``secant.types.case_to_json``) and runs them on the code as it is now. A
transaction whose function still exists with the same signature is kept as it is. One
whose signature is gone is *adapted* when the contract still has a function that is
evidently the same one:

* **same name, other argument types** (``set(uint8)`` became ``set(uint256)``): each
  argument is converted to the new type by position (integers wrap into the new width,
  addresses, bools, byte strings and arrays convert where it means something, anything
  else becomes the type's zero value), arguments the new function added are zero, those it
  dropped are left out; the name must pick one function (an overloaded name with several
  candidates picks the one of the same arity, else the transaction is dropped);
* **same argument types, other name** (``withdraw(uint256)`` renamed ``redeem(uint256)``):
  the one function with exactly those types whose signature no recorded case uses (a
  function the recorded cases know is not a rename of another). Several candidates are
  ambiguous, and the transaction is dropped.

Anything else (a function removed, a contract the chain no longer has) drops the
transaction; a case left with no transaction is dropped. :class:`Adapter` counts what it
kept, adapted and dropped and says why, for the resumed campaign's summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from secant.engine.values import VType

Functions = Mapping[str | None, Mapping[str, tuple[VType, ...]]]
"""Per contract (its name as a case names it, None for the main contract): every function
by signature (``fallback`` and ``receive`` by kind) with its argument types."""


def _name_of(signature: str) -> str:
    return signature.split("(", 1)[0]


@dataclass
class AdaptReport:
    """What adapting a set of recorded cases did.

    ``kept`` cases ran as recorded, ``adapted`` had at least one transaction adapted or
    dropped, ``dropped`` had none left; ``changes`` counts transactions per reason
    (``renamed a(uint256) -> b(uint256)``, ``retyped f(uint8) -> f(uint256)``,
    ``dropped g(): no such function``).
    """

    kept: int = 0
    adapted: int = 0
    dropped: int = 0
    changes: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        """The report as ``summary.json``'s ``resume`` section holds it."""
        return {"kept": self.kept, "adapted": self.adapted, "dropped": self.dropped,
                "changes": dict(sorted(self.changes.items()))}


class Adapter:
    """Adapts recorded JSON sequences to the functions the contracts have now."""

    def __init__(self, functions: Functions, recorded: Iterable[Sequence[Mapping[str, Any]]]
                 ) -> None:
        self.functions = functions
        # Every signature the recorded cases use, per contract: such a function existed
        # when they were recorded, so it is nobody's new name.
        self._known: dict[str | None, set[str]] = {}
        for sequence in recorded:
            for entry in sequence:
                if isinstance(entry, Mapping) and isinstance(entry.get("function"), str):
                    self._known.setdefault(_to(entry), set()).add(entry["function"])
        self.report = AdaptReport()

    def adapt(self, sequence: Sequence[Mapping[str, Any]]
              ) -> tuple[list[dict[str, Any]] | None, bool]:
        """The sequence on today's code, and whether anything changed (None: dropped).

        Counts the case in :attr:`report`.
        """
        out: list[dict[str, Any]] = []
        changed = False
        for entry in sequence:
            adapted = self._transaction(entry)
            if adapted is not entry:
                changed = True
            if adapted is not None:
                out.append(dict(adapted))
        if not out:
            self.report.dropped += 1
            return None, True
        if changed:
            self.report.adapted += 1
        else:
            self.report.kept += 1
        return out, changed

    def _transaction(self, entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """``entry`` itself when it stands, an adapted copy, or None (dropped)."""
        signature = entry.get("function")
        if not isinstance(signature, str):
            self.report.changes["dropped: a transaction without a function"] += 1
            return None
        to = _to(entry)
        functions = self.functions.get(to)
        if functions is None:
            self.report.changes[f"dropped {signature}: no contract {to}"] += 1
            return None
        if signature in functions:
            return entry
        new = self._by_name(signature, functions) or self._by_types(signature, to, functions)
        if new is None:
            self.report.changes[f"dropped {signature}: no such function"] += 1
            return None
        old_name = _name_of(signature)
        how = "retyped" if _name_of(new) == old_name else "renamed"
        self.report.changes[f"{how} {signature} -> {new}"] += 1
        args = entry.get("args", [])
        values = list(args) if isinstance(args, list) else []
        types = functions[new]
        converted = [convert(values[i] if i < len(values) else None, vt)
                     for i, vt in enumerate(types)]
        return {**entry, "function": new, "args": converted}

    def _by_name(self, signature: str, functions: Mapping[str, tuple[VType, ...]]
                 ) -> str | None:
        """The one function of the same name (of the same arity when overloaded)."""
        name = _name_of(signature)
        same = [s for s in functions if _name_of(s) == name and "(" in s]
        if len(same) == 1:
            return same[0]
        arity = _arity(signature)
        fitting = [s for s in same if len(functions[s]) == arity]
        return fitting[0] if len(fitting) == 1 else None

    def _by_types(self, signature: str, to: str | None,
                  functions: Mapping[str, tuple[VType, ...]]) -> str | None:
        """The one function with exactly these argument types that no recorded case used."""
        wanted = signature[len(_name_of(signature)):]
        known = self._known.get(to, set())
        fresh = [s for s in functions if "(" in s and s[len(_name_of(s)):] == wanted
                 and s not in known]
        return fresh[0] if len(fresh) == 1 else None


def _to(entry: Mapping[str, Any]) -> str | None:
    to = entry.get("to")
    return to if isinstance(to, str) else None


def _arity(signature: str) -> int:
    """The number of top-level parameters of ``name(t1,(t2,t3),t4[])``."""
    inner = signature[signature.index("(") + 1:signature.rindex(")")]
    if not inner:
        return 0
    depth, count = 0, 1
    for char in inner:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            count += 1
    return count


# ---------------------------------------------------------------------- values
def zero(vt: VType) -> Any:
    """The JSON zero value of type ``vt`` (what a new parameter gets)."""
    kind = vt.kind
    if kind in ("uint", "int", "address"):
        return 0
    if kind == "bool":
        return False
    if kind == "string":
        return ""
    if kind == "bytes":
        return "0x"
    if kind == "fbytes":
        return "0x" + "00" * (vt.bits // 8)
    if kind == "tuple":
        return [zero(f) for f in vt.fields]
    assert vt.elem is not None
    return [zero(vt.elem) for _ in range(vt.length or 0)]


def convert(raw: Any, vt: VType) -> Any:
    """A recorded JSON argument as a value of type ``vt``, or its zero value.

    Integers wrap into the width (two's complement for ``intN``); an integer becomes an
    address, a bool (non-zero) or ``bytesN`` (big-endian) and back; ``0x`` bytes and
    strings convert into each other; lists convert element by element (a fixed length is
    cut or padded with zeros). An address written as a name (``attacker1``) stays a name.
    """
    kind = vt.kind
    number = _number(raw)
    if kind in ("uint", "int"):
        if number is None:
            return 0
        wrapped = number % (1 << vt.bits)
        if kind == "int" and wrapped >> (vt.bits - 1):
            wrapped -= 1 << vt.bits
        return wrapped
    if kind == "address":
        if isinstance(raw, str) and not raw.startswith("0x"):
            return raw  # a name the chain knows
        return 0 if number is None else number % (1 << 160)
    if kind == "bool":
        return bool(number) if number is not None else False
    if kind == "fbytes":
        size = vt.bits // 8
        data = _bytes(raw)
        if data is None:
            # An integer word reads as bytesN the way the ABI lays both out: the word's
            # first bytes.
            data = (number % (1 << 256)).to_bytes(32, "big") if number is not None else b""
        return "0x" + data[:size].ljust(size, b"\0").hex()
    if kind == "bytes":
        data = _bytes(raw)
        return "0x" + (data or b"").hex()
    if kind == "string":
        if isinstance(raw, str) and not raw.startswith("0x"):
            return raw
        data = _bytes(raw)
        return (data or b"").decode("utf-8", "replace")
    if not isinstance(raw, list):
        return zero(vt)
    if kind == "tuple":
        return [convert(raw[i] if i < len(raw) else None, f) for i, f in enumerate(vt.fields)]
    assert vt.elem is not None
    items = [convert(item, vt.elem) for item in raw]
    if vt.length is not None:
        items = items[:vt.length] + [zero(vt.elem)] * max(0, vt.length - len(items))
    return items


def _number(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.startswith("0x"):
        try:
            return int(raw, 16) if len(raw) > 2 else 0
        except ValueError:
            return None
    return None


def _bytes(raw: Any) -> bytes | None:
    if isinstance(raw, str) and raw.startswith("0x"):
        try:
            return bytes.fromhex(raw[2:])
        except ValueError:
            return None
    if isinstance(raw, str):
        return raw.encode()
    return None
