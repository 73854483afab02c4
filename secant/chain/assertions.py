"""The ``vm.assert*`` family: which comparison each signature makes, and forge's messages.

Current forge-std forwards ``StdAssertions`` to the cheatcode address, so harnesses call
``assertEq(uint256,uint256)`` and friends on ``vm``. :data:`ASSERTIONS` maps each supported
signature to its argument types and a check that returns None when the assertion holds and
the failure message otherwise, worded as forge words it: ``assertion failed: 1 != 2``, with
the caller's message in place of ``assertion failed`` when one is given (the last ``string``
argument of the ``..., string`` overloads).

Arguments arrive decoded: integers and addresses as ints, ``bytes32``/``bytes`` as bytes,
strings as str, arrays as lists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from secant.evm.crypto import keccak256

__all__ = ["ASSERTIONS", "AssertCheck", "checksum_address", "format_units"]

AssertCheck = Callable[[Sequence[Any]], "str | None"]
"""Decoded arguments in, None (the assertion holds) or the failure message out."""

FAILED = "assertion failed"
"""The message prefix when the caller gave none."""

_REL_UNIT = 10**18
"""``assertApproxEqRel``'s deltas are fractions scaled by 1e18 (1e18 is 100%)."""

_WORD = 1 << 256


def checksum_address(address: int) -> str:
    """EIP-55 mixed-case hex of an address, as forge prints one."""
    plain = f"{address:040x}"
    digest = keccak256(plain.encode("ascii")).hex()
    return "0x" + "".join(c.upper() if int(digest[i], 16) >= 8 else c
                          for i, c in enumerate(plain))


def format_units(value: int, decimals: int) -> str:
    """``value`` scaled down by ``10 ** decimals`` with every decimal digit kept."""
    sign = "-" if value < 0 else ""
    digits = str(abs(value))
    if not decimals:
        return sign + digits
    digits = digits.rjust(decimals + 1, "0")
    return f"{sign}{digits[:-decimals]}.{digits[-decimals:]}"


def _show(type_name: str, value: Any) -> str:
    """One value as forge's message shows it."""
    if type_name.endswith("[]"):
        element = type_name[:-2]
        return "[" + ", ".join(_show(element, v) for v in value) + "]"
    if type_name == "bool":
        return "true" if value else "false"
    if type_name == "address":
        return checksum_address(value)
    if type_name in ("bytes32", "bytes"):
        return "0x" + bytes(value).hex()
    return str(value)


# The relation that failed, by assertion: the message shows its negation (forge's way).
_COMPARISONS: dict[str, tuple[Callable[[Any, Any], bool], str]] = {
    "Eq": (lambda a, b: a == b, "!="),
    "NotEq": (lambda a, b: a != b, "=="),
    "Gt": (lambda a, b: a > b, "<="),
    "Ge": (lambda a, b: a >= b, "<"),
    "Lt": (lambda a, b: a < b, ">="),
    "Le": (lambda a, b: a <= b, ">"),
}


def _prefix(args: Sequence[Any], with_message: bool) -> str:
    return str(args[-1]) if with_message else FAILED


def _truth(expected: bool, with_message: bool) -> AssertCheck:
    def check(args: Sequence[Any]) -> str | None:
        return None if bool(args[0]) is expected else _prefix(args, with_message)
    return check


def _compare(op: str, type_name: str, with_message: bool, decimal: bool) -> AssertCheck:
    holds, negation = _COMPARISONS[op]

    def check(args: Sequence[Any]) -> str | None:
        left, right = args[0], args[1]
        if holds(left, right):
            return None
        if decimal:
            shown = [format_units(left, args[2]), format_units(right, args[2])]
        else:
            shown = [_show(type_name, left), _show(type_name, right)]
        return f"{_prefix(args, with_message)}: {shown[0]} {negation} {shown[1]}"
    return check


def _approx_abs(with_message: bool, decimal: bool) -> AssertCheck:
    def check(args: Sequence[Any]) -> str | None:
        left, right, max_delta = args[0], args[1], args[2]
        delta = abs(left - right)
        if delta <= max_delta:
            return None
        decimals = args[3] if decimal else 0
        values = (format_units(v, decimals) for v in (left, right, max_delta, delta))
        return ("{}: {} !~= {} (max delta: {}, real delta: {})"
                .format(_prefix(args, with_message), *values))
    return check


def _percent(delta: int) -> str:
    return format_units(delta, 16) + "%"


def _approx_rel(with_message: bool, decimal: bool) -> AssertCheck:
    def check(args: Sequence[Any]) -> str | None:
        left, right, max_delta = args[0], args[1], args[2]
        prefix = _prefix(args, with_message)
        if right == 0:
            if left == 0:
                return None
            real = "undefined"
        else:
            delta = abs(left - right) * _REL_UNIT // abs(right)
            if delta >= _WORD:
                return f"{prefix}: overflow in delta calculation"
            if delta <= max_delta:
                return None
            real = _percent(delta)
        decimals = args[3] if decimal else 0
        return (f"{prefix}: {format_units(left, decimals)} !~= {format_units(right, decimals)} "
                f"(max delta: {_percent(max_delta)}, real delta: {real})")
    return check


def _table() -> dict[str, tuple[tuple[str, ...], AssertCheck]]:
    table: dict[str, tuple[tuple[str, ...], AssertCheck]] = {}

    def add(name: str, types: tuple[str, ...], make: Callable[[bool], AssertCheck]) -> None:
        table[f"{name}({','.join(types)})"] = (types, make(False))
        with_message = (*types, "string")
        table[f"{name}({','.join(with_message)})"] = (with_message, make(True))

    def comparison(op: str, type_name: str, decimal: bool) -> Callable[[bool], AssertCheck]:
        return lambda with_message: _compare(op, type_name, with_message, decimal)

    add("assertTrue", ("bool",), lambda m: _truth(True, m))
    add("assertFalse", ("bool",), lambda m: _truth(False, m))
    scalars = ("bool", "uint256", "int256", "address", "bytes32", "string", "bytes")
    for type_name in (*scalars, *(f"{t}[]" for t in scalars)):
        for op in ("Eq", "NotEq"):
            add(f"assert{op}", (type_name, type_name), comparison(op, type_name, False))
    for type_name in ("uint256", "int256"):
        pair = (type_name, type_name)
        for op in _COMPARISONS:
            if op not in ("Eq", "NotEq"):
                add(f"assert{op}", pair, comparison(op, type_name, False))
            add(f"assert{op}Decimal", (*pair, "uint256"), comparison(op, type_name, True))
        add("assertApproxEqAbs", (*pair, "uint256"), lambda m: _approx_abs(m, False))
        add("assertApproxEqAbsDecimal", (*pair, "uint256", "uint256"),
            lambda m: _approx_abs(m, True))
        add("assertApproxEqRel", (*pair, "uint256"), lambda m: _approx_rel(m, False))
        add("assertApproxEqRelDecimal", (*pair, "uint256", "uint256"),
            lambda m: _approx_rel(m, True))
    return table


ASSERTIONS: dict[str, tuple[tuple[str, ...], AssertCheck]] = _table()
"""Signature -> (argument types, check): every supported ``vm.assert*`` overload."""
