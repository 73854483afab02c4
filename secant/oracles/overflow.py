"""Integer overflow and underflow (SWC-101): an arithmetic result wraps and is used.

sFuzz's and ILF's *integer overflow*, without their false positives. At the bytecode level a
``uint8`` addition is a 256-bit ``ADD`` and SafeMath's ``require(c >= a)`` looks like any
other wrap, so both tools guess; here the type comes from the source and the verdict from
the executed trace:

* ``secant.compile.arith_types`` reads the type of every ``+ - * / **``, ``+= -= *= /=``,
  ``++ --`` and signed negation from the compiler's AST and finds the instruction that
  computes it through the source map. Before solc 0.8 every such operation may wrap; from
  0.8 on only those inside ``unchecked { ... }`` (elsewhere solc reverts with Panic 0x11,
  which the ``assertion`` oracle reports when asked);
* the ``dataflow`` recording (``secant.targets.taint``) checks, at each of those
  instructions, whether the true result fits the source type (``uint8`` wraps at 2**8 and
  ``int8`` outside -128..127 although the EVM computes in 256 bits) and labels a result
  that does not;
* the finding needs the wrapped value to reach something that lasts, in a frame and a
  transaction that succeeded: the value an SSTORE writes, the value, target or input of a
  CALL, CALLCODE or DELEGATECALL, or a SELFDESTRUCT's beneficiary. A wrap that only reaches
  a comparison (``require(a + b >= a)``, SafeMath: the transaction reverts, or the check
  picks another path) is no finding, nor is arithmetic that could wrap but did not on the
  run (``unchecked { balance = fromBalance - value; }`` after a ``require``, a loop's
  ``++i``).

*Certain* when a sender without any granted right sent the transaction that wrapped;
*likely* when it was the deployer or an account a trusted sender named (an owner may be
trusted to pass sane values). Key: the code and pc of the arithmetic instruction and the
confidence (a site reported *likely* is reported again when an untrusted sender wraps it).

Contracts without a source map and AST (bytecode only) are not judged: without the type
there is no telling a wrap from the 256-bit arithmetic that is meant to wrap (hashing,
SafeMath's own checks, Yul), so the oracle stays off rather than guess.

Cost: nothing on code without such arithmetic (0.8 code without ``unchecked``), nor on
code whose every such operation only decides a branch (``if (a > a * b)``, a
``require``'s condition: its labels end at a JUMPI, so it is never a finding) or steps a
loop's counter below its bound (``i++`` after ``i < n``: it never wraps;
``secant.compile.arith_types.watched_sites``). Otherwise the campaign's runs carry the cheap
``arithmetic`` recording (``secant.targets.wraps``: each block holding a site whose result
may be kept is evaluated from its entry, and says whether a site wrapped), and a run is
replayed with the ``dataflow`` recording only when such a site not yet reported *certain*
wrapped (or may have) in a successful transaction, and no run like it (the same sites
wrapped, senders, edges, functions and slots) was judged clean before.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.compile.arith_types import (
    ArithSite,
    checks_arithmetic,
    watched_sites,
    wrapping_sites,
)
from secant.engine.oracle import PostState
from secant.evm.analysis import analyze
from secant.evm.opcodes import (
    ADD,
    CALL,
    CALLCODE,
    DELEGATECALL,
    EXP,
    MUL,
    OPS,
    SDIV,
    SELFDESTRUCT,
    SSTORE,
    SUB,
)
from secant.oracles import flows
from secant.oracles.flows import FlowOracle
from secant.oracles.rated import ether, function_name
from secant.targets.contract import ContractRun
from secant.targets.taint import OVERFLOW, WRAP_BITS, Dataflow, FlowSink, FlowWrap, watch_arithmetic
from secant.targets.wraps import watch_blocks
from secant.types import Finding, RunResult

__all__ = ["OverflowOracle", "number"]

_SYMBOLS = {ADD: "+", SUB: "-", MUL: "*", EXP: "**", SDIV: "/"}
# Wrapping sites by runtime code hash: all of them, and those the oracle watches.
_SITES: dict[bytes, tuple[dict[int, ArithSite], dict[int, ArithSite]]] = {}
_SNIPPET = 60  # characters of the operation's source shown
_CLEAN_LIMIT = 1 << 16  # clean runs remembered (then forgotten at once)


def number(value: int) -> str:
    """An integer as people read it: decimal, ``2**256 - 1`` near a power of two, or hex."""
    size = abs(value)
    if size < 1 << 64:
        return str(value)
    sign = "-" if value < 0 else ""
    for power in (size.bit_length(), size.bit_length() - 1):
        gap = size - (1 << power)
        if abs(gap) < 1 << 32:
            rest = f" + {gap}" if gap > 0 else f" - {-gap}" if gap < 0 else ""
            return f"{sign}(2**{power}{rest})" if sign and rest else f"{sign}2**{power}{rest}"
    return f"{sign}0x{size:x}"


def _at_type(value: int, bits: int, signed: bool) -> int:
    """``value`` read at the type's width (two's complement when signed)."""
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def _bits(labels: int) -> Iterable[int]:
    """The single bits set in ``labels``."""
    while labels:
        low = labels & -labels
        yield low
        labels ^= low


class OverflowOracle(FlowOracle):
    """Reports arithmetic that wrapped at its source type and was used (module docstring)."""

    name = "integer-overflow"
    swc = "SWC-101"
    description = ("an arithmetic result wraps at the width of its source type (solc < 0.8, "
                   "or inside `unchecked`) and reaches storage, a transfer or a call")
    severity = "high"
    confidence = "certain"
    cache_clean = False  # whether a site wraps depends on the values, not only the path

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        if self.needs:
            self.needs = frozenset({"arithmetic"})

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """The findings of one run; replayed only when a watched site wrapped (or may have)."""
        if not self.needs or not isinstance(result, ContractRun):
            return []
        seen = (post.recording(result, "arithmetic", replay=False)
                if post is not None and self.own_flow(result, post) is None else None)
        if seen is None:
            return super().check(result, post)
        wrapped = self.wrapped_here(result, seen)
        if not wrapped:
            return []
        # Given which sites wrapped, whether their results reach a sink depends on the
        # instructions run and the slots used, not on the values (labels do not look at
        # them): a run like one judged clean is not replayed (the senders decide the
        # rating, so they are part of it).
        key = hash((self.clean_key(result), wrapped,
                    tuple(tx.sender for tx in result.case)))
        if key in self.clean:
            return []
        flow = flows.replayed(result, post)
        if flow is None:
            return []
        findings = self.judge(result, flow)
        if not findings:
            if len(self.clean) >= _CLEAN_LIMIT:
                self.clean.clear()
            self.clean.add(key)
        return findings

    def wrapped_here(self, result: ContractRun, seen: list[tuple[int, bytes, int, bool]]
                     ) -> frozenset[tuple[bytes, int]]:
        """The sites not yet reported that wrapped (or may have) in successful transactions.

        ``seen`` is the ``arithmetic`` recording of the run.
        """
        outcomes = result.outcomes
        reported = self.reported
        watched = self.watched
        return frozenset((code_hash, pc) for tx, code_hash, pc, _ in seen
                         if tx < len(outcomes) and outcomes[tx].success
                         and (code_hash, pc) in watched and (code_hash, pc) not in reported)

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some target's source has arithmetic that may wrap and keep its result.

        A site whose value only decides a branch can never be reported, and a loop
        counter's step within its bound never wraps (``watched_sites``): code with no
        other site is not watched at all, and elsewhere the ``arithmetic`` recording leaves
        such sites out (a wrap there never makes a run worth a replay).
        The ``dataflow`` recording of a replay still labels every site's wraps, so its
        records say all that wrapped.
        """
        self.sites: dict[bytes, dict[int, ArithSite]] = {}  # watched sites by code
        self.watched: set[tuple[bytes, int]] = set()  # (code hash, pc) of those sites
        self.rated_as: dict[tuple[bytes, int], str] = {}  # sites reported, how surely
        self.site_blocks: list[tuple[bytes, int, int]] = []  # (code hash, block, pc)
        for address, contract in self.targets.items():
            known = self.code_of.get(address)
            if known is None or contract.compiled is None or contract.compilation is None:
                continue
            code_hash, code = known
            if code_hash in self.sites:
                continue
            found = _SITES.get(code_hash)
            if found is None:
                every = wrapping_sites(contract.compilation, contract.compiled)
                found = _SITES[code_hash] = (every, watched_sites(contract.compilation, every))
            sites, watched = found
            if not watched:
                continue
            self.sites[code_hash] = watched
            self.watched.update((code_hash, pc) for pc in watched)
            types = {pc: (site.opcode, site.op.bits, site.op.signed)
                     for pc, site in sites.items()}
            watch_arithmetic(code_hash, types)  # the replays' records name every wrap
            watch_blocks(code, code_hash, chain.fork,
                         {pc: kind for pc, kind in types.items() if pc in watched})
            starts = {}
            for start, instructions in analyze(code, code_hash, chain.fork).blocks:
                for pc, _, _ in instructions:
                    starts[pc] = start
            self.site_blocks += [(code_hash, starts[pc], pc) for pc in watched
                                 if pc in starts]
        return bool(self.sites)

    def candidate(self, result: ContractRun) -> bool:
        """A transaction succeeded, and a site not yet reported ran."""
        if not any(outcome.success for outcome in result.outcomes):
            return False
        blocks = result.blocks
        reported = self.reported
        return any((code_hash, block) in blocks and (code_hash, pc) not in reported
                   for code_hash, block, pc in self.site_blocks)

    # ------------------------------------------------------------------ judging
    @staticmethod
    def reached(sink: FlowSink) -> tuple[int, str]:
        """The labels of what ``sink`` makes last, and what happened to the value."""
        if sink.opcode == SSTORE:
            return sink.value_labels, f"was written to storage slot {number(sink.target)}"
        if sink.opcode in (CALL, CALLCODE, DELEGATECALL):
            labels = sink.target_labels | sink.data_labels
            if sink.opcode != DELEGATECALL:
                labels |= sink.value_labels
            parts = [name for name, part in (("amount", sink.value_labels),
                                             ("target", sink.target_labels),
                                             ("input", sink.data_labels))
                     if part & OVERFLOW]
            what = " and ".join(parts) or "input"
            return labels, f"went into the {what} of a {OPS[sink.opcode].name}"
        if sink.opcode == SELFDESTRUCT:
            return sink.target_labels, "chose the beneficiary of a SELFDESTRUCT"
        return 0, ""

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per wrapping site whose result reached a lasting effect in this run."""
        if not flow.wraps:
            return []
        by_bit: dict[int, list[FlowWrap]] = {}
        for wrap in flow.wraps:
            if wrap.pc in self.sites.get(wrap.code_hash, {}):
                by_bit.setdefault(wrap.bit, []).append(wrap)
        # Per site: the wrap that flowed, and where it went (in order).
        found: dict[tuple[bytes, int], tuple[FlowWrap, list[tuple[FlowSink, str]]]] = {}
        for sink in flow.sinks:
            labels, what = self.reached(sink)
            if not labels & OVERFLOW or not self.judged(flow, result, sink.tx, sink.frame):
                continue
            if self.contract(sink.code_hash) is None:
                continue  # an attacker contract's own use of a value it was given
            for bit in _bits(labels & WRAP_BITS):
                earlier = [w for w in by_bit.get(bit, ()) if w.tx <= sink.tx]
                if not earlier:
                    continue
                wrap = earlier[-1]
                site = (wrap.code_hash, wrap.pc)
                if site in self.reported:
                    continue
                if site not in found:
                    found[site] = (wrap, [])
                found[site][1].append((sink, what))
        findings = []
        for site, (wrap, sinks) in found.items():
            confidence, why = self.rated(result, wrap.tx)
            if self.rated_as.get(site) == confidence:
                continue
            self.rated_as[site] = confidence
            if confidence == "certain":
                self.reported.add(site)  # nothing surer to find: no more replays for it
            findings.append(self.finding(result, wrap, sinks, confidence, why))
        return findings

    def finding(self, result: ContractRun, wrap: FlowWrap, sinks: list[tuple[FlowSink, str]],
                confidence: str, why: str) -> Finding:
        """The finding for one site: which operation, the values, the type, where it went."""
        case = result.case
        site = self.sites[wrap.code_hash][wrap.pc]
        op = site.op
        contract = self.contract(wrap.code_hash)
        assert contract is not None  # sites are only registered for targets' code
        last = sinks[0][0].tx
        place = self.place(contract, wrap.pc)
        x = _at_type(wrap.a, op.bits, op.signed)
        y = wrap.b if wrap.opcode == EXP else _at_type(wrap.b, op.bits, op.signed)
        low = -(1 << (op.bits - 1)) if op.signed else 0
        high = (1 << (op.bits - 1)) - 1 if op.signed else (1 << op.bits) - 1
        kept = _at_type(wrap.exact, op.bits, op.signed)
        if op.node == "UnaryOperation" and op.operator == "-":
            computed = f"-({number(y)})"
        else:
            computed = f"{number(x)} {_SYMBOLS[wrap.opcode]} {number(y)}"
        snippet = self.snippet(contract, op.start, op.length, op.file)
        text = f" `{snippet}`" if snippet else ""
        mode = ("inside an `unchecked` block" if op.unchecked
                else f"{self.compiler(contract)} does not check arithmetic")
        uses = ", and ".join(dict.fromkeys(
            f"{what} at {self.place(contract_of, sink.pc)} in transaction {sink.tx + 1}"
            + (f" ({ether(sink.value)} sent to {self.who(sink.target)})"
               if sink.opcode in (CALL, CALLCODE) and sink.value else "")
            for sink, what in sinks
            for contract_of in [self.contract(sink.code_hash) or contract]))
        detail = (f"{self.step(case[:wrap.tx + 1], wrap.tx)} ran the {op.name}{text} at "
                  f"{place} on {op.type_name} ({mode}): {computed} = {number(wrap.exact)}, "
                  f"which does not fit in {op.type_name} ({number(low)} to {number(high)}), "
                  f"so it wrapped to {number(kept)}. The wrapped value {uses}. "
                  + self.rating(confidence, why))
        return Finding(
            kind=self.name, swc=self.swc or "", contract=contract.name,
            function=function_name(case[wrap.tx]), pc=wrap.pc,
            source=self.where(contract, wrap.pc), detail=detail,
            key=(self.name, wrap.code_hash, wrap.pc, confidence),
            case=case[:max(last, wrap.tx) + 1], oracle=self.name, confidence=confidence)

    def rated(self, result: ContractRun, tx: int) -> tuple[str, str]:
        """Confidence and why, from who sent the transaction that wrapped."""
        sender = self.who(result.case[tx].sender)
        if self.privileged(result, tx):
            return "likely", (f"{sender}, the deployer or an account a trusted sender named, "
                              "sent the values that wrapped; it may be trusted to pass sane "
                              "ones")
        return "certain", (f"{sender}, a sender without any granted right, made it wrap and "
                           "the wrapped value was kept")

    @staticmethod
    def snippet(contract: DeployedContract, start: int, length: int, file: int) -> str:
        """The operation's source text (first line, shortened)."""
        compilation = contract.compilation
        source = compilation.sources.get(file) if compilation is not None else None
        if source is None:
            return ""
        text = source.data()[start:start + length].decode("utf-8", "replace")
        text = " ".join(text.split("\n", 1)[0].split())
        return text if len(text) <= _SNIPPET else text[:_SNIPPET - 3] + "..."

    @staticmethod
    def compiler(contract: DeployedContract) -> str:
        """``solc 0.4.26`` (what compiled the contract)."""
        compiled = contract.compiled
        name = compiled.compiler if compiled is not None else ""
        if not name and contract.compilation is not None:
            name = contract.compilation.compiler
        return name if name and not checks_arithmetic(name) else "the compiler"
