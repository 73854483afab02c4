"""Constructor (and call) arguments: parsed from CLI strings per ABI type, or generated.

Parsing (:func:`parse_value`) accepts, per type:

- ``uint<M>``/``int<M>``: decimal, ``0x`` hex, ``1e18``, or a unit (``2 ether``, ``5 gwei``);
- ``address``: ``0x`` and 40 hex digits, or a known name (``deployer``, ``attacker1``, a
  deployed contract's name);
- ``bool``: ``true``/``false`` (also ``1``/``0``, ``yes``/``no``);
- ``bytes<N>``/``bytes``: ``0x`` hex (``bytes<N>`` is right-padded with zeros), else the
  UTF-8 text;
- ``string``: the text as is (``"quoted"`` JSON strings are unquoted);
- arrays ``[a, b, ...]`` and tuples ``(a, b, ...)`` (or ``[...]``), nested freely; items are
  parsed by their own type, strings may be double-quoted.

Arguments may also be named, ``NAME=VALUE`` each (``_owner=deployer``), in any order
(:func:`order_named`): every parameter then needs one, as Medusa's ``constructorArgs`` give
them.

Generation (:func:`generate_value`) draws type-valid values from an explicit
``random.Random``: small non-zero numbers, addresses of the chain's trusted senders (or of a
deployed contract of the parameter's contract type), short strings and byte strings, arrays
of one to three elements; an unsigned integer whose name reads as a moment (``startTime``,
``deadline``, ``releaseDate``) gets the chain's current timestamp, a week later for an end
(:func:`moment_value`). When a constructor refuses those, :func:`alternative_values` gives
a few other sets shaped the way constructors commonly check their arguments: arrays of one
common length (``owners.length == shares.length``), distinct addresses, small numbers.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from secant.abi import AbiParam, encode
from secant.chain.errors import ConstructorArgumentError

__all__ = [
    "ALTERNATIVE_SETS",
    "AddressChooser",
    "alternative_values",
    "order_named",
    "encode_arguments",
    "format_value",
    "generate_value",
    "generate_values",
    "moment_value",
    "parse_value",
    "parse_values",
]

AddressChooser = Callable[[AbiParam, random.Random], int]
"""Picks an address for a generated ``address`` parameter (it sees the parameter's type)."""

_ARRAY_RE = re.compile(r"\[(\d*)\]$")
_INT_RE = re.compile(r"^(u?)int(\d*)$")
_BYTES_RE = re.compile(r"^bytes(\d+)$")
_FIXED_RE = re.compile(r"^(u?)fixed(\d+)x(\d+)$")
_NUMBER_RE = re.compile(
    r"^(-?\d+(?:\.\d+)?)(?:e(\d+))?\s*(wei|gwei|szabo|finney|ether)?$", re.IGNORECASE)
_UNITS = {"wei": 0, "gwei": 9, "szabo": 12, "finney": 15, "ether": 18}
_TRUE, _FALSE = {"true", "1", "yes", "y"}, {"false", "0", "no", "n"}


_MOMENT_RE = re.compile(
    r"time|date|start|begin|open|launch|since|end|deadline|clos|expir|until|unlock|release"
    r"|finish|stop", re.IGNORECASE)
_END_RE = re.compile(r"end|deadline|clos|expir|until|unlock|release|finish|stop",
                     re.IGNORECASE)
_SPAN_RE = re.compile(
    r"duration|period|delay|interval|length|timeout|window|span|second|minute|hour|day|week"
    r"|month|year|block|rate|count|amount|price|fee|limit|cap", re.IGNORECASE)
END_LEAD = 7 * 24 * 3600
"""How far after the current block a generated end moment lies: a week, open at deployment
and reachable by the campaign's time jumps."""


def moment_value(param: AbiParam, now: int | None) -> int | None:
    """``now`` (an end: a week later) for an unsigned integer named as a moment, else None.

    Why: a constructor argument that is a point in time (``startTime``, ``deadline``) is
    compared with ``block.timestamp`` by every function behind a ``didStart`` or
    ``notEnded`` check; the small numbers drawn for other integers date it to 1970, so
    such a contract is over before it begins and nothing behind the check ever runs. A name
    that reads as a span (``duration``, ``lockPeriod``, ``delaySeconds``) is not a moment.
    """
    if now is None or not param.name:
        return None
    match = _INT_RE.match(param.type)
    if match is None or match.group(1) != "u" or int(match.group(2) or 256) < 32:
        return None
    if not _MOMENT_RE.search(param.name) or _SPAN_RE.search(param.name):
        return None
    return now + END_LEAD if _END_RE.search(param.name) else now


class _BadValue(ValueError):
    """A value does not fit its type (the message says why)."""


def _element(param: AbiParam) -> tuple[AbiParam, int | None] | None:
    """For an array type: its element parameter and fixed length (None when dynamic)."""
    match = _ARRAY_RE.search(param.type)
    if match is None:
        return None
    element = AbiParam(param.name, param.type[:match.start()], param.components,
                       internal_type=_element_internal_type(param.internal_type))
    return element, int(match.group(1)) if match.group(1) else None


def _element_internal_type(internal: str | None) -> str | None:
    if internal is None:
        return None
    match = _ARRAY_RE.search(internal)
    return internal[:match.start()] if match else internal


def _split_items(text: str) -> list[str]:
    """Split ``[a, b, (c, d)]`` or ``(a, b)`` into its top-level items (as text)."""
    text = text.strip()
    if len(text) < 2 or (text[0], text[-1]) not in (("[", "]"), ("(", ")")):
        raise _BadValue("expected a list in [...] or a tuple in (...)")
    body = text[1:-1]
    items: list[str] = []
    depth = 0
    quoted = False
    escaped = False
    start = 0
    for index, char in enumerate(body):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(body[start:index].strip())
            start = index + 1
    if quoted or depth:
        raise _BadValue("unbalanced brackets or quotes")
    last = body[start:].strip()
    if last or items:
        items.append(last)
    return items


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            value = json.loads(text)
        except ValueError:
            return text[1:-1]
        return value if isinstance(value, str) else text
    return text


def _parse_number(text: str) -> Decimal:
    match = _NUMBER_RE.match(text.strip().replace("_", ""))
    if match is None:
        raise _BadValue("not a number")
    value = Decimal(match.group(1))
    value *= Decimal(10) ** int(match.group(2) or 0)
    value *= Decimal(10) ** _UNITS[(match.group(3) or "wei").lower()]
    return value


def _parse_int(text: str, signed: bool, bits: int) -> int:
    text = _unquote(text)
    try:
        value = int(text.replace("_", ""), 0)
    except ValueError:
        number = _parse_number(text)
        if number != number.to_integral_value():
            raise _BadValue("not a whole number") from None
        value = int(number)
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= value <= high:
        raise _BadValue(f"out of range [{low}, {high}]")
    return value


def _parse_hex(text: str) -> bytes | None:
    if not text.lower().startswith("0x"):
        return None
    digits = text[2:]
    if len(digits) % 2:
        digits = "0" + digits
    try:
        return bytes.fromhex(digits)
    except ValueError:
        raise _BadValue("not hex") from None


def _parse_address(text: str, names: Mapping[str, int]) -> int:
    text = _unquote(text)
    if text in names:
        return names[text]
    raw = _parse_hex(text)
    if raw is None or len(raw) > 20:
        known = ", ".join(sorted(names)) or "none"
        raise _BadValue(f"not 0x and 40 hex digits nor a known name ({known})")
    return int.from_bytes(raw, "big")


def _parse_scalar(param: AbiParam, text: str, names: Mapping[str, int]) -> Any:
    kind = param.type
    if kind == "string":
        return _unquote(text) if text.strip().startswith('"') else text
    if kind == "address":
        return _parse_address(text, names)
    if kind == "bool":
        word = _unquote(text).lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise _BadValue("not true or false")
    match = _INT_RE.match(kind)
    if match is not None:
        return _parse_int(text, not match.group(1), int(match.group(2) or 256))
    if kind == "bytes":
        raw = _parse_hex(_unquote(text))
        return raw if raw is not None else _unquote(text).encode("utf-8")
    match = _BYTES_RE.match(kind)
    if match is not None or kind == "function":
        size = int(match.group(1)) if match is not None else 24
        value = _unquote(text)
        raw = _parse_hex(value)
        raw = raw if raw is not None else value.encode("utf-8")
        if len(raw) > size:
            raise _BadValue(f"longer than {size} bytes")
        return raw.ljust(size, b"\0")
    match = _FIXED_RE.match(kind)
    if match is not None:
        try:
            return _parse_number(_unquote(text))
        except InvalidOperation:
            raise _BadValue("not a decimal number") from None
    raise _BadValue(f"type {kind} is not supported")


def parse_value(param: AbiParam, text: str, names: Mapping[str, int] | None = None) -> Any:
    """Parse ``text`` as a value of ``param``'s type (see the module docstring).

    Raises ``ValueError`` with a short reason when the text does not fit the type.
    """
    names = names or {}
    array = _element(param)
    if array is not None:
        element, length = array
        items = _split_items(text)
        if length is not None and len(items) != length:
            raise _BadValue(f"expected {length} elements, got {len(items)}")
        return [parse_value(element, item, names) for item in items]
    if param.type == "tuple":
        items = _split_items(text)
        if len(items) != len(param.components):
            raise _BadValue(f"expected {len(param.components)} components, got {len(items)}")
        return tuple(parse_value(c, item, names)
                     for c, item in zip(param.components, items, strict=True))
    return _parse_scalar(param, text, names)


def _describe(param: AbiParam, index: int) -> str:
    name = f" {param.name}" if param.name else ""
    return f"argument {index + 1} ({param.canonical}{name})"


_NAMED_RE = re.compile(r"^([A-Za-z_$][A-Za-z0-9_$]*)=(.*)$", re.DOTALL)


def order_named(params: Sequence[AbiParam], values: Sequence[Any], what: str
                ) -> list[Any]:
    """``values`` in parameter order when every one is ``NAME=VALUE`` naming a parameter.

    Otherwise they are positional and returned as they are (a string argument that merely
    contains ``=`` stays one). A named list that leaves a parameter out, or names one
    twice, raises :class:`ConstructorArgumentError`.
    """
    names = [param.name for param in params]
    if not values or not all(names):
        return list(values)
    named: dict[str, str] = {}
    for value in values:
        match = _NAMED_RE.match(value) if isinstance(value, str) else None
        if match is None or match.group(1) not in names:
            return list(values)
        if match.group(1) in named:
            raise ConstructorArgumentError(f"{what}: argument {match.group(1)} is given twice",
                                           "name each parameter once")
        named[match.group(1)] = match.group(2)
    missing = [name for name in names if name not in named]
    if missing:
        raise ConstructorArgumentError(
            f"{what}: no value for {', '.join(missing)} (the arguments are named, so every "
            "parameter needs one)", f"add {missing[0]}=VALUE")
    return [named[name] for name in names]


def parse_values(params: Sequence[AbiParam], values: Sequence[Any], what: str,
                 names: Mapping[str, int] | None = None) -> list[Any]:
    """Parse each string in ``values`` by its parameter's type; other values pass through.

    ``values`` may be named (:func:`order_named`). Raises :class:`ConstructorArgumentError`
    naming ``what`` and the argument at fault.
    """
    values = order_named(params, values, what)
    if len(values) != len(params):
        types = ", ".join(p.canonical for p in params) or "none"
        raise ConstructorArgumentError(
            f"{what} takes {len(params)} argument{'s' if len(params) != 1 else ''} ({types}), "
            f"got {len(values)}", "pass one --arg per constructor parameter, in order")
    parsed: list[Any] = []
    for index, (param, value) in enumerate(zip(params, values, strict=True)):
        if isinstance(value, str):
            try:
                value = parse_value(param, value, names)
            except (ValueError, InvalidOperation) as exc:
                raise ConstructorArgumentError(
                    f"{_describe(param, index)} of {what}: {value!r} is not a valid "
                    f"{param.canonical} ({exc})",
                    f"give a {param.canonical} value, e.g. {_example(param)}") from None
        parsed.append(value)
    return parsed


def encode_arguments(params: Sequence[AbiParam], values: Sequence[Any], what: str) -> bytes:
    """ABI-encode ``values``; a value eth-abi rejects becomes :class:`ConstructorArgumentError`."""
    for index, (param, value) in enumerate(zip(params, values, strict=True)):
        try:
            encode([param.canonical], [param.normalize(value)])
        except Exception as exc:  # eth-abi raises many types; all mean "does not fit"
            reason = str(exc).split("\n")[0][:160]
            raise ConstructorArgumentError(
                f"{_describe(param, index)} of {what}: {value!r} does not fit "
                f"{param.canonical} ({reason})",
                f"give a {param.canonical} value, e.g. {_example(param)}") from None
    return encode([p.canonical for p in params], [p.normalize(v) for p, v in zip(params, values)])


def _example(param: AbiParam) -> str:
    array = _element(param)
    if array is not None:
        element, length = array
        return "[" + ", ".join([_example(element)] * (length or 2)) + "]"
    if param.type == "tuple":
        return "(" + ", ".join(_example(c) for c in param.components) + ")"
    if param.type == "address":
        return "0x" + "00" * 19 + "01 or deployer"
    if param.type == "bool":
        return "true"
    if param.type == "string":
        return "hello"
    if param.type.startswith("bytes") or param.type == "function":
        return "0x1234"
    return "42"


def generate_value(param: AbiParam, rng: random.Random,
                   choose_address: AddressChooser | None = None,
                   now: int | None = None) -> Any:
    """Draw a value of ``param``'s type from ``rng`` (see the module docstring).

    ``now``: the chain's timestamp, for parameters named as moments (:func:`moment_value`).
    """
    array = _element(param)
    if array is not None:
        element, length = array
        count = length if length is not None else rng.randint(1, 3)
        return [generate_value(element, rng, choose_address, now) for _ in range(count)]
    kind = param.type
    if kind == "tuple":
        return tuple(generate_value(c, rng, choose_address, now) for c in param.components)
    moment = moment_value(param, now)
    if moment is not None:
        return moment
    if kind == "address":
        return choose_address(param, rng) if choose_address else rng.getrandbits(160) or 1
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "string":
        return "".join(rng.choices(string.ascii_letters, k=rng.randint(1, 8)))
    if kind == "bytes":
        return rng.randbytes(rng.randint(1, 32))
    if kind == "function":
        return rng.randbytes(24)
    match = _BYTES_RE.match(kind)
    if match is not None:
        return rng.randbytes(int(match.group(1)))
    match = _INT_RE.match(kind)
    if match is not None:
        bits = int(match.group(2) or 256)
        high = (1 << (bits - 1)) - 1 if not match.group(1) else (1 << bits) - 1
        return rng.randint(1, min(high, 1000))
    match = _FIXED_RE.match(kind)
    if match is not None:
        return Decimal(rng.randint(1, 100))
    raise ValueError(f"cannot generate a value of type {kind}")


def generate_values(params: Sequence[AbiParam], rng: random.Random,
                    choose_address: AddressChooser | None = None,
                    now: int | None = None) -> list[Any]:
    """Draw one value per parameter, in order, from ``rng`` (``now``: see generate_value)."""
    return [generate_value(p, rng, choose_address, now) for p in params]


def format_value(value: Any, param: AbiParam | None = None) -> str:
    """Show a value compactly: addresses and bytes as hex, strings quoted, lists in brackets."""
    if param is not None:
        array = _element(param)
        if array is not None and isinstance(value, list | tuple):
            return "[" + ", ".join(format_value(v, array[0]) for v in value) + "]"
        if param.type == "tuple" and isinstance(value, list | tuple):
            return "(" + ", ".join(format_value(v, c)
                                   for v, c in zip(value, param.components)) + ")"
        if param.type == "address" and isinstance(value, int):
            return f"0x{value:040x}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


ALTERNATIVE_SETS = 4
"""How many other argument sets :func:`alternative_values` gives."""


def alternative_values(params: Sequence[AbiParam], rng: random.Random,
                       choose_address: AddressChooser | None, addresses: Sequence[int],
                       index: int, now: int | None = None) -> list[Any]:
    """Argument set ``index`` (0 to :data:`ALTERNATIVE_SETS` - 1) for a refusing constructor.

    For a constructor that reverted with the generated arguments.
    Every set gives all dynamic arrays one common length and every ``address`` a different
    value: ``addresses`` in order (the chain's trusted senders), then fresh ones (a
    parameter of a contract type still gets ``choose_address``'s contract). The numbers
    are, by ``index``: between 1 and 10 (length 1 to 3), all 1 (length 1), all 0 (length
    2), up to 1000 (length 1 to 3); a moment stays a moment (``now``, as for
    :func:`generate_value`). Deterministic in ``rng``.
    """
    ones = index == 1
    zeros = index == 2
    length = 1 if ones else 2 if zeros else rng.randint(1, 3)
    ceiling = 10 if index == 0 else 1000
    pool = list(addresses)
    taken: set[int] = set()

    def address(param: AbiParam) -> int:
        internal = param.internal_type or ""
        if internal.startswith("contract ") and choose_address is not None:
            return choose_address(param, rng)
        while pool:
            candidate = pool.pop(0)
            if candidate not in taken:
                taken.add(candidate)
                return candidate
        fresh = rng.getrandbits(160) or 1
        taken.add(fresh)
        return fresh

    def value(param: AbiParam) -> Any:
        array = _element(param)
        if array is not None:
            element, fixed = array
            return [value(element) for _ in range(fixed if fixed is not None else length)]
        if param.type == "tuple":
            return tuple(value(c) for c in param.components)
        if param.type == "address":
            return address(param)
        moment = moment_value(param, now)
        if moment is not None:
            return moment
        match = _INT_RE.match(param.type)
        if match is not None:
            bits = int(match.group(2) or 256)
            high = (1 << (bits - 1)) - 1 if not match.group(1) else (1 << bits) - 1
            return 1 if ones else 0 if zeros else rng.randint(1, min(high, ceiling))
        if param.type == "bool":
            return not zeros
        return generate_value(param, rng, choose_address, now)

    return [value(param) for param in params]
