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

from dataclasses import dataclass

from secant.abi import PANIC_CODES, event_topic
from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
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

OVERFLOW_PANIC = 0x11
"""Panic(0x11), checked arithmetic over- or underflowed (off by default)."""

DIVISION_PANIC = 0x12
"""Panic(0x12), division or modulo by zero (off by default)."""

DEFAULT_PANIC_CODES = frozenset({0x00, 0x01, 0x22, 0x51})
"""The panics reported by default: those no code uses to refuse an input (module docstring)."""


@dataclass(frozen=True)
class PanicSite:
    """The failing check of a panic: contract, site pc, source and function."""

    contract: DeployedContract
    pc: int
    source: str | None
    function: str | None
    panic_code: int | None

    @property
    def key(self) -> tuple[object, ...]:
        """The deduplication key of the finding."""
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
        # Events are read only when some contract can emit AssertionFailed.
        self.needs = frozenset({"panics", "logs"} if self.event_topics else {"panics"})
        self._contracts: dict[bytes, DeployedContract] = {}
        for contract in chain.contracts:
            if contract.role == "attacker":
                continue
            code = chain.code_at(contract.address)
            if code:
                self._contracts.setdefault(keccak256(code), contract)
        self._block_ends: dict[bytes, dict[int, tuple[int, int]]] = {}

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """A finding per panicking frame in the chain's own code and per AssertionFailed."""
        findings = self._events(result)
        for site in self.sites(result):
            function = site.function or (result.case[-1].function.split("(", 1)[0]
                                         if result.case else "")
            findings.append(Finding(kind=site.kind, swc=site.swc, contract=site.contract.name,
                                    function=function, pc=site.pc, source=site.source,
                                    detail=site.detail, key=site.key, oracle=self.name))
        return findings

    def _events(self, result: RunResult) -> list[Finding]:
        """A finding per emitted ``AssertionFailed(...)`` event."""
        if not self.event_topics or not isinstance(result, ContractRun):
            return []
        findings = []
        for log in result.logs:
            if not log.topics or log.topics[0] not in self.event_topics:
                continue
            contract = self.chain.at(log.address)
            name = contract.name if contract is not None else f"0x{log.address:040x}"
            location = contract.locate(log.pc) if contract is not None else None
            tx = result.case[log.tx] if log.tx < len(result.case) else None
            function = (location.function if location is not None and location.function
                        else tx.function.split("(", 1)[0] if tx is not None else "")
            findings.append(Finding(
                kind="assertion", swc="SWC-110", contract=name, function=function, pc=log.pc,
                source=f"{location.source}:{location.line}" if location is not None else None,
                detail="AssertionFailed event emitted", key=("assertion", log.address, log.pc,
                                                             "event"),
                case=result.case[:log.tx + 1], oracle=self.name))
        return findings

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
        sites = []
        codes = self._panic_codes
        for event in result.panics:
            if event.panic_code is not None and event.panic_code not in codes:
                continue
            contract = self._contracts.get(event.code_hash)
            if contract is not None:
                sites.append(self.site(event, contract))
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
                return PanicSite(contract, pc, f"{location.source}:{location.line}",
                                 location.function,
                                 event.panic_code)
            if op == JUMPI and fallback is None:
                fallback = pc
        if fallback is None:
            fallback = event.trail[-1] if event.trail else 0
        return PanicSite(contract, fallback, None, None, event.panic_code)


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
                if event.name == "AssertionFailed" and not event.anonymous:
                    topics.add(int.from_bytes(event.topic, "big"))
                    declared = True
    return frozenset(topics) if declared else frozenset()
