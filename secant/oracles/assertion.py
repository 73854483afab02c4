"""Assertion failures and other Solidity panics (SWC-110), deduplicated by failing check.

solc >= 0.8 sends every failing ``assert`` (and every overflow, division by zero, ...) of a
contract through one shared panic routine, and the optimizer merges identical revert
tails, so the reverting pc says nothing about *which* check failed. The check is the site
in user code that jumped into the routine: walking the panicking frame's block trail
backwards, the last block that ends in a JUMP or JUMPI whose source-map location lies in a
user source file (generated Yul helpers have no user location). Without a source map, the
last block ending in a JUMPI (the failed condition) is the site. INVALID (0xfe), how solc
< 0.8 compiles ``assert``, is an assertion failure found the same way.

As in Echidna's and Medusa's assertion mode, an emitted ``AssertionFailed(...)`` event (any
parameters, from any contract) is an assertion failure too, at the LOG instruction: harnesses
emit it where reverting would undo the evidence. Its signatures are those the compiled ABIs
declare plus the usual ones (no parameters, a string, a uint256).

A line that emits the event and asserts too (``emit AssertionFailed(id); assert(false);``, the
harness convention and Solidity's check side by side), or the same two statements one after
the other over two lines, is one bug site with two signals, so it is one finding: both
signals get the key of the site (:func:`shared_site_key`), and the finding's detail names the
signals its case shows. Whether a line is part of such a site is read from the source's AST
(:func:`shared_lines`), not from the run, so the key does not depend on
which signal a run shows (a conditional assert may hold while the event is emitted) or shows
first: a replay of the case (shrinking) finds the same key. Elsewhere, and without a source
map or an AST, the event keeps the key of its LOG instruction and the assert that of its
check. The event is recorded when emitted, even when the assert then reverts the call.

A finding names what a person fixes: the handler, the function the failing transaction
called, as well as the failing check. Its key holds the handler's signature next to the
site (before the last element, which stays the panic code or ``event``), and its function
and contract are the handler's (its source is the check's line): a helper shared by many
handlers (Chimera's ``t``, forge-std's ``assertTrue``) fails as one finding per handler, as
Echidna's per-function assertion tests do.

A failing forge ``vm.assert*`` is an assertion failure too when the campaign says so
(:meth:`AssertionOracle.report_forge_assertions`: forge's ``[invariant] fail_on_assert``, or
``assertions_revert = false``, under which forge marks the test failed): the cheatcode
records it as an event of the calling contract (``FORGE_ASSERTION_TOPIC``), with forge's
message, whether or not it then reverted the handler.

Which panics count is a set of codes (``panic_codes``; ``DEFAULT_PANIC_CODES`` unless the
campaign says otherwise). The checks solc >= 0.8 inserts for inputs are off by default: an
overflow Panic(0x11), a division by zero (0x12), an enum conversion (0x21), ``pop()`` on an
empty array (0x31), an index out of bounds (0x32), an allocation too large (0x41). The
revert is how such code refuses a bad input, a ``require`` the compiler wrote, not a bug by
itself (OpenZeppelin's ``Checkpoints`` view reverts with 0x32 on a position past the end);
Echidna and Medusa leave them out by default too. What stays on cannot be a way of saying
no: a failed ``assert`` Panic(0x01) and INVALID (always reported), the generic compiler
panic (0x00), a corrupt storage byte array (0x22), a call of a zero function pointer (0x51).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any, NamedTuple

from secant.abi import PANIC_CODES, event_topic
from secant.chain.chain import TestChain
from secant.chain.cheatcodes import FORGE_ASSERTION_TOPIC, forge_assertion_message
from secant.chain.deploy import DeployedContract
from secant.compile.semver import parse_version
from secant.compile.srcmap import SourceFile, SourceLocation
from secant.engine.oracle import Oracle, PostState
from secant.evm.analysis import analyze
from secant.evm.crypto import keccak256
from secant.evm.opcodes import JUMP, JUMPI
from secant.targets.contract import ContractRun
from secant.targets.trace import PanicEvent
from secant.types import Finding, RunResult

_PANIC_SWC = {0x01: "SWC-110", 0x11: "SWC-101"}

ASSERT_PANIC = 0x01
"""Panic(0x01), a failed ``assert``: reported whatever the chosen codes."""

DEFAULT_PANIC_CODES = frozenset({0x00, 0x01, 0x22, 0x51})
"""The panics reported by default: those no code uses to refuse an input (module docstring)."""


EVENT_NAME = "AssertionFailed"
"""The event harnesses emit for a failed assertion (Echidna's and Medusa's assertion mode)."""

EVENT_DETAIL = "AssertionFailed event emitted"
"""The detail of an emitted ``AssertionFailed`` event."""

FORGE_ASSERT = "vm.assert"
"""The last element of a failed ``vm.assert*``'s key (a panic's is its code, an event's
``event``)."""


def handler_key(key: tuple[object, ...], handler: str) -> tuple[object, ...]:
    """``key`` with the failing transaction's function before its last element."""
    return (*key[:-1], handler, key[-1])


class _Handler(NamedTuple):
    """The function a failing transaction called: its signature, name and contract."""

    signature: str
    name: str
    contract: str | None


def shared_site_key(contract: DeployedContract, location: SourceLocation) -> tuple[object, ...]:
    """The key of a line that both emits ``AssertionFailed`` and asserts.

    ``contract`` is the first contract deployed with the code that runs, as for any panic
    site. The line is named by its file's base name, not its unit name: unit names follow
    the project root, and a finding's file is named by its key, which ``secant replay``
    and ``--resume`` must find again wherever the project is. The key ends in ``event`` as
    an event's does: a Foundry reproducer (``secant.report.reproducer``) then looks for the
    event in the recorded logs, which hold it even when the assert reverted the call.
    """
    return ("assertion", contract.address, f"{PurePosixPath(location.source).name}:"
                                           f"{location.line}", "event")


@dataclass(frozen=True)
class PanicSite:
    """The failing check of a panic: contract, site pc, source and function.

    ``shared`` is the site's location when the check is an assertion on a line that also
    emits ``AssertionFailed`` (``shared_lines``): the finding then has the line's key, which
    the event has too.
    """

    contract: DeployedContract
    pc: int
    source: str | None
    function: str | None
    panic_code: int | None
    shared: SourceLocation | None = None

    @property
    def key(self) -> tuple[object, ...]:
        """The deduplication key of the finding."""
        if self.shared is not None:
            return shared_site_key(self.contract, self.shared)
        return ("assertion", self.contract.address, self.pc, self.panic_code)

    @property
    def kind(self) -> str:
        """``assertion`` for Panic(0x01) and INVALID, ``panic`` for other codes."""
        return "assertion" if self.panic_code in (None, 0x01) else "panic"

    @property
    def swc(self) -> str:
        """The SWC class (SWC-110 for assertions, SWC-101 for overflow)."""
        if self.panic_code is None:
            return "SWC-110"
        return _PANIC_SWC.get(self.panic_code, "")

    @property
    def detail(self) -> str:
        """A one-line description."""
        if self.panic_code is None:
            return "INVALID opcode reached (assert in solc < 0.8)"
        name = PANIC_CODES.get(self.panic_code, "unknown panic code")
        return f"Panic(0x{self.panic_code:02x}): {name}"


class AssertionOracle(Oracle):
    """Reports the panics of a run in the chain's own (non-attacker) contracts."""

    name = "assertion"
    swc = "SWC-110"
    description = ("a failing assert (INVALID before solc 0.8, Panic(0x01) after) or another "
                   "Solidity panic")
    needs = frozenset({"panics"})
    severity = "medium"
    confidence = "certain"

    def __init__(self, chain: TestChain, panic_codes: frozenset[int] | None = None) -> None:
        self.panic_codes = DEFAULT_PANIC_CODES if panic_codes is None else panic_codes
        self.fork = chain.fork
        self.chain = chain
        self.event_topics = assertion_event_topics(chain)
        self.forge_assertions = False
        # Events are read only when some contract can emit AssertionFailed.
        self.needs = frozenset({"panics", "logs"} if self.event_topics else {"panics"})
        self._contracts: dict[bytes, DeployedContract] = {}
        # Each contract's address -> the first contract deployed with the same code: an
        # event on a shared line is keyed like the panic site on it (by code, not account).
        self._same_code: dict[int, DeployedContract] = {}
        # Code built by solc before 0.4.10, which had no ``assert``: its INVALID is a
        # ``throw`` (an input check), not a failed assertion.
        self._throws: set[bytes] = set()
        for contract in chain.contracts:
            if contract.role == "attacker":
                continue
            code = chain.code_at(contract.address)
            if code:
                first = self._contracts.setdefault(keccak256(code), contract)
                self._same_code[contract.address] = first
                if _before_assert(contract):
                    self._throws.add(keccak256(code))
        self._block_ends: dict[bytes, dict[int, tuple[int, int]]] = {}
        # (compilation id, source name) -> its shared lines (``shared_lines``).
        self._shared_lines: dict[tuple[int, str], dict[int, int]] = {}

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per panicking frame in the chain's own code and per AssertionFailed.

        The signals of one site (an event and an assert on one line, the same event in two
        transactions) are one finding: the first's, whose detail names those its case shows
        (``one_per_key``).
        """
        signals = self._events(result)
        if isinstance(result, ContractRun):
            for event, site in self._sites(result):
                handler = self._handler(result, event.tx)
                signals.append((event.tx, Finding(
                    kind=site.kind, swc=site.swc,
                    contract=handler.contract or site.contract.name,
                    function=handler.name or site.function or "", pc=site.pc,
                    source=site.source, detail=site.detail,
                    key=handler_key(site.key, handler.signature), oracle=self.name)))
        return one_per_key(signals)

    def _handler(self, result: RunResult, tx: int) -> _Handler:
        """The function transaction ``tx`` of the run called, and its contract's name."""
        if not 0 <= tx < len(result.case):
            return _Handler("", "", None)
        called = result.case[tx]
        contract = self.chain.at(called.to) if called.to is not None else self.chain.main
        return _Handler(called.function, called.function.split("(", 1)[0],
                        contract.name if contract is not None else None)

    def report_forge_assertions(self) -> None:
        """Count failed ``vm.assert*`` calls as assertion failures (module docstring)."""
        self.forge_assertions = True
        self.needs = frozenset({"panics", "logs"})

    def _events(self, result: RunResult) -> list[tuple[int, Finding]]:
        """A finding per ``AssertionFailed(...)`` event or counted ``vm.assert*`` failure.

        Each comes with its transaction.
        """
        if not isinstance(result, ContractRun) or not (self.event_topics
                                                       or self.forge_assertions):
            return []
        findings = []
        for log in result.logs:
            if not log.topics:
                continue
            topic = log.topics[0]
            forge = topic == FORGE_ASSERTION_TOPIC
            if not (topic in self.event_topics or forge and self.forge_assertions):
                continue
            contract = self.chain.at(log.address)
            name = contract.name if contract is not None else f"0x{log.address:040x}"
            location = contract.locate(log.pc) if contract is not None else None
            handler = self._handler(result, log.tx)
            where = location.function if location is not None else None
            source = f"{location.source}:{location.line}" if location is not None else None
            key: tuple[object, ...] = ("assertion", log.address, log.pc,
                                       FORGE_ASSERT if forge else "event")
            detail = EVENT_DETAIL
            if forge:
                detail = f"{FORGE_ASSERT} failed: {forge_assertion_message(log.data)}"
            elif contract is not None and location is not None:
                site = self.shared_site(contract, location)
                if site is not None:
                    key = shared_site_key(self._same_code.get(log.address, contract), site)
            findings.append((log.tx, Finding(
                kind="assertion", swc="SWC-110", contract=handler.contract or name,
                function=handler.name or where or "", pc=log.pc, source=source,
                detail=detail, key=handler_key(key, handler.signature),
                case=result.case[:log.tx + 1], oracle=self.name)))
        return findings

    def shared_site(self, contract: DeployedContract, location: SourceLocation
                    ) -> SourceLocation | None:
        """The location of the site that emits the event and asserts around ``location``.

        None when ``location`` is on no such site (``shared_lines``). ``contract`` is the
        one whose code holds the location (its compilation has the AST); a contract without
        a compilation has no such site.
        """
        compilation = contract.compilation
        if compilation is None:
            return None
        cache = (id(compilation), location.source)
        lines = self._shared_lines.get(cache)
        if lines is None:
            source = compilation.source(location.source)
            lines = self._shared_lines[cache] = (shared_lines(source) if source is not None
                                                 else {})
        line = lines.get(location.line)
        return None if line is None else replace(location, line=line)

    @property
    def panic_codes(self) -> frozenset[int]:
        """The Panic codes reported (0x01 always; INVALID halts are always reported)."""
        return self._panic_codes

    @panic_codes.setter
    def panic_codes(self, codes: frozenset[int]) -> None:
        self._panic_codes = frozenset(codes) | {ASSERT_PANIC}

    def sites(self, result: RunResult) -> list[PanicSite]:
        """The failing checks of a run (one per panicking frame in target code).

        Panics whose code is not among ``panic_codes`` are left out.
        """
        if not isinstance(result, ContractRun):
            return []
        return [site for _, site in self._sites(result)]

    def _sites(self, result: ContractRun) -> list[tuple[PanicEvent, PanicSite]]:
        """The reported panics of ``result`` in the chain's own code, each with its site."""
        sites = []
        codes = self._panic_codes
        for event in result.panics:
            if event.panic_code is not None and event.panic_code not in codes:
                continue
            if event.panic_code is None and event.code_hash in self._throws:
                continue
            contract = self._contracts.get(event.code_hash)
            if contract is not None:
                sites.append((event, self.site(event, contract)))
        return sites

    def _ends(self, event: PanicEvent) -> dict[int, tuple[int, int]]:
        """Block start -> (pc, opcode) of the block's last instruction."""
        ends = self._block_ends.get(event.code_hash)
        if ends is None:
            analysis = analyze(event.code, event.code_hash, self.fork)
            ends = {start: (instrs[-1][0], instrs[-1][1]) for start, instrs in analysis.blocks}
            self._block_ends[event.code_hash] = ends
        return ends

    def site(self, event: PanicEvent, contract: DeployedContract) -> PanicSite:
        """Find the check in user code that led to ``event`` (see the module docstring)."""
        ends = self._ends(event)
        fallback: int | None = None
        for start in reversed(event.trail):
            end = ends.get(start)
            if end is None:
                continue
            pc, op = end
            if op not in (JUMP, JUMPI):
                continue
            location = contract.locate(pc)
            if location is not None:
                # Only an assertion is the same bug as the event on its line; an overflow
                # or another panic there is a bug of its own.
                shared = (self.shared_site(contract, location)
                          if event.panic_code in (None, ASSERT_PANIC) else None)
                return PanicSite(contract, pc, f"{location.source}:{location.line}",
                                 location.function, event.panic_code, shared)
            if op == JUMPI and fallback is None:
                fallback = pc
        if fallback is None:
            fallback = event.trail[-1] if event.trail else 0
        return PanicSite(contract, fallback, None, None, event.panic_code)


ASSERT_SINCE = (0, 4, 10)
"""The solc release that brought ``assert``; before it INVALID meant ``throw``."""


def _before_assert(contract: DeployedContract) -> bool:
    """Whether ``contract`` was built by a solc release older than ``assert``."""
    compilation = contract.compilation
    if compilation is None or compilation.origin != "solc" or not compilation.compiler:
        return False
    try:
        return parse_version(compilation.compiler) < ASSERT_SINCE
    except ValueError:
        return False


def one_per_key(signals: list[tuple[int, Finding]]) -> list[Finding]:
    """One finding per key of ``signals`` ((transaction, finding) in the order found).

    The first finding of a key stays; the details of the others whose transaction its case
    reaches (all of them for a case left to the engine, the whole run) are added to its
    own, each once, joined by ``"; "``: a line's event and assert make one finding whose
    detail names both (``AssertionFailed event emitted; Panic(0x01): assertion failed``).
    """
    kept: dict[tuple[Any, ...], Finding] = {}
    details: dict[tuple[Any, ...], list[str]] = {}
    for tx, finding in signals:
        first = kept.get(finding.key)
        if first is None:
            kept[finding.key] = finding
            details[finding.key] = [finding.detail]
            continue
        shown = details[finding.key]
        # A signal after the first finding's case ends is not shown by that case.
        if (first.case is None or tx < len(first.case)) and finding.detail not in shown:
            shown.append(finding.detail)
            first.detail = "; ".join(shown)
    return list(kept.values())


def shared_lines(source: SourceFile) -> dict[int, int]:
    """The lines of ``source`` where a site emits ``AssertionFailed`` and asserts.

    Each line maps to its site's line (the event's). A site is a line on which both a call
    of the event and an ``assert`` start, or an ``emit AssertionFailed(...)`` statement
    directly followed in its block by an ``assert(...)`` statement (``if (!ok) { emit
    AssertionFailed(why); assert(false); }`` over lines, as harness helpers write it).
    Read from solc's compact AST: an ``emit AssertionFailed(...)`` (or ``emit
    I.AssertionFailed``, or the bare event call of solc < 0.4.21) and a call of the builtin
    ``assert``. A source without an AST (bytecode, Vyper) has none.
    """
    events: set[int] = set()
    asserts: set[int] = set()
    sites: dict[int, int] = {}
    stack: list[Any] = [source.ast] if source.ast else []
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, Mapping):
            continue
        kind = node.get("nodeType")
        if kind in ("EmitStatement", "FunctionCall"):
            line = _start_line(source, node)
            signal = _signal(node)
            if line is not None and signal == "event":
                events.add(line)
            elif line is not None and signal == "assert":
                asserts.add(line)
        statements = node.get("statements")
        if kind in ("Block", "UncheckedBlock") and isinstance(statements, list):
            for first, then in zip(statements, statements[1:], strict=False):
                if _statement_signal(first) == "event" and _statement_signal(then) == "assert":
                    event_line, assert_line = (_start_line(source, first),
                                               _start_line(source, then))
                    if event_line is not None and assert_line is not None:
                        sites[event_line] = sites[assert_line] = event_line
        stack.extend(value for value in node.values() if isinstance(value, list | Mapping))
    sites.update((line, line) for line in events & asserts)
    return sites


def _signal(node: Mapping[str, Any]) -> str | None:
    """``event`` for a call of ``AssertionFailed``, ``assert`` for the builtin's, else None."""
    kind = node.get("nodeType")
    call = node.get("eventCall") if kind == "EmitStatement" else node
    callee = call.get("expression") if isinstance(call, Mapping) else None
    name = _callee(callee)
    if name == EVENT_NAME:
        return "event"
    if (name == "assert" and isinstance(callee, Mapping)
            and callee.get("nodeType") == "Identifier"):
        return "assert"
    return None


def _statement_signal(statement: object) -> str | None:
    """``_signal`` of a statement that is one such call (an emit, or a call on its own)."""
    if not isinstance(statement, Mapping):
        return None
    kind = statement.get("nodeType")
    if kind == "EmitStatement":
        return _signal(statement)
    expression = statement.get("expression")
    if (kind == "ExpressionStatement" and isinstance(expression, Mapping)
            and expression.get("nodeType") == "FunctionCall"):
        return _signal(expression)
    return None


def _callee(expression: object) -> str | None:
    """The name a call's callee expression ends in (``f`` in ``f(...)`` and ``I.f(...)``)."""
    if not isinstance(expression, Mapping):
        return None
    kind = expression.get("nodeType")
    name = (expression.get("name") if kind == "Identifier"
            else expression.get("memberName") if kind == "MemberAccess" else None)
    return name if isinstance(name, str) else None


def _start_line(source: SourceFile, node: Mapping[str, Any]) -> int | None:
    """The 1-based line where an AST node's ``src`` range starts (None: no range)."""
    src = node.get("src")
    if not isinstance(src, str):
        return None
    try:
        start = int(src.split(":", 1)[0])
    except ValueError:
        return None
    return source.position(start)[0] if start >= 0 else None


COMMON_ASSERTION_EVENTS = ("AssertionFailed()", "AssertionFailed(string)",
                           "AssertionFailed(uint256)", "AssertionFailed(bytes)")
"""Signatures harnesses commonly give the event, known even when no ABI declares them."""


def assertion_event_topics(chain: TestChain) -> frozenset[int]:
    """topic0 of every ``AssertionFailed`` event a contract of the chain may emit."""
    topics = {int.from_bytes(event_topic(signature), "big")
              for signature in COMMON_ASSERTION_EVENTS}
    declared = False
    for contract in chain.contracts:
        compilations = [contract.compilation] if contract.compilation is not None else []
        abis = [contract.abi] + [c.abi for comp in compilations for c in comp.contracts]
        for abi in abis:
            for event in abi.events:
                if event.name == EVENT_NAME and not event.anonymous:
                    topics.add(int.from_bytes(event.topic, "big"))
                    declared = True
    return frozenset(topics) if declared else frozenset()
