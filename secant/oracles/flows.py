"""What the data-flow detectors share: when to look, the dataflow records, and wording.

The detectors of unchecked calls, block-state dependency, controlled calls and
delegatecalls and ``tx.origin`` authorisation judge the ``dataflow`` records of a run
(``secant.targets.taint``): label sets of values and the JUMPIs guarding each state change
and call. Recording them steps every instruction, which costs several times the traced
run (docs/oracles.md), and the stepped tables report JUMPI comparisons less exactly than the
traced ones (each instruction is its own unit, so an ``ISZERO`` chain hides the comparison
behind it), which would change what Harvey's branch distances steer towards. So the
campaign's runs stay as they are, and the records are made *lazily*:

* a static look at the targets' runtime code decides whether the bug can exist there at
  all (``relevant``: no DELEGATECALL, no controlled delegatecall); if not, the detector
  needs no recording and never looks again;
* otherwise it needs only the cheap ``calls`` recording, and for each run a precondition on
  what the run shows anyway (``candidate``: a target's call failed, it paid ether, it
  delegated to an address the case's arguments contain, ...) decides whether the records
  are worth having;
* then the case is replayed once on a second contract target over the same chain with the
  ``dataflow`` recording (``replayed``), and every detector that asks about the same run
  shares that replay. A run is deterministic, so the replay ends in the same state the run
  left, and the campaign's target, its prefix cache and its recorder are not touched. The
  replaying target keeps a prefix cache of its own, so the candidates of one round, which
  share the seed's prefix, step only the transactions after it;
* a run judged clean, or whose findings the campaign has already (``known``), is
  remembered by what decides its labels (``clean_key``: the edges it covered, the
  functions called in order, the storage slots written and the last transaction's slots
  read) and what else decides its findings' keys (``rating_context``), and a later
  candidate with the same key is not replayed: labels move along the instructions a run
  executes and the slots it uses, not with the values or the senders. A detector whose
  verdict depends on something else (whether a call failed) opts out (``cache_clean``);
* the controlled calls are replayed only while a site that ran may still get a rating it
  has no finding with (``open_choices``; the storage label's reach is a static question,
  ``secant.oracles.static_labels``).

A run whose target already records ``dataflow`` (a test, or a campaign that asks for it)
is judged from its own records, without a replay. Only the code of target contracts (not
attacker contracts) is judged; a library's code running by DELEGATECALL in a target's
context counts as that library's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.oracle import PostState
from secant.evm.analysis import CodeAnalysis, analyze, code_end
from secant.evm.constant_stack import peek, step
from secant.evm.crypto import keccak256
from secant.evm.opcodes import (
    AND,
    CALL,
    CALLCODE,
    CREATE,
    CREATE2,
    DELEGATECALL,
    DUP1,
    DUP16,
    EQ,
    GT,
    HALTS,
    INVALID,
    ISZERO,
    JUMP,
    JUMPI,
    LT,
    MUL,
    OPS,
    POP,
    PUSH0,
    PUSH1,
    PUSH32,
    REVERT,
    SGT,
    SLOAD,
    SLT,
    SSTORE,
    STATICCALL,
    SWAP1,
    SWAP16,
)
from secant.oracles.rated import RatedOracle, function_name
from secant.oracles.static_labels import stored_reach
from secant.targets.contract import ContractRun
from secant.targets.taint import INPUT, STORED, Dataflow, FlowBranch, label_names
from secant.targets.trace import CallEvent
from secant.types import Finding, RunResult, TxSeq

__all__ = ["CallSite", "FlowOracle", "call_sites", "code_opcodes", "replayed"]

_OPCODES: dict[tuple[bytes, str], frozenset[int]] = {}
_SITES: dict[tuple[bytes, str], tuple[CallSite, ...]] = {}
_CALLS = {CALL: (1, 2, 4), CALLCODE: (1, 2, 4), DELEGATECALL: (1, None, 3),
          STATICCALL: (1, None, 3)}  # stack positions of target, value, input size
_FLAG_STEPS = 2048  # instructions followed after a call to see its flag tested
_FLAG_PATHS = 16  # branches on something else than the flag, both sides followed
_ADDRESS_BYTES = 20
_WORD = 1 << 256
_FLAGS = frozenset({ISZERO, LT, GT, SLT, SGT, EQ})  # results of at most 1
_CLEAN_LIMIT = 1 << 16  # clean keys remembered per detector (then forgotten at once)
_RATINGS = ("possible", "certain", "likely")  # what ``FlowOracle.chooser_rating`` gives
_ADDRESS = (1 << 160) - 1


@dataclass(frozen=True)
class CallSite:
    """A CALL-family instruction and what a static look at its code proves.

    ``target``, ``value`` and ``data_size`` are the operands' constants when pushed in the
    same straight-line run (None: computed or loaded); ``checked`` says the success flag
    surely decides a JUMPI on every path that goes on after the call (solc's high-level
    calls, ``transfer``, ``require(ok)`` after a low-level call); ``block`` is the start
    of the basic block the call ends (a run's coverage tells whether it ran); ``gas`` is
    the most gas the call can ask for as the same straight-line run proves it (solc's
    ``2300 * iszero(value)`` for ``send`` and ``transfer`` gives 2300), None when nothing
    bounds it (``gas()``: all that is left).
    """

    pc: int
    opcode: int
    target: int | None
    value: int | None
    data_size: int | None
    checked: bool
    block: int
    gas: int | None = None


def code_opcodes(chain: TestChain, code: bytes, code_hash: bytes) -> frozenset[int]:
    """The opcodes of ``code``'s instructions, without solc's CBOR metadata (cached)."""
    key = (code_hash, chain.fork.name)
    found = _OPCODES.get(key)
    if found is None:
        end = code_end(code)
        found = _OPCODES[key] = frozenset(
            op for pc, op, _ in analyze(code, code_hash, chain.fork).instructions if pc < end)
    return found


def runtime_ops(chain: TestChain, code: bytes, code_hash: bytes
                ) -> tuple[CodeAnalysis, int, dict[int, tuple[int, int]]]:
    """What static scans walk: ``code``'s analysis, its instructions' end, its ops.

    The end is where the metadata begins; the ops map pc -> (opcode, immediate) of every
    instruction before it.
    """
    analysis = analyze(code, code_hash, chain.fork)
    end = code_end(code)
    return analysis, end, {pc: (op, value) for pc, op, value in analysis.instructions
                           if pc < end}


def call_sites(chain: TestChain, code: bytes, code_hash: bytes) -> tuple[CallSite, ...]:
    """The CALL, CALLCODE, DELEGATECALL and STATICCALL sites of ``code`` (cached)."""
    key = (code_hash, chain.fork.name)
    found = _SITES.get(key)
    if found is not None:
        return found
    analysis, end, ops = runtime_ops(chain, code, code_hash)
    sites: list[CallSite] = []
    for start, instructions in analysis.blocks:
        stack: list[int | None] = []
        bounds: list[int | None] = []
        for pc, op, value in instructions:
            if pc >= end:
                break
            if op in _CALLS:
                target, paid, size = _CALLS[op]
                checked = _flag_checked(ops, analysis.jumpdests, pc + 1)
                sites.append(CallSite(pc, op, peek(stack, target),
                                      peek(stack, paid) if paid is not None else 0,
                                      peek(stack, size), checked, start, peek(bounds, 0)))
            step(stack, op, value)
            _bound_step(bounds, op, value)
    found = _SITES[key] = tuple(sites)
    return found


def _bound_step(stack: list[int | None], op: int, value: int) -> None:
    """``constant_stack.step`` on upper bounds: what a flag, a product or a mask can be.

    A comparison or ISZERO gives at most 1, a product of bounded items at most the product
    of their bounds, an AND at most its smaller bounded operand; everything else is as for
    constants (a PUSH is its own bound). Enough to bound solc's stipend ``2300 *
    iszero(value)``.
    """
    if op in _FLAGS:
        del stack[max(0, len(stack) - OPS[op].pops):]
        stack.append(1)
    elif op == MUL or op == AND:
        a, b = peek(stack, 0), peek(stack, 1)
        del stack[max(0, len(stack) - 2):]
        if op == MUL:
            product = a * b if a is not None and b is not None else None
            stack.append(product if product is not None and product < _WORD else None)
        else:
            known = [bound for bound in (a, b) if bound is not None]
            stack.append(min(known) if known else None)
    else:
        step(stack, op, value)


Item = tuple[int | None, bool]  # (constant or None, derived from the call's flag)


def _flag_checked(ops: dict[int, tuple[int, int]], jumpdests: frozenset[int],
                  start: int) -> bool:
    """Whether the flag a call pushes decides a JUMPI on every path that goes on.

    Paths are followed from the instruction after the call with an abstract stack (the
    flag on top, constants for jump targets): a JUMPI on a value derived from the flag
    checks it; a JUMPI on anything else is followed both ways; a REVERT or INVALID ends a
    path harmlessly (the call's effects are undone). Anything else that ends a path (a
    STOP or RETURN, the flag dropped, a jump to an unknown place, the limits) leaves the
    flag unchecked.
    """
    pending: list[tuple[int, list[Item]]] = [(start, [(None, True)])]
    steps = forks = 0
    while pending:
        pc, stack = pending.pop()
        while True:
            steps += 1
            entry = ops.get(pc)
            if steps > _FLAG_STEPS or entry is None or not any(d for _, d in stack):
                return False
            op, value = entry
            if op == REVERT or op == INVALID or op not in OPS:
                break
            if op in HALTS:
                return False
            if op == JUMP or op == JUMPI:
                dest = stack.pop()[0] if stack else None
                if op == JUMPI:
                    condition = stack.pop() if stack else (None, False)
                    if condition[1]:
                        break  # the flag decides this branch
                    forks += 1
                    if dest is None or dest not in jumpdests or forks > _FLAG_PATHS:
                        return False
                    pending.append((dest, list(stack)))
                    pc += 1
                    continue
                if dest is None:
                    return False
                if dest not in jumpdests:
                    break  # an invalid jump halts exceptionally
                pc = dest
                continue
            flag_step(stack, op, value)
            pc += 1 + OPS[op].immediate
    return True


def flag_step(stack: list[Item], op: int, value: int) -> None:
    """Apply ``op`` to an abstract stack of (constant or None, derived) items.

    A result is derived when an operand it consumed was.
    """
    if op == PUSH0 or PUSH1 <= op <= PUSH32:
        stack.append((value if op != PUSH0 else 0, False))
    elif DUP1 <= op <= DUP16:
        depth = op - DUP1 + 1
        stack.append(stack[-depth] if depth <= len(stack) else (None, False))
    elif SWAP1 <= op <= SWAP16:
        depth = op - SWAP1 + 1
        while len(stack) <= depth:
            stack.insert(0, (None, False))
        stack[-1], stack[-1 - depth] = stack[-1 - depth], stack[-1]
    elif op == POP:
        if stack:
            stack.pop()
    else:
        info = OPS[op]
        popped = stack[max(0, len(stack) - info.pops):]
        del stack[max(0, len(stack) - info.pops):]
        derived = any(d for _, d in popped)
        stack.extend([(None, derived)] * info.pushes)


# ---------------------------------------------------------------------- replays
def replayed(result: RunResult, post: PostState | None) -> Dataflow | None:
    """The dataflow records of ``result``: the run's own, else from one replay of its case.

    Asked of the post-state view (``PostState.recording``): its recorder's records while
    it records ``dataflow``, otherwise the case runs again once on a target of its own with
    the recording, whichever detectors ask. None without a post-state, or when the replay
    did not end as the run did.
    """
    if post is None:
        return None
    found = post.recording(result, "dataflow")
    return found if isinstance(found, Dataflow) else None


# ---------------------------------------------------------------------- the detectors
class FlowOracle(RatedOracle):
    """A rated detector on the dataflow records (see the module docstring).

    Subclasses say where the bug can be (``relevant``), which runs may show it
    (``candidate``) and what the records show (``judge``).
    """

    cache_clean = True

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        codes = [(code_hash, code) for code_hash, code in self.code_of.values()]
        self.needs = frozenset({"calls"}) if self.relevant(chain, codes) else frozenset()
        # Sites already reported (code hash, pc): their runs need no replay any more.
        self.reported: set[tuple[bytes, int]] = set()
        self.clean: set[int] = set()
        # Every code a run may execute that the oracle knows (targets', attacker
        # contracts'), and which of its blocks read storage (``read_storage``).
        self._frame_code = dict(self.code_of)  # address -> (code hash, code)
        for attacker in chain.attacker_contracts:
            code = chain.code_at(attacker.address)
            if code:
                self._frame_code[attacker.address] = (keccak256(code), code)
        self._any_code = {code_hash: code for code_hash, code in self._frame_code.values()}
        self._readers: dict[bytes, frozenset[int]] = {}
        # Every call site of the targets' code.
        self._sites = [(code_hash, site) for code_hash, code in self.code_of.values()
                       for site in call_sites(chain, code, code_hash)]
        self._relayed = frozenset(c.address for c in chain.attacker_contracts)
        # ``open_choices``' sites not reported with every rating, and how many keys it knew.
        self._open_sites: tuple[int, list[tuple[bytes, CallSite]]] | None = None

    def idle(self) -> bool:
        """Idle where the targets' code cannot show the bug (``relevant``)."""
        return not self.needs

    def check(self, result: RunResult, post: PostState | None = None) -> list[Finding]:
        """The findings of one run: its records judged, when the run may show the bug."""
        if not self.needs or not isinstance(result, ContractRun):
            return []
        flow = self.own_flow(result, post)
        key = None
        if flow is None:
            if not self.candidate(result):
                return []
            if self.cache_clean:
                key = hash((self.clean_key(result), self.rating_context(result)))
                if key in self.clean:
                    return []
            flow = replayed(result, post)
            if flow is None:
                return []
        findings = self.judge(result, flow)
        # A run that showed nothing the campaign does not have yet is remembered like a
        # clean one: a run like it would show the same keys.
        if key is not None and all(finding.key in self.known for finding in findings):
            if len(self.clean) >= _CLEAN_LIMIT:
                self.clean.clear()
            self.clean.add(key)
        return self.returned(findings)

    def rating_context(self, result: ContractRun) -> tuple[object, ...]:
        """What decides the keys of a run's findings besides its labels (none here).

        Part of the memory of judged runs, next to ``clean_key``.
        """
        return ()

    def own_flow(self, result: RunResult, post: PostState | None) -> Dataflow | None:
        """The dataflow records the run itself made, if it made any (no replay)."""
        found = None if post is None else post.recording(result, "dataflow", replay=False)
        return found if isinstance(found, Dataflow) else None

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """The findings the run's dataflow records show."""
        return []

    def clean_key(self, result: ContractRun) -> int:
        """What decides the labels of a run (see the module docstring), as one number."""
        return hash((frozenset(result.edges), tuple((tx.function, tx.to) for tx in result.case),
                     frozenset(result.writes), frozenset((a, s) for _, a, s, _ in result.reads)))

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Whether the targets' code (hash, runtime code) can show the bug at all."""
        return True

    def candidate(self, result: ContractRun) -> bool:
        """Whether the run may show the bug (worth its dataflow records)."""
        return True

    # ------------------------------------------------------------------ preconditions
    def sites_ran(self, result: RunResult) -> list[tuple[bytes, CallSite]]:
        """The call sites of the targets' code whose block the case executed."""
        return self._that_ran(result, self._sites)

    @staticmethod
    def _that_ran(result: RunResult, sites: list[tuple[bytes, CallSite]]
                  ) -> list[tuple[bytes, CallSite]]:
        """Those of ``sites`` whose block the case executed."""
        blocks = result.blocks
        by_code = getattr(blocks, "by_code", None)
        if by_code is None:
            return [(code_hash, site) for code_hash, site in sites
                    if (code_hash, site.block) in blocks]
        empty: set[int] = set()
        return [(code_hash, site) for code_hash, site in sites
                if site.block in by_code.get(code_hash, empty)]

    def chooser_context(self, result: ContractRun) -> tuple[object, ...]:
        """Which transactions a privileged sender sent (``chooser_rating``'s *possible*)."""
        return tuple(self.privileged(result, tx) for tx in range(len(result.case)))

    def open_choices(self, result: ContractRun, opcodes: frozenset[int]) -> bool:
        """Whether the run may show a chosen callee at a site not yet reported as it would.

        For the detectors whose keys are a site (of ``opcodes``, in a target's code) and a
        rating from ``chooser_rating``: a site can only be reported if it ran and its
        callee is not a constant the code pushes (that carries no label), and a run can
        only rate it *possible* if a privileged sender sent one of its transactions,
        *certain* or *likely* if another sender did, and *likely* only if the storage
        label can reach the site (``stored_possible``). When every such key was returned
        already, the replay could show nothing new and is not made.
        """
        known, name = self.known, self.name
        # The sites not yet reported with every rating (once all are, nothing is looked at),
        # worked out again only when a finding was added.
        cached = self._open_sites
        if cached is None or cached[0] != len(known):
            sites = [(code_hash, site) for code_hash, site in self._sites
                     if site.opcode in opcodes and site.target is None  # a constant: no label
                     and any((name, code_hash, site.pc, rating) not in known
                             for rating in _RATINGS)]
            self._open_sites = cached = (len(known), sites)
        sites = cached[1]
        ran = self._that_ran(result, sites) if sites else sites
        if not ran:
            return False
        missing = {rating: [(code_hash, site) for code_hash, site in ran
                            if (name, code_hash, site.pc, rating) not in known]
                   for rating in _RATINGS}
        case = result.case
        if missing["possible"] or missing["certain"]:
            privileged = {self.privileged(result, tx) for tx in range(len(case))}
            if (missing["possible"] and True in privileged) or (
                    missing["certain"] and False in privileged):
                return True
            if False not in privileged:
                return False
            return bool(missing["likely"]) and self.stored_possible(result, missing["likely"])
        # Only *likely* is left (the usual case once a site is found): the cheaper test first.
        if not missing["likely"] or not self.stored_possible(result, missing["likely"]):
            return False
        return not all(self.privileged(result, tx) for tx in range(len(case)))

    def stored_possible(self, result: ContractRun, sites: list[tuple[bytes, CallSite]]
                        ) -> bool:
        """Whether a value read from storage may reach the callee (or input) of a site.

        Only if some code of the case may have read storage (``read_storage``); then, when
        every frame that ran a target's code had calldata that cannot carry the label
        (``clean_frames``), only if the site's own code may bring a stored value there
        (``secant.oracles.static_labels``: the callee, or memory for a CALL's selector).
        """
        if not self.read_storage(result):
            return False
        for code_hash, site in sites:
            code = self._any_code.get(code_hash)
            if code is None:
                return True
            reach = stored_reach(code, code_hash, self.fork).get(site.pc)
            if reach is None or reach.callee or (site.opcode in (CALL, CALLCODE)
                                                 and reach.memory):
                return True
        return not self.clean_frames(result)

    def clean_frames(self, result: ContractRun) -> bool:
        """Whether every frame that ran a target's code had calldata without STORED.

        A transaction's own frame has (its calldata is the input). A frame below it has
        when its caller's had and the caller's code cannot hold a stored value in memory
        at any of its calls (``static_labels.stored_reach``), which needs the caller's
        code known: a target's or an attacker contract's. The callers come from the
        ``calls`` recording (a message's caller is the first message at the depth above it
        to end after it). A case that creates contracts is not judged (code might change
        under an address).
        """
        calls = result.calls
        if not any(call.code_address in self.targets for call in calls):
            return True
        if any(call.kind in (CREATE, CREATE2) for call in calls):
            return False
        by_tx: dict[int, list[CallEvent]] = {}
        for call in calls:
            by_tx.setdefault(call.tx, []).append(call)
        case = result.case
        for tx, events in by_tx.items():
            if tx >= len(case):
                return False
            sender = case[tx].sender
            top = sender if sender in self._relayed else self.contract_of(case[tx])
            for index, event in enumerate(events):
                if event.code_address not in self.targets:
                    continue
                depth, at = event.depth, index
                while depth > 1:
                    at = next((later for later in range(at + 1, len(events))
                               if events[later].depth == depth - 1), -1)
                    if at < 0 or not self._quiet_memory(events[at].code_address):
                        return False
                    depth -= 1
                if not self._quiet_memory(top):
                    return False
        return True

    def _quiet_memory(self, address: int) -> bool:
        """Whether the code at ``address`` (known) never calls with stored memory.

        In a frame whose calldata has no STORED: what its callees' calldata then lack too.
        """
        known = self._frame_code.get(address)
        if known is None:
            return False
        code_hash, code = known
        return not any(reach.memory for reach in stored_reach(code, code_hash,
                                                                self.fork).values())

    def read_storage(self, result: RunResult) -> bool:
        """Whether some code of the case may have run an SLOAD (a block holding one ran).

        Code the oracle does not know (created during the case) counts as reading.
        """
        by_code = getattr(result.blocks, "by_code", None)
        if by_code is None:
            return True
        for code_hash, starts in by_code.items():
            if not starts:
                continue
            reading = self._reading_blocks(code_hash)
            if reading is None or not reading.isdisjoint(starts):
                return True
        return False

    def _reading_blocks(self, code_hash: bytes) -> frozenset[int] | None:
        """The blocks of a known code (targets', attacker contracts') that hold an SLOAD."""
        found = self._readers.get(code_hash)
        if found is None:
            code = self._any_code.get(code_hash)
            if code is None:
                return None
            found = self._readers[code_hash] = frozenset(
                start for start, instructions in analyze(code, code_hash, self.fork).blocks
                if any(op == SLOAD for _, op, _ in instructions))
        return found

    def caller_of(self, call: CallEvent) -> int:
        """The account whose code made ``call`` (a DELEGATECALL runs in its target)."""
        return call.target if call.kind == DELEGATECALL else call.sender

    @staticmethod
    def case_words(case: TxSeq) -> tuple[frozenset[int], tuple[bytes, ...]]:
        """Every integer (addresses included) and every byte string among the arguments."""
        ints: set[int] = set()
        blobs: list[bytes] = []
        pending: list[object] = [tx.args for tx in case]
        while pending:
            value = pending.pop()
            if isinstance(value, bool):
                continue
            if isinstance(value, int):
                ints.add(value)
            elif isinstance(value, bytes | bytearray):
                blobs.append(bytes(value))
            elif isinstance(value, str):
                blobs.append(value.encode())
            elif isinstance(value, tuple | list):
                pending.extend(value)
        return frozenset(ints), tuple(blobs)

    @staticmethod
    def chosen(address: int, ints: frozenset[int], blobs: tuple[bytes, ...]) -> bool:
        """Whether ``address`` is among the case's arguments (or inside a byte string)."""
        if address in ints:
            return True
        raw = address.to_bytes(_ADDRESS_BYTES, "big")
        return any(raw in blob for blob in blobs)

    # ------------------------------------------------------------------ judging
    def judged(self, flow: Dataflow, result: RunResult, tx: int, frame: int) -> bool:
        """Whether what frame ``frame`` of transaction ``tx`` did stands (both succeeded)."""
        outcomes = result.outcomes
        return tx < len(outcomes) and outcomes[tx].success and flow.completed(frame)

    def contract(self, code_hash: bytes) -> DeployedContract | None:
        """The target contract whose runtime code has ``code_hash`` (None: not a target)."""
        return self.codes.get(code_hash)

    def place(self, contract: DeployedContract, pc: int) -> str:
        """``Bank.sol:12`` when a source map says, else ``pc 120 of Bank``."""
        return self.where(contract, pc) or f"pc {pc} of {contract.name}"

    def call_finding(self, contract: DeployedContract, case: TxSeq, tx: int, pc: int,
                     code_hash: bytes, detail: str, confidence: str) -> Finding:
        """The finding at a call site (``code_hash``, ``pc``) of transaction ``tx``.

        Keyed by the oracle and the site; its case ends with that transaction.
        """
        return Finding(kind=self.name, swc=self.swc or "", contract=contract.name,
                       function=function_name(case[tx]), pc=pc,
                       source=self.where(contract, pc), detail=detail,
                       key=(self.name, code_hash, pc), case=case[:tx + 1], oracle=self.name,
                       confidence=confidence)

    def branch_places(self, branches: list[FlowBranch], mask: int) -> str:
        """``the JUMPI at Bank.sol:12 (on block.timestamp)`` for each branch, joined."""
        parts = []
        for branch in branches:
            owner = self.contract(branch.code_hash)
            where = self.place(owner, branch.pc) if owner is not None else f"pc {branch.pc}"
            names = ", ".join(label_names(branch.labels & mask))
            parts.append(f"the JUMPI at {where} (on {names})")
        return "; ".join(dict.fromkeys(parts))

    def privileged(self, result: RunResult, tx: int) -> bool:
        """Whether the sender of transaction ``tx`` is the deployer or was named by one.

        Such a sender choosing a callee (an owner's upgrade, a multisig's execution) uses a
        power it was given on purpose.
        """
        case, outcomes = result.case, result.outcomes
        sender = case[tx].sender
        return sender == self.deployer or self.granted(case, outcomes, tx, frozenset({sender}))

    def chooser_rating(self, result: RunResult, tx: int, labels: int, chose: str,
                       deliberate: str, stored: str, flow: Dataflow | None = None,
                       address: int | None = None) -> tuple[str, str]:
        """Confidence and why for a callee that transaction ``tx``'s input chose.

        *possible* when a privileged sender chose it (``deliberate`` says why that may be
        intended), or when part of it came out of storage and, by ``flow``, only privileged
        senders' earlier transactions stored ``address`` from their input (an owner's
        ``setCallee``: a user's call through it uses the owner's choice); *likely* when
        part of it came out of storage an input wrote (``stored`` says so), else *certain*.
        ``chose`` names what was chosen ("it", "them").
        """
        sender = self.who(result.case[tx].sender)
        if self.privileged(result, tx):
            return "possible", (f"{sender}, the deployer or an account a trusted sender "
                                f"named, chose {chose}; {deliberate}")
        if labels & STORED:
            if flow is not None and address is not None:
                stores = [sink for sink in flow.sinks
                          if sink.opcode == SSTORE and sink.value_labels & INPUT
                          and sink.value & _ADDRESS == address and sink.tx < tx]
                # Only the targets' own code chooses: a store made by code a target
                # delegated to (the callee someone chose before, rated on its own) is
                # that callee's doing, not a second choice of the address.
                writers = {sink.tx for sink in stores
                           if self.contract(sink.code_hash) is not None}
                if writers and all(self.privileged(result, w) for w in writers):
                    return "possible", ("it came out of storage that only the deployer or "
                                        "accounts a trusted sender named wrote from their "
                                        f"input; {deliberate}")
                if stores and not writers:
                    return "possible", ("it came out of storage that only code the contract "
                                        "delegated to wrote (that delegation is rated on "
                                        f"its own); {deliberate}")
            return "likely", stored
        return "certain", f"{sender}, a sender without any granted right, chose {chose}"
