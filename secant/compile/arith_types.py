"""The source type of each arithmetic operation, and the instructions that compute it.

The EVM computes in 256 bits; a ``uint8`` addition is an ``ADD`` whose result solc masks
(or not yet) with ``AND 0xff``, so the bytecode alone does not say at which width an
operation wraps. The AST does: every ``BinaryOperation`` (``+ - * / **``), compound
``Assignment`` (``+= -= *= /=``) and ``UnaryOperation`` (``++ --`` and the negation of a
signed value) carries the type of its result in ``typeDescriptions.typeString`` (the legacy
AST of old solc: ``attributes.type``) and its byte range in ``src``, which is where the
source map puts the instruction that computes it.

``arithmetic_ops`` lists the operations of an AST with their type and whether they sit in
an ``unchecked`` block; ``wrapping_sites`` ties those that may wrap silently (all of them
before solc 0.8, those inside ``unchecked { ... }`` from 0.8 on) to the pcs of a contract's
runtime code; ``wrapped`` says whether one execution of a site wrapped.

An instruction computes the operation when its source-map entry is the operation's exact
range and its opcode is the operator's (``ADD`` for ``+``, ``+=`` and ``++``; ``SUB`` for
``-``, ``-=``, ``--`` and negation; ``MUL``; ``EXP`` for ``**``; ``SDIV`` for a signed
``/``, whose only overflow is ``type(intN).min / -1``). A compound assignment to a packed
storage variable also maps its ``EXP``/``MUL`` packing instructions to the assignment's
range, after the arithmetic: of each copy of the operation's code (a maximal run of
instructions mapped inside its range; a modifier's body is copied into every function it
guards), only the first matching instruction is the operation.

From 0.8 on, a library's ``unchecked`` arithmetic is left out: it is where wrapping is
written on purpose (OpenZeppelin's ``Math.mulDiv`` keeps the low half of a 512-bit product
in ``prod0 = x * y``, ``SignedMath.abs`` wraps ``type(int256).min``) or bounded by the
library's own reasoning. Before 0.8 a library had no choice, and its operations count
(SafeMath's checks make its wraps revert).

Not covered: via-IR code (its arithmetic runs in generated helper functions mapped to
generated sources), inline assembly (Yul's ``add`` is meant to wrap), shifts, and Vyper
(which checks arithmetic).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from secant.compile.artifacts import Compilation, CompiledContract
from secant.compile.semver import parse_version
from secant.compile.srcmap import code_bytes, instruction_offsets
from secant.evm.opcodes import ADD, EXP, MUL, SDIV, SUB

__all__ = ["ArithOp", "ArithSite", "arithmetic_ops", "checks_arithmetic", "wrapped",
           "wrapping_sites"]

_TYPE_RE = re.compile(r"^(u?)int(\d*)$")
_BINARY = {"+": ADD, "-": SUB, "*": MUL, "**": EXP, "/": SDIV}
_ASSIGN = {"+=": ADD, "-=": SUB, "*=": MUL, "/=": SDIV}
_UNARY = {"++": ADD, "--": SUB, "-": SUB}
_NAMES = {ADD: "addition", SUB: "subtraction", MUL: "multiplication", EXP: "exponentiation",
          SDIV: "division"}
_CHECKED_FROM = (0, 8, 0)  # solc reverts on overflow outside ``unchecked`` from here on
_EXP_LIMIT = 1 << 16  # bits of a power computed exactly
_HUGE = 1 << _EXP_LIMIT  # what ``wrapped`` gives for a power larger than that


@dataclass(frozen=True)
class ArithOp:
    """One arithmetic operation of the source: where it is, its operator and result type."""

    start: int
    length: int
    file: int
    node: str  # BinaryOperation, Assignment or UnaryOperation
    operator: str
    opcode: int
    bits: int
    signed: bool
    unchecked: bool
    library: bool = False  # inside a library's definition

    @property
    def type_name(self) -> str:
        """``uint8``, ``int256``, ..."""
        return f"{'int' if self.signed else 'uint'}{self.bits}"

    @property
    def name(self) -> str:
        """``addition``, ``subtraction``, ``negation``, ... (what people call it)."""
        if self.node == "UnaryOperation":
            return {"++": "increment", "--": "decrement"}.get(self.operator, "negation")
        return _NAMES[self.opcode]


@dataclass(frozen=True)
class ArithSite:
    """An instruction of runtime code that computes an operation which may wrap."""

    pc: int
    op: ArithOp

    @property
    def opcode(self) -> int:
        """The instruction's opcode."""
        return self.op.opcode


def _integer_type(text: object) -> tuple[int, bool] | None:
    """``(bits, signed)`` of ``uint8``/``int``/... (None for any other type)."""
    if not isinstance(text, str):
        return None
    match = _TYPE_RE.match(text)
    if match is None:
        return None
    bits = int(match.group(2) or 256)
    return (bits, not match.group(1)) if 8 <= bits <= 256 and bits % 8 == 0 else None


def _span(node: Mapping[str, Any]) -> tuple[int, int, int] | None:
    text = node.get("src")
    if not isinstance(text, str):
        return None
    try:
        start, length, file = (int(part) for part in text.split(":")[:3])
    except ValueError:
        return None
    return start, length, file


def _nodes(node: Any, unchecked: bool = False, library: bool = False
           ) -> Iterator[tuple[Mapping[str, Any], bool, bool]]:
    """Every AST node (compact or legacy), and whether it is in ``unchecked``, in a library."""
    if isinstance(node, Mapping):
        yield node, unchecked, library
        kind = node.get("nodeType") or node.get("name")
        inner = unchecked or kind == "UncheckedBlock"
        if kind == "ContractDefinition":
            attributes = node.get("attributes")
            details = attributes if isinstance(attributes, Mapping) else node
            library = details.get("contractKind") == "library"
        for value in node.values():
            if isinstance(value, list | dict):
                yield from _nodes(value, inner, library)
    elif isinstance(node, list):
        for item in node:
            yield from _nodes(item, unchecked, library)


def arithmetic_ops(ast: Mapping[str, Any] | None) -> list[ArithOp]:
    """The arithmetic operations of one source's AST on integer types (see the module)."""
    found: list[ArithOp] = []
    if not ast:
        return found
    for node, unchecked, library in _nodes(ast):
        kind = node.get("nodeType")
        attributes: Mapping[str, Any] = node
        type_string: object = (node.get("typeDescriptions") or {}).get("typeString")
        if kind is None and isinstance(node.get("attributes"), Mapping):  # the legacy AST
            kind = node.get("name")
            attributes = node["attributes"]
            type_string = attributes.get("type")
        operator = attributes.get("operator")
        if kind == "BinaryOperation":
            opcode = _BINARY.get(str(operator))
        elif kind == "Assignment":
            opcode = _ASSIGN.get(str(operator))
        elif kind == "UnaryOperation":
            opcode = _UNARY.get(str(operator))
        else:
            continue
        typed = _integer_type(type_string)
        span = _span(node)
        if opcode is None or typed is None or span is None:
            continue
        bits, signed = typed
        if opcode == SDIV and not signed:
            continue  # an unsigned division never overflows
        if kind == "UnaryOperation" and operator == "-" and not signed:
            continue  # negating an unsigned value (solc < 0.5) is meant to wrap
        found.append(ArithOp(span[0], span[1], span[2], str(kind), str(operator), opcode,
                             bits, signed, unchecked, library))
    return found


def checks_arithmetic(compiler: str) -> bool:
    """Whether the compiler (``solc 0.8.26``) reverts on overflow outside ``unchecked``."""
    if "vyper" in compiler.lower():
        return True
    try:
        return parse_version(compiler) >= _CHECKED_FROM
    except ValueError:
        return True  # not solc (Vyper checks its arithmetic), or unknown: no silent wraps


def wrapping_sites(compilation: Compilation, contract: CompiledContract,
                   runtime: bool = True) -> dict[int, ArithSite]:
    """The pcs of ``contract``'s code computing an operation that may wrap silently.

    Every operation before solc 0.8; from 0.8 on, those inside ``unchecked`` blocks except
    in libraries (see the module docstring); none without a source map or an AST, or for
    Vyper.
    """
    if contract.language != "Solidity":
        return {}
    checked = checks_arithmetic(contract.compiler or compilation.compiler)
    by_range: dict[tuple[int, int, int], ArithOp] = {}
    for source in compilation.sources.values():
        for op in arithmetic_ops(source.ast):
            if not checked or (op.unchecked and not op.library):
                by_range[(op.start, op.length, op.file)] = op
    if not by_range:
        return {}
    mapper = compilation.mapper(contract, runtime)
    entries = mapper.entries
    if not entries:
        return {}
    code = code_bytes((contract.runtime if runtime else contract.creation).hex)
    pcs = [pc for pc in instruction_offsets(code) if pc in entries]
    sites: dict[int, ArithSite] = {}
    for index, pc in enumerate(pcs):
        entry = entries[pc]
        found = by_range.get((entry.offset, entry.length, entry.file))
        if found is None or code[pc] != found.opcode:
            continue
        if not _first_in_copy(pcs, index, entries, found, code):
            continue
        sites[pc] = ArithSite(pc, found)
    return sites


def _first_in_copy(pcs: list[int], index: int, entries: Mapping[int, Any], op: ArithOp,
                   code: bytes) -> bool:
    """Whether no earlier instruction of the same copy of ``op``'s code matched it."""
    end = op.start + op.length
    for back in range(index - 1, -1, -1):
        entry = entries[pcs[back]]
        if entry.file != op.file or entry.offset < op.start or entry.offset + entry.length > end:
            return True
        if (entry.offset == op.start and entry.length == op.length
                and code[pcs[back]] == op.opcode):
            return False
    return True


def wrapped(opcode: int, bits: int, signed: bool, a: int, b: int) -> int | None:
    """The true result of ``a op b`` when it does not fit the type, else None.

    ``a`` is the instruction's first operand (the top of the stack), ``b`` the second; each
    is read at the type's width (its low ``bits`` bits, as two's complement when
    ``signed``), the way solc's cleanup would read it, except the exponent of ``EXP``, which
    is used whole. A power too large to compute (beyond 2**65536) is given as
    plus or minus 2**65536.
    """
    mask = (1 << bits) - 1
    x = a & mask
    y = b & mask
    if signed:
        half = 1 << (bits - 1)
        if x >= half:
            x -= 1 << bits
        if y >= half:
            y -= 1 << bits
        low, high = -half, half - 1
    else:
        low, high = 0, mask
    if opcode == ADD:
        exact = x + y
    elif opcode == SUB:
        exact = x - y
    elif opcode == MUL:
        exact = x * y
    elif opcode == SDIV:
        if y == 0:
            return None
        exact = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    elif opcode == EXP:
        exponent = b
        if x in (0, 1) or exponent == 0:
            return None
        if x == -1:
            return None
        if exponent * x.bit_length() > _EXP_LIMIT:  # far out of range: its sign and a bound
            return _HUGE if x > 0 or exponent % 2 == 0 else -_HUGE
        exact = x ** exponent
    else:
        return None
    return exact if exact < low or exact > high else None
