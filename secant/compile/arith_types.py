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
from weakref import WeakKeyDictionary

from secant.compile.artifacts import Compilation, CompiledContract
from secant.compile.semver import parse_version
from secant.compile.srcmap import code_bytes, instruction_offsets
from secant.evm.opcodes import ADD, EXP, MUL, SDIV, SUB

__all__ = ["ArithOp", "ArithSite", "arithmetic_ops", "bounded_counters", "branch_only_spans",
           "checks_arithmetic", "declares_checks", "watched_sites", "wrapped",
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
    branch_only: bool = False  # its value only decides a branch (``branch_only_spans``)
    bounded: bool = False  # a loop's counter stepped within its bound (``bounded_counters``)

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


# Where a value goes on: the children of these nodes that only decide a branch, and those
# whose value becomes the node's own (compact AST).
_CONDITIONS = {"IfStatement": ("condition",), "WhileStatement": ("condition",),
               "DoWhileStatement": ("condition",), "ForStatement": ("condition",),
               "Conditional": ("condition",)}
_PASSED_ON = {"BinaryOperation": ("leftExpression", "rightExpression"),
              "Conditional": ("trueExpression", "falseExpression")}
_CHECKS = ("require", "assert")


def branch_only_spans(ast: Mapping[str, Any] | None,
                      checks: bool = True) -> set[tuple[int, int, int]]:
    """The ranges of expressions whose value only decides a branch (compact AST).

    A value decides a branch when it is the condition of an ``if``, a loop or a ternary
    ``?:``, or the first argument of ``require`` or ``assert`` (unless ``checks`` is False:
    the compilation declares something of that name), or when it only goes into such a
    value through operators (arithmetic, comparisons, ``&&``, ``||``, ``!``), parentheses,
    type conversions or a ternary's result. A JUMPI consumes it there: its labels reach
    no storage, call or transfer (the taint follows data, not control), so an overflow it
    wraps can never be kept. Anything else (an assignment, a variable, an argument of
    another call, an index, a return value) may keep it. The legacy AST of old solc gives
    none (its children are not named).
    """
    found: set[tuple[int, int, int]] = set()
    if not ast or not isinstance(ast, Mapping) or "nodeType" not in ast:
        return found
    pending: list[tuple[Any, bool]] = [(ast, False)]
    while pending:
        node, deciding = pending.pop()
        if isinstance(node, list):
            pending.extend((item, False) for item in node)
            continue
        if not isinstance(node, Mapping):
            continue
        kind = node.get("nodeType")
        if deciding:
            span = _span(node)
            if span is not None:
                found.add(span)
        inner: dict[str, bool] = {name: True for name in _CONDITIONS.get(str(kind), ())}
        inner.update((name, deciding) for name in _PASSED_ON.get(str(kind), ()))
        if kind == "UnaryOperation" and node.get("operator") in ("!", "-", "~"):
            inner["subExpression"] = deciding
        elif kind == "TupleExpression" and not node.get("isInlineArray"):
            components = node.get("components")
            if isinstance(components, list) and len(components) == 1:
                inner["components"] = deciding
        elif kind == "FunctionCall":
            arguments = node.get("arguments")
            if isinstance(arguments, list) and arguments:
                if node.get("kind") == "typeConversion":
                    inner["arguments"] = deciding
                elif checks and _is_check(node.get("expression")):
                    pending.append((arguments[0], True))
                    pending.extend((argument, False) for argument in arguments[1:])
                    inner["arguments"] = False
                    node = {name: value for name, value in node.items() if name != "arguments"}
        for name, value in node.items():
            if isinstance(value, list):
                pending.extend((item, inner.get(name, False)) for item in value)
            elif isinstance(value, dict):
                pending.append((value, inner.get(name, False)))
    return found


def bounded_counters(ast: Mapping[str, Any] | None) -> set[tuple[int, int, int]]:
    """The ranges of loop counters' steps that cannot wrap (compact AST).

    ``for (...; i < bound; i++)``: the step runs only after the condition held and the
    body ran, so ``i`` is below a value of its own type and ``i + 1`` fits; the same for
    ``i--`` after ``i > bound``. Only when the condition compares the counter itself with
    a value of exactly its type, and neither the body nor the bound writes the counter (an
    assignment, an increment or a decrement of it, or inline assembly anywhere there).
    """
    found: set[tuple[int, int, int]] = set()
    if not ast or not isinstance(ast, Mapping) or "nodeType" not in ast:
        return found
    for node, _, _ in _nodes(ast):
        if node.get("nodeType") != "ForStatement":
            continue
        step = node.get("loopExpression")
        step = step.get("expression") if isinstance(step, Mapping) else None
        if not isinstance(step, Mapping) or step.get("nodeType") != "UnaryOperation":
            continue
        counter = _declaration(step.get("subExpression"))
        condition = node.get("condition")
        if counter is None or not isinstance(condition, Mapping):
            continue
        bound = _bound_of(condition, counter, step.get("operator"), _type_of(step))
        span = _span(step)
        if (bound is not None and span is not None
                and not _writes(node.get("body"), counter) and not _writes(bound, counter)):
            found.add(span)
    return found


def _type_of(node: Mapping[str, Any]) -> object:
    return (node.get("typeDescriptions") or {}).get("typeString")


def _declaration(node: object) -> int | None:
    """The declaration an identifier names (None for anything else)."""
    if isinstance(node, Mapping) and node.get("nodeType") == "Identifier":
        declaration = node.get("referencedDeclaration")
        return declaration if isinstance(declaration, int) else None
    return None


def _bound_of(condition: Mapping[str, Any], counter: int, step: object, kind: object
              ) -> Mapping[str, Any] | None:
    """The bound of ``counter < bound`` (for ``++``) or ``counter > bound`` (for ``--``).

    Either way round (``bound > counter``); the counter of the step's type ``kind``, and
    the comparison made at that type. None when the condition is not such a comparison.
    """
    if condition.get("nodeType") != "BinaryOperation" or not _integer_type(kind):
        return None
    left, right = condition.get("leftExpression"), condition.get("rightExpression")
    operator = condition.get("operator")
    below = {"++": "<", "--": ">"}.get(str(step))
    above = {"++": ">", "--": "<"}.get(str(step))
    if operator == below and _declaration(left) == counter:
        bound = right
    elif operator == above and _declaration(right) == counter:
        bound = left
    else:
        return None
    if not isinstance(left, Mapping) or not isinstance(right, Mapping) or not isinstance(
            bound, Mapping):
        return None
    # The comparison is made at the step's width (a literal bound is converted to it).
    common = (condition.get("commonType") or {}).get("typeString")
    counter_side = left if bound is right else right
    if _type_of(counter_side) != kind or (common != kind and not (
            common is None and _type_of(bound) == kind)):
        return None
    return bound


def _writes(node: object, declaration: int) -> bool:
    """Whether ``node`` may change the variable ``declaration`` (or holds assembly).

    The variable is a value-typed local: only an assignment, increment, decrement or
    ``delete`` of the variable itself (or of a tuple holding it) changes it; an index or
    a member on the left (``balances[to[i]] = x``) only reads it.
    """
    for inner, _, _ in _nodes(node):
        kind = inner.get("nodeType")
        if kind == "InlineAssembly":
            return True
        if kind == "Assignment" and declaration in _assigned(inner.get("leftHandSide")):
            return True
        if (kind == "UnaryOperation" and inner.get("operator") in ("++", "--", "delete")
                and declaration in _assigned(inner.get("subExpression"))):
            return True
    return False


def _assigned(target: object) -> set[int]:
    """The variables an assignment to ``target`` changes itself (not through an index)."""
    declaration = _declaration(target)
    if declaration is not None:
        return {declaration}
    if isinstance(target, Mapping) and target.get("nodeType") == "TupleExpression":
        components = target.get("components")
        if isinstance(components, list):
            return {found for component in components for found in _assigned(component)}
    return set()


def declares_checks(ast: Mapping[str, Any] | None) -> bool:
    """Whether an AST declares something named ``require`` or ``assert`` (shadowing them)."""
    return any(node.get("name") in _CHECKS and "Definition" in str(node.get("nodeType"))
               or node.get("name") in _CHECKS and node.get("nodeType") == "VariableDeclaration"
               for node, _, _ in _nodes(ast))


def _is_check(callee: object) -> bool:
    """Whether a call's callee is ``require`` or ``assert`` by name."""
    return (isinstance(callee, Mapping) and callee.get("nodeType") == "Identifier"
            and callee.get("name") in _CHECKS)


def arithmetic_ops(ast: Mapping[str, Any] | None, checks: bool | None = None) -> list[ArithOp]:
    """The arithmetic operations of one source's AST on integer types (see the module).

    ``branch_only`` marks an operation (not an assignment, increment or decrement, which
    keep their result) whose value only decides a branch (``branch_only_spans``),
    ``bounded`` a loop counter's step that cannot wrap (``bounded_counters``);
    ``checks`` says whether ``require`` and ``assert`` are the built-in ones (None: unless
    this AST declares either).
    """
    found: list[ArithOp] = []
    if not ast:
        return found
    if checks is None:
        checks = not declares_checks(ast)
    deciding = branch_only_spans(ast, checks)
    counters = bounded_counters(ast)
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
        only = kind != "Assignment" and operator not in ("++", "--") and span in deciding
        found.append(ArithOp(span[0], span[1], span[2], str(kind), str(operator), opcode,
                             bits, signed, unchecked, library, only, span in counters))
    return found


def checks_arithmetic(compiler: str) -> bool:
    """Whether the compiler (``solc 0.8.26``) reverts on overflow outside ``unchecked``."""
    if "vyper" in compiler.lower():
        return True
    try:
        return parse_version(compiler) >= _CHECKED_FROM
    except ValueError:
        return True  # not solc (Vyper checks its arithmetic), or unknown: no silent wraps


# The operations of a compilation that may wrap, by (start, length, file): by whether the
# compiler checks its arithmetic. One walk of the ASTs per compilation, however many of its
# contracts are asked about (a harness's system is dozens of contracts of one compilation).
_OPS: WeakKeyDictionary[Compilation, dict[bool, dict[tuple[int, int, int], ArithOp]]] = (
    WeakKeyDictionary())


def _compilation_ops(compilation: Compilation, checked: bool
                     ) -> dict[tuple[int, int, int], ArithOp]:
    """The operations of every source of ``compilation`` that may wrap silently."""
    cached = _OPS.setdefault(compilation, {})
    found = cached.get(checked)
    if found is None:
        found = cached[checked] = {}
        builtin = not any(declares_checks(source.ast)
                          for source in compilation.sources.values())
        for source in compilation.sources.values():
            for op in arithmetic_ops(source.ast, builtin):
                if not checked or (op.unchecked and not op.library):
                    found[(op.start, op.length, op.file)] = op
    return found


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
    by_range = _compilation_ops(compilation, checked)
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


def watched_sites(compilation: Compilation, sites: Mapping[int, ArithSite]
                  ) -> dict[int, ArithSite]:
    """The sites of ``sites`` that may wrap and keep the result: what an oracle watches.

    Left out: a loop counter's step within its bound (``ArithOp.bounded``: it never
    wraps), and an operation that only decides a branch (``ArithOp.branch_only``), unless
    some operation that does not has the same source text: the optimizer computes an
    expression repeated within straight-line code once, and that one instruction may be
    mapped to either occurrence.
    """
    texts: dict[tuple[int, int, int], bytes] = {}

    def text(op: ArithOp) -> bytes:
        key = (op.start, op.length, op.file)
        found = texts.get(key)
        if found is None:
            source = compilation.sources.get(op.file)
            data = source.data() if source is not None else b""
            found = texts[key] = b" ".join(data[op.start:op.start + op.length].split())
        return found

    kept = {text(site.op) for site in sites.values() if not site.op.branch_only}
    return {pc: site for pc, site in sites.items() if not site.op.bounded
            and (not site.op.branch_only or text(site.op) in kept)}


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
