"""The frontier: every just-missed branch side, what blocks it, and what it would open.

A *just-missed* side (sFuzz §3.2) is a branch side no run took whose JUMPI some run
reached. For each one in a user source (``secant.report.coverage`` says which sources
count) the frontier gives:

* where it is (file, line, function) and its condition in source terms: the first line of
  the JUMPI's source-map range, the comparison the EVM saw (relation and both operands)
  in the closest case, and what the side needs (``needs x == 0xdeadbeef``);
* the closest case (the one sFuzz's adaptive seeds keep for the side, else the corpus
  seed with the smallest cost) and its *distance*, Harvey's flip cost in that case
  (``|lhs - rhs|`` for a wanted equality; sFuzz's distance is one more);
* how often the site was tried: the runs that reached the JUMPI
  (``secant.report.coverage.EdgeCounter``);
* what it would open: the instructions and blocks reachable past the side and from
  nowhere else, over the control-flow graph of the code (``secant.evm.cfg``'s,
  handed in as a :class:`Graph`), less the blocks already covered; the frontier is ranked
  by it (most first), then by distance;
* what blocked it, as far as the campaign's data tells (:func:`blocked_by`):

  - **proved unreachable on this path**: the concolic stage
    (``secant.engine.harvey.concolic``) asked z3 for inputs that follow a case's path and
    take the side, and the answer was unsat for every input of that path;
  - **sender check**: one operand is the transaction's sender and the other another
    account (a stored owner, a constant address); the detail says whether any sender of
    the campaign is that account;
  - **constant never produced**: the side needs an operand equal to a constant of the code
    (a PUSH value, 0 and 1 aside) that no run produced there;
  - **bound never crossed**: likewise for an ordering against a code constant;
  - **revert before it**: the condition reads a storage slot (an operand equals the
    value the transaction read from it) that transactions wrote only to revert: in the
    closest case before the branch, or in every replayed corpus case that wrote it;
  - **state never reached**: the condition reads a slot that no replayed transaction
    wrote at all.

The operands, reads and writes come from replaying cases at the end (the closest case of
every side, up to ``MAX_REPLAYS``, and up to ``MAX_CORPUS_REPLAYS`` corpus cases for the
writes), so nothing is paid during the search but the edge counter. Sides that enter a
function the campaign never calls (a public getter's selector in the dispatcher) are kept
for the HTML report's hovers but left out of the ranked frontier: nothing blocks them.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from secant.compile.srcmap import SourceFile
from secant.engine.fuzzer import Fuzzer
from secant.engine.policy import JustMissed
from secant.evm.costs import MOD, SIGN, flip_cost
from secant.evm.opcodes import JUMPI, PUSH0, PUSH1, PUSH32
from secant.report.coverage import CodeCoverage, is_user_source
from secant.types import RunResult, TxSeq, case_to_json, storage_slot

BranchSide = tuple[bytes, int, bool]
"""(code hash, JUMPI pc, wanted side: True for the jump)."""

MAX_REPLAYS = 1000
"""Closest cases replayed at most (the frontier of a large contract is longer)."""

MAX_CORPUS_REPLAYS = 500
"""Corpus cases replayed at most to learn which storage slots runs write."""

TOP = 5
"""Entries the terminal summary shows."""

SENDER = "sender check"
CONSTANT = "constant never produced"
INFEASIBLE = "proved unreachable on this path"
BOUND = "bound never crossed"
REVERT = "revert before it"
STATE = "state never reached"

_SYMBOL = {"eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">=",
           "slt": "<", "sgt": ">", "sle": "<=", "sge": ">="}
_NEGATION = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "gt": "le", "le": "gt",
             "slt": "sge", "sge": "slt", "sgt": "sle", "sle": "sgt"}


class Graph(Protocol):
    """A code's control-flow graph (``secant.evm.cfg.ControlFlowGraph`` is one)."""

    successors: dict[int, set[int]]

    def block_of(self, pc: int) -> int:
        """The start of the block holding ``pc``."""
        ...


def closest_cases(fuzzers: Iterable[Fuzzer], covered: set[tuple[bytes, int, bool]]
                  ) -> dict[BranchSide, JustMissed]:
    """The closest case of every just-missed side, over the fuzzers of a campaign.

    Harvey's policy keeps sFuzz's adaptive seeds (every run observed); without them the
    corpus seeds' cost vectors give the closest seed. Sides covered by any fuzzer
    (``covered``) are not just-missed.
    """
    best: dict[BranchSide, JustMissed] = {}

    def offer(side: BranchSide, closest: JustMissed) -> None:
        if side in covered:
            return
        current = best.get(side)
        if current is None or closest.distance < current.distance:
            best[side] = closest

    for fuzzer in fuzzers:
        kept = fuzzer.policy.just_missed()
        if kept is not None:
            for side, near in kept.items():
                offer(side, near)
            continue
        for seed in fuzzer.corpus.seeds:
            if seed.costs is None:  # dropped for memory: its case is in the corpus still
                continue
            for key, cost in seed.costs.items():
                if isinstance(key, tuple) and len(key) == 5 and isinstance(key[1], bytes):
                    _, code_hash, pc, _, wanted = key
                    offer((code_hash, pc, wanted), JustMissed(cost, seed.case, seed.found_at))
    return best


@dataclass(frozen=True)
class Observed:
    """The comparison at a side's JUMPI in a replay of its closest case, and around it.

    ``tx`` is the transaction of the closest occurrence; ``reads`` what that transaction
    read from its called contract's storage, as ``{(code hash, slot): value}``;
    ``reverted_writes`` the slots earlier transactions of the case wrote and then reverted,
    with the function that did.
    """

    tx: int
    relation: str
    lhs: int
    rhs: int
    taken: bool
    sender: int
    function: str
    reads: dict[tuple[bytes, int], int] = field(default_factory=dict)
    reverted_writes: dict[tuple[bytes, int], str] = field(default_factory=dict)

    @property
    def distance(self) -> int:
        """Harvey's flip cost of the side in this run."""
        return flip_cost(self.relation, self.lhs, self.rhs, self.taken)


@dataclass
class StateWrites:
    """Which functions wrote each storage slot in replayed cases, and whether they reverted.

    Keys are ``(code hash, slot)``; values the function signatures of transactions that
    wrote the slot and ended well (``kept``) or reverted (``reverted``).
    """

    kept: dict[tuple[bytes, int], set[str]] = field(default_factory=dict)
    reverted: dict[tuple[bytes, int], set[str]] = field(default_factory=dict)

    def learn(self, result: RunResult) -> None:
        """Add the writes of a run."""
        marks = result.write_marks
        for tx, start in enumerate(marks):
            end = marks[tx + 1] if tx + 1 < len(marks) else len(result.writes)
            ok = tx < len(result.outcomes) and result.outcomes[tx].success
            into = self.kept if ok else self.reverted
            for code_hash, _, slot in result.writes[start:end]:
                into.setdefault((code_hash, slot), set()).add(result.case[tx].function)


@dataclass
class FrontierInputs:
    """What the frontier is computed from (a campaign gathers it when it finishes).

    ``run`` replays a case on a target of its own; ``graph`` gives the CFG of a code by
    hash (None: unknown); ``corpus`` are cases whose writes say what state runs reach;
    ``constants`` the PUSH constants of the codes; ``accounts`` names addresses (senders,
    contracts); ``senders`` the campaign's senders; ``code_hashes`` the code hash of each
    contract address; ``uncalled`` the selectors of functions the campaign never calls,
    with their signatures.
    """

    codes: Sequence[CodeCoverage]
    closest: Mapping[BranchSide, JustMissed]
    tried: Mapping[tuple[bytes, int, bool], int]
    run: Callable[[TxSeq], RunResult]
    graph: Callable[[bytes], Graph | None]
    corpus: Sequence[TxSeq] = ()
    constants: frozenset[int] = frozenset()
    accounts: Mapping[int, str] = field(default_factory=dict)
    senders: frozenset[int] = frozenset()
    code_hashes: Mapping[int, bytes] = field(default_factory=dict)
    uncalled: Mapping[int, str] = field(default_factory=dict)
    infeasible: Mapping[BranchSide, str] = field(default_factory=dict)


@dataclass
class FrontierEntry:
    """One just-missed side with where it is, what came closest and what blocked it."""

    contract: str
    code_hash: bytes
    pc: int
    side: bool
    file: str
    path: str | None
    line: int
    column: int
    function: str | None
    snippet: str
    tried: int = 0
    closest: JustMissed | None = None
    sequence: list[dict[str, Any]] = field(default_factory=list)
    observed: Observed | None = None
    opens: tuple[int, int] = (0, 0)
    reasons: list[tuple[str, str]] = field(default_factory=list)
    skipped: str | None = None

    @property
    def key(self) -> BranchSide:
        """(code hash, pc, side)."""
        return (self.code_hash, self.pc, self.side)

    @property
    def distance(self) -> int | None:
        """The flip cost in the closest case (None: no case reached the site)."""
        if self.observed is not None:
            return self.observed.distance
        return self.closest.distance if self.closest is not None else None

    def needs(self, short: bool = False) -> str:
        """What the side needs, in the closest case's operands (``short``: cut long ones)."""
        seen = self.observed
        if seen is None:
            return "needs the other outcome of the condition"
        relation = seen.relation if self.side else _NEGATION.get(seen.relation, seen.relation)
        signed = relation in ("slt", "sgt", "sle", "sge")

        def show(value: int) -> str:
            text = _signed(value) if signed else word(value)
            return text[:10] + "…" + text[-4:] if short and len(text) > 18 else text

        return f"needs {show(seen.lhs)} {_SYMBOL.get(relation, relation)} {show(seen.rhs)}"

    def to_json(self, rank: int | None = None) -> dict[str, Any]:
        """The entry as ``frontier.json`` lists it."""
        seen = self.observed
        data: dict[str, Any] = {}
        if rank is not None:
            data["rank"] = rank
        data.update({
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "contract": self.contract,
            "function": self.function,
            "pc": self.pc,
            "side": "jump" if self.side else "fall-through",
            "snippet": self.snippet,
            "condition": None if seen is None else {
                "relation": seen.relation, "lhs": hex(seen.lhs), "rhs": hex(seen.rhs),
                "wanted": "holds" if self.side else "fails", "text": self.needs()},
            "distance": self.distance,
            "closest": None if self.closest is None else {
                "sequence": self.sequence, "found_at": self.closest.found_at,
                "transaction": None if seen is None else seen.tx},
            "tried": self.tried,
            "opens": {"instructions": self.opens[0], "blocks": self.opens[1]},
            "blocked_by": [{"reason": reason, "detail": detail}
                           for reason, detail in self.reasons],
        })
        return data

    def summary_line(self, rank: int) -> str:
        """One line for the terminal summary."""
        where = f"{self.file.rsplit('/', 1)[-1]}:{self.line}"
        who = f" ({self.function})" if self.function else ""
        snippet = self.snippet if len(self.snippet) <= 48 else self.snippet[:47] + "…"
        why = "; ".join(reason for reason, _ in self.reasons) or "no reason found"
        distance = self.distance
        far = "-" if distance is None else (f"{distance}" if distance < 10**6
                                            else f"{float(distance):.1e}")
        return (f"{rank}. {where}{who} `{snippet}` {self.needs(True)}: {why}; distance {far}, "
                f"tried {self.tried}, opens {self.opens[0]} instructions")


def word(value: int) -> str:
    """A 256-bit value for people: decimal below 2**32, hex above."""
    return str(value) if value < 1 << 32 else hex(value)


def _signed(value: int) -> str:
    return word(value) if not value & SIGN else f"-{word(MOD - value)}"


# ---------------------------------------------------------------------- the frontier
def frontier(inputs: FrontierInputs) -> list[FrontierEntry]:
    """Every just-missed side in a user source, ranked (skipped ones last, unranked)."""
    entries: list[FrontierEntry] = []
    covered_blocks = {code.code_hash: code.blocks for code in inputs.codes}
    for code in inputs.codes:
        graph = inputs.graph(code.code_hash) if code.mapper is not None else None
        for pc, op, _ in code.analysis.instructions:
            if op != JUMPI:
                continue
            sides = [side for side in (False, True) if (pc, side) not in code.edges]
            if len(sides) != 1:
                continue  # both taken, or never reached
            entry = _locate(code, pc, sides[0])
            if entry is None:
                continue
            entry.tried = inputs.tried.get((code.code_hash, pc, not entry.side), 0)
            entry.closest = inputs.closest.get(entry.key)
            if graph is not None:
                entry.opens = opened(graph, code, pc, entry.side,
                                     covered_blocks.get(code.code_hash, frozenset()))
            entries.append(entry)
    _explain(entries, inputs)
    ranked = sorted((e for e in entries if e.skipped is None),
                    key=lambda e: (-e.opens[0], _far(e.distance), -e.tried, e.file, e.line,
                                   e.pc))
    return ranked + [e for e in entries if e.skipped is not None]


def _far(distance: int | None) -> int:
    return distance if distance is not None else MOD


def _locate(code: CodeCoverage, pc: int, side: bool) -> FrontierEntry | None:
    """An entry at the JUMPI's source line, or None outside the user sources."""
    mapper = code.mapper
    entry = mapper.entry(pc) if mapper is not None else None
    if mapper is None or entry is None or entry.file < 0:
        return None
    source = mapper.sources.get(entry.file)
    if source is None or not is_user_source(source):
        return None
    location = mapper.locate(pc)
    if location is None:
        return None
    function = (f"{location.contract}.{location.function}" if location.contract
                and location.function else location.function)
    found = FrontierEntry(code.contract, code.code_hash, pc, side, source.name,
                          str(source.path) if source.path is not None else None,
                          location.line, location.column, function,
                          _snippet(source, entry.offset, entry.length))
    found.skipped = (_compiler_check(source, entry.offset, entry.offset + entry.length)
                     or _constant_condition(code, pc))
    return found


def why_unflippable(code: CodeCoverage, pc: int) -> str | None:
    """Why the JUMPI at ``pc`` is no condition worth solving for, or None.

    A compiler's dispatch or input check, a check in code the compiler generated (ABI
    decoding, checked arithmetic: no source of the compilation) or a constant condition:
    the sides the frontier leaves out, and the concolic stage too.
    """
    mapper = code.mapper
    entry = mapper.entry(pc) if mapper is not None else None
    if mapper is not None and entry is not None:
        source = mapper.sources.get(entry.file) if entry.file >= 0 else None
        if source is None:
            return "a check in code the compiler generated"
        reason = _compiler_check(source, entry.offset, entry.offset + entry.length)
        if reason is not None:
            return reason
    return _constant_condition(code, pc)


def _constant_condition(code: CodeCoverage, pc: int) -> str | None:
    """Why a JUMPI cannot flip: its condition is a constant pushed right before it."""
    before = _before(code, pc, 2)
    if len(before) == 2 and all(PUSH0 <= op <= PUSH32 for _, op, _ in before):
        return "a constant condition (such as assert(false)): no input flips it"
    return None


def _compiler_check(source: SourceFile, start: int, end: int) -> str | None:
    """Why a JUMPI is the compiler's, not a condition of the source, or None.

    solc maps its dispatcher and input checks (selector, calldata size, ``msg.value`` of
    a non-payable function) to a whole contract or function definition; no condition the
    author wrote has such a range.
    """
    functions, contracts = source.outline()
    if any(c.start == start and c.end == end for c in contracts):
        return "the compiler's dispatch or input check (mapped to the whole contract)"
    if any(f.start == start and f.end == end for f in functions):
        return "the compiler's entry check of a function (mapped to the whole function)"
    return None


def _snippet(source: SourceFile, offset: int, length: int) -> str:
    """The first line of a source range, spaces squeezed."""
    text = source.data()[offset:offset + length].decode("utf-8", "replace")
    return " ".join(text.split("\n", 1)[0].split())


def _explain(entries: list[FrontierEntry], inputs: FrontierInputs) -> None:
    """Replay closest cases (operands, reads) and, when reads need it, the corpus (writes)."""
    names = {name: address for address, name in inputs.accounts.items()}
    replays = 0
    for entry in entries:
        closest = entry.closest
        if closest is None:
            continue
        entry.sequence = case_to_json(closest.case, names)
        if replays >= MAX_REPLAYS:
            continue
        replays += 1
        entry.observed = observe(entry.key, closest.case, inputs.run, inputs.code_hashes)
        if entry.observed is not None:
            entry.skipped = entry.skipped or _dispatch(entry.observed, entry.side,
                                                       inputs.uncalled)
    writes = StateWrites()
    if any(entry.observed is not None and entry.observed.reads for entry in entries):
        for case in list(inputs.corpus)[:MAX_CORPUS_REPLAYS]:
            writes.learn(inputs.run(case))
    for entry in entries:
        if entry.observed is not None:
            entry.reasons = blocked_by(entry.observed, entry.side, inputs, writes)
        if entry.key in inputs.infeasible:
            entry.reasons.insert(0, (INFEASIBLE, "the concolic stage's query was unsat: no "
                                                 "input that follows the path it solved on "
                                                 "takes this side (another path may)"))


def observe(side: BranchSide, case: TxSeq, run: Callable[[TxSeq], RunResult],
            code_hashes: Mapping[int, bytes]) -> Observed | None:
    """Replay ``case``: the closest occurrence of the side's JUMPI and what surrounds it.

    The case is replayed again up to the transaction of that occurrence, so that its
    storage reads are recorded (a target records the last transaction's).
    """
    code_hash, pc, wanted = side
    result = run(case)
    best: tuple[int, int, tuple[str, int, int, bool]] | None = None
    marks = result.branch_marks
    for tx in range(len(marks)):
        for h, at, taken, relation, lhs, rhs in result.tx_branches(tx):
            if h != code_hash or at != pc or taken == wanted:
                continue
            cost = flip_cost(relation, lhs, rhs, taken)
            if best is None or cost < best[0]:
                best = (cost, tx, (relation, lhs, rhs, taken))
    if best is None:
        return None
    _, tx, (relation, lhs, rhs, taken) = best
    if tx < len(case) - 1:
        result = run(case[:tx + 1])
    reads = {(code_hashes.get(address, b""), storage_slot(key)): value
             for step, address, key, value in result.reads if step == tx}
    reverted: dict[tuple[bytes, int], str] = {}
    marks = result.write_marks
    for step in range(min(tx, len(marks))):
        if result.outcomes[step].success:
            continue
        end = marks[step + 1] if step + 1 < len(marks) else len(result.writes)
        for h, _, slot in result.writes[marks[step]:end]:
            reverted.setdefault((h, slot), case[step].function)
    return Observed(tx, relation, lhs, rhs, taken, case[tx].sender, case[tx].function, reads,
                    reverted)


def _dispatch(seen: Observed, side: bool, uncalled: Mapping[int, str]) -> str | None:
    """Why a side is no frontier: it enters a function the campaign never calls."""
    if not _needs_equality(seen.relation, side):
        return None
    for operand in (seen.lhs, seen.rhs):
        signature = uncalled.get(operand)
        if signature is not None:
            return f"enters {signature}, which the campaign does not call"
    return None


def _needs_equality(relation: str, side: bool) -> bool:
    """Whether the wanted side needs both operands equal."""
    return (relation == "eq" and side) or (relation == "ne" and not side)


def blocked_by(seen: Observed, side: bool, inputs: FrontierInputs,
               writes: StateWrites) -> list[tuple[str, str]]:
    """The heuristic reasons (module docstring) a side stayed uncovered, most telling first."""
    reasons: list[tuple[str, str]] = []
    lhs, rhs, relation = seen.lhs, seen.rhs, seen.relation
    owner: int | None = None  # the account a sender check wants
    name = inputs.accounts.get
    equality = relation in ("eq", "ne")
    stored = {value: key for key, value in seen.reads.items()}
    if equality and seen.sender in (lhs, rhs):
        other = rhs if lhs == seen.sender else lhs
        if other != seen.sender and 0 < other < 1 << 160:
            owner = other
            what = name(other) or f"0x{other:040x}"
            where = (f", stored in slot {word(stored[other][1])}" if other in stored else "")
            who = ("" if other in inputs.senders
                   else "; no sender of the campaign is that account")
            reasons.append((SENDER, f"compares the sender {name(seen.sender) or hex(seen.sender)}"
                                    f" with {what}{where}{who}"))
    constants = [value for value in (lhs, rhs) if value in inputs.constants and value > 1]
    if constants and not reasons:
        constant = constants[0]
        other = rhs if constant == lhs else lhs
        if _needs_equality(relation, side) and len(constants) == 2:
            # Both are constants of the code (a grid cell compared with "#"): which one the
            # input failed to produce, the comparison alone does not tell.
            reasons.append((CONSTANT, f"needs {word(lhs)} and {word(rhs)} equal, both "
                                      "constants of the code; the closest run had them "
                                      "apart"))
        elif _needs_equality(relation, side):
            reasons.append((CONSTANT, f"needs {word(constant)}, a constant of the code; the "
                                      f"closest run had {word(other)}"))
        elif not equality:
            reasons.append((BOUND, f"compares with {word(constant)}, a constant of the code; "
                                   f"the closest run had {word(other)}"))
    for operand in dict.fromkeys((lhs, rhs)):
        reason = _storage_reason(seen, operand, writes, operand == owner)
        if reason is not None:
            reasons.append(reason)
            break
    return reasons


def _storage_reason(seen: Observed, operand: int, writes: StateWrites,
                    owner: bool) -> tuple[str, str] | None:
    """Revert or state reason for the slots the transaction read holding ``operand``.

    Several slots may hold the value (zero, often): a write kept to any of them leaves
    the state reachable as far as the campaign can tell, so no reason is given then.
    """
    slots = sorted(key for key, value in seen.reads.items() if value == operand)
    if not slots:
        return None
    for key in slots:
        undone = seen.reverted_writes.get(key)
        if undone is not None:
            return (REVERT, f"reads slot {word(key[1])}, which {undone} wrote earlier in the "
                            f"closest case and then reverted")
    if any(key in writes.kept for key in slots):
        return None
    reverted = [key for key in slots if key in writes.reverted]
    if reverted:
        functions = ", ".join(sorted(set().union(*(writes.reverted[k] for k in reverted))))
        return (REVERT, f"reads slot {word(reverted[0][1])}, which only {functions} wrote, "
                        f"in transactions that reverted")
    if owner:
        return None  # a stored owner is never written after deployment: the sender says more
    names = ", ".join(word(key[1]) for key in slots[:3]) + (", ..." if len(slots) > 3 else "")
    return (STATE, f"reads slot{'s' if len(slots) > 1 else ''} {names} (value {word(operand)}),"
                   f" which no transaction wrote")


# ---------------------------------------------------------------------- what a side opens
def opened(graph: Graph, code: CodeCoverage, pc: int, side: bool,
           covered: frozenset[int]) -> tuple[int, int]:
    """(instructions, blocks) reachable past one side of a JUMPI and from nowhere else.

    The blocks reachable from the side's target, less those reachable from the entry
    without taking the side and those already covered.
    """
    block = graph.block_of(pc)
    target = _side_target(code, pc, side)
    if target is None or target not in graph.successors:
        return 0, 0
    past = _reach(graph, target)
    before = _reach(graph, 0, skip=(block, target)) if target != 0 else set()
    only = past - before - covered
    sizes = {start: len(instrs) for start, instrs in code.analysis.blocks}
    return sum(sizes.get(b, 0) for b in only), len(only)


def _side_target(code: CodeCoverage, pc: int, side: bool) -> int | None:
    """The block a side enters: pc + 1 for the fall-through, the pushed target for the jump."""
    if not side:
        return pc + 1
    before = _before(code, pc, 1)
    if not before:
        return None
    _, op, value = before[0]
    # solc pushes a JUMPI's destination right before it; anything else is left unknown.
    return value if PUSH1 <= op <= PUSH32 and value in code.analysis.jumpdests else None


def _before(code: CodeCoverage, pc: int, count: int) -> list[tuple[int, int, int]]:
    """Up to ``count`` instructions right before ``pc`` in its basic block, in order."""
    blocks = code.analysis.blocks
    index = bisect.bisect_right([start for start, _ in blocks], pc) - 1
    if index < 0:
        return []
    instructions = blocks[index][1]
    at = next((i for i, (p, _, _) in enumerate(instructions) if p == pc), 0)
    return instructions[max(0, at - count):at]


def _reach(graph: Graph, start: int, skip: tuple[int, int] | None = None) -> set[int]:
    """Blocks reachable from ``start``, not following the edge ``skip``."""
    seen = {start}
    queue = deque([start])
    successors = graph.successors
    while queue:
        node = queue.popleft()
        for nxt in successors.get(node, ()):
            if nxt not in seen and (node, nxt) != skip:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def top_lines(entries: Sequence[FrontierEntry], count: int = TOP) -> list[str]:
    """The terminal summary's lines: the first ``count`` ranked entries."""
    ranked = [e for e in entries if e.skipped is None][:count]
    return [entry.summary_line(rank) for rank, entry in enumerate(ranked, 1)]


def to_json(entries: Sequence[FrontierEntry]) -> list[dict[str, Any]]:
    """``frontier.json``: the ranked entries (skipped ones are not frontier)."""
    ranked = [e for e in entries if e.skipped is None]
    return [entry.to_json(rank) for rank, entry in enumerate(ranked, 1)]
