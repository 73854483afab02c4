"""Authorisation through tx.origin (SWC-115): ``tx.origin`` decides who may change state.

A run shows it when a target contract changed state (an SSTORE, a CALL or CALLCODE that
sent ether or an amount the transaction chose, a SELFDESTRUCT) in a frame and a
transaction that succeeded, and a JUMPI
guarding that change (``secant.targets.taint``) tests an ``EQ`` of ``tx.origin`` with
something other than the frame's own ``msg.sender``: ``require(tx.origin == owner)``.
Any contract the owner calls can then act as the owner (a phishing contract forwards the
owner's call to ``withdraw``).

``require(tx.origin == msg.sender)`` (only externally owned accounts may call) compares
the origin with the caller and is no finding; neither is a test of ``tx.origin`` that
guards nothing (an event). The comparison and what it guards are both seen in the run, so
the finding is *certain*. Key: the code and pc of the guarding JUMPI.

Cost. It looks only at targets that read ``tx.origin``, and replays a run with the
dataflow recording only when a target wrote storage or paid ether in a transaction that
succeeded, and that transaction can still show something new. Labels move along the
instructions a run executes, so what guards a transaction's state changes is decided by
its *path*: the branches (code, pc, side) it and the transactions before it took (those
may have stored labelled values it reads) and how each ended. After a replay, the oracle
remembers for each state-changing transaction's path the tx.origin checks that guarded
its changes (none: proven clean); a later run whose state-changing transactions all have
remembered paths, each with only checks already reported, is not replayed. An owner that
keeps changing state through checks already reported no longer costs a replay a run.
And a static look (``secant.oracles.static_labels.origin_guards``) finds every JUMPI of
the targets whose condition may test a comparison of tx.origin: code without one needs no
recording, and once all are reported no run is replayed. Where that look gives up (large
code), a run that ran no block holding an ORIGIN instruction is not replayed either: the
labels start there, and every run starts from the deployed state without any.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from secant.chain.chain import TestChain
from secant.evm.analysis import analyze, code_end
from secant.evm.crypto import keccak256
from secant.evm.opcodes import CALL, CALLCODE, CREATE, CREATE2, ORIGIN, SELFDESTRUCT, SSTORE
from secant.oracles.flows import FlowOracle, code_opcodes
from secant.oracles.rated import ether, function_name
from secant.oracles.static_labels import origin_guards
from secant.targets.contract import ContractRun
from secant.targets.taint import INPUT, ORIGIN_CHECK, Dataflow, FlowSink
from secant.types import BlockSet, Finding

_VERDICT_LIMIT = 1 << 16  # transaction paths remembered (then forgotten at once)


class TxOriginOracle(FlowOracle):
    """Reports state changes that a tx.origin comparison guards (module docstring)."""

    name = "tx-origin"
    swc = "SWC-115"
    description = ("a JUMPI comparing tx.origin with something other than msg.sender guards "
                   "a state change or an ether transfer")
    severity = "medium"
    confidence = "certain"

    def __init__(self, chain: TestChain) -> None:
        super().__init__(chain)
        # A state-changing transaction's path (see the module docstring) -> the tx.origin
        # checks that guarded its changes (empty: proven clean).
        self.verdicts: dict[int, frozenset[tuple[bytes, int]]] = {}
        # The run the last candidate was and the paths of its state-changing transactions.
        self._pending: tuple[ContractRun, dict[int, int]] | None = None

    def relevant(self, chain: TestChain, codes: Iterable[tuple[bytes, bytes]]) -> bool:
        """Some target reads ORIGIN, and some JUMPI of a target may test a comparison of it.

        Only such JUMPIs can be reported (a guard is a JUMPI of the changing frame, in a
        target's code), and a static look finds them all (``static_labels.origin_guards``):
        ``guards`` holds them (None: the look could not tell, any JUMPI may be one).
        """
        listed = list(codes)
        self.guards: frozenset[tuple[bytes, int]] | None = frozenset()
        if not any(ORIGIN in code_opcodes(chain, code, code_hash) for code_hash, code in listed):
            return False
        mine = {code_hash for code_hash, _ in listed}
        every = dict(listed)
        for attacker in chain.attacker_contracts:
            code = chain.code_at(attacker.address)
            if code:
                every.setdefault(keccak256(code), code)
        creates = any(code_opcodes(chain, code, code_hash) & {CREATE, CREATE2}
                      for code_hash, code in listed)
        found = origin_guards(list(every.items()), chain.fork,
                              creates or self.delegates_unknown())
        self.guards = (None if found is None
                       else frozenset(guard for guard in found if guard[0] in mine))
        # The blocks that read tx.origin, by code: a run that ran none of them cannot have
        # compared it (the labels start at the ORIGIN instruction, and every run starts
        # from the deployed state without any), whatever the static look could tell.
        self._origin_blocks = {code_hash: _origin_blocks(chain, code, code_hash)
                               for code_hash, code in every.items()}
        return self.guards is None or bool(self.guards)

    def candidate(self, result: ContractRun) -> bool:
        """A target changed state in a successful transaction whose path may show more.

        Nothing more is to be found once every JUMPI that may be a guard is reported.
        """
        self._pending = None
        if self.guards is not None and self.guards <= self.reported:
            return False
        if not self._read_origin(result):
            return False
        changing = self._changing(result)
        if not changing:
            return False
        paths = self._paths(result, changing)
        verdicts, reported = self.verdicts, self.reported
        if all((known := verdicts.get(path)) is not None and known <= reported
               for path in paths.values()):
            return False
        self._pending = (result, paths)
        return True

    def _read_origin(self, result: ContractRun) -> bool:
        """Whether the run may have read tx.origin.

        It did if it ran a block that reads it, and may have if it ran code the oracle does
        not know (created on the way).
        """
        known = self._origin_blocks
        blocks = result.blocks
        by_code = blocks.by_code if isinstance(blocks, BlockSet) else BlockSet(blocks).by_code
        for code_hash, starts in by_code.items():
            reading = known.get(code_hash)
            if reading is None:
                if starts:
                    return True
            elif not reading.isdisjoint(starts):
                return True
        return False

    def _changing(self, result: ContractRun) -> list[int]:
        """Successful transactions in which a target wrote storage or paid ether."""
        outcomes = result.outcomes
        marks = result.write_marks
        writes = result.writes
        changing: set[int] = set()
        for index, outcome in enumerate(outcomes):
            if not outcome.success:
                continue
            end = marks[index + 1] if index + 1 < len(marks) else len(writes)
            start = marks[index] if index < len(marks) else end
            if any(code_hash in self.codes for code_hash, _, _ in writes[start:end]):
                changing.add(index)
        # A plain payment (no calldata) counts even when it moved no ether: its amount may
        # be the caller's choice, which only the replay can tell (``_changes_state``).
        changing.update(call.tx for call in result.calls
                        if call.kind in (CALL, CALLCODE) and call.success
                        and (call.value or not call.data)
                        and self.caller_of(call) in self.targets
                        and call.tx < len(outcomes) and outcomes[call.tx].success)
        return sorted(changing)

    @staticmethod
    def _paths(result: ContractRun, indices: list[int]) -> dict[int, int]:
        """The path of each transaction in ``indices``: its branches and those before it."""
        branches, marks, outcomes = result.branches, result.branch_marks, result.outcomes
        paths: dict[int, int] = {}
        path = 0
        for index in range(max(indices) + 1):
            start = marks[index] if index < len(marks) else len(branches)
            end = marks[index + 1] if index + 1 < len(marks) else len(branches)
            outcome = outcomes[index]
            path = hash((path, tuple((b[0], b[1], b[2]) for b in branches[start:end]),
                         outcome.success, outcome.reverted))
            paths[index] = path
        return {index: paths[index] for index in indices}

    def judge(self, result: ContractRun, flow: Dataflow) -> list[Finding]:
        """A finding per tx.origin check of a target that guarded a change in this run."""
        findings: list[Finding] = []
        case = result.case
        seen: set[tuple[bytes, int]] = set()
        guarded: dict[int, set[tuple[bytes, int]]] = {}  # by transaction
        for sink in flow.sinks:
            if not _changes_state(sink):
                continue
            contract = self.contract(sink.code_hash)
            if contract is None or not self.judged(flow, result, sink.tx, sink.frame):
                continue
            for guard in flow.guards_with(sink, ORIGIN_CHECK):
                guarded.setdefault(sink.tx, set()).add((guard.code_hash, guard.pc))
                if (guard.code_hash, guard.pc) in seen:
                    continue
                seen.add((guard.code_hash, guard.pc))
                self.reported.add((guard.code_hash, guard.pc))
                owner = self.contract(guard.code_hash) or contract
                check_at = self.place(owner, guard.pc)
                change = _change(sink, self.who)
                detail = (f"{self.step(case[:sink.tx + 1], sink.tx)} passed the check at "
                          f"{check_at}, which compares tx.origin with something other than "
                          f"msg.sender, and then {contract.name} {change} at "
                          f"{self.place(contract, sink.pc)}: any contract "
                          f"{self.who(case[sink.tx].sender)} calls can do the same in its "
                          "name. " + self.rating(self.confidence, "the comparison and the "
                                                 "change it guards both ran"))
                findings.append(Finding(
                    kind=self.name, swc=self.swc or "", contract=owner.name,
                    function=function_name(case[sink.tx]), pc=guard.pc,
                    source=self.where(owner, guard.pc), detail=detail,
                    key=(self.name, guard.code_hash, guard.pc), case=case[:sink.tx + 1],
                    oracle=self.name, confidence=self.confidence))
        pending = self._pending
        if pending is not None and pending[0] is result:
            if len(self.verdicts) >= _VERDICT_LIMIT:
                self.verdicts.clear()
            for index, path in pending[1].items():
                self.verdicts[path] = frozenset(guarded.get(index, ()))
        self._pending = None
        return findings


def _origin_blocks(chain: TestChain, code: bytes, code_hash: bytes) -> frozenset[int]:
    """The starts of ``code``'s basic blocks that hold an ORIGIN instruction."""
    if ORIGIN not in code_opcodes(chain, code, code_hash):
        return frozenset()
    end = code_end(code)
    return frozenset(start for start, instructions in analyze(code, code_hash, chain.fork).blocks
                     if any(op == ORIGIN and pc < end for pc, op, _ in instructions))


def _changes_state(sink: FlowSink) -> bool:
    """A storage write, a self-destruct, or a payment of ether or of an amount chosen.

    An amount the transaction chose counts when 0 wei moved: a contract that holds no ether
    yet pays 0 wei in the run, and will pay whatever it holds once it holds some.
    """
    if sink.opcode == SSTORE or sink.opcode == SELFDESTRUCT:
        return True
    return (sink.opcode in (CALL, CALLCODE) and sink.success
            and (bool(sink.value) or bool(sink.value_labels & INPUT)))


def _change(sink: FlowSink, who: Callable[[int], str]) -> str:
    if sink.opcode == SSTORE:
        return f"wrote storage slot 0x{sink.target:x}"
    if sink.opcode == SELFDESTRUCT:
        return f"self-destructed in favour of {who(sink.target)}"
    if not sink.value:
        return f"paid {who(sink.target)} an amount the transaction chose (0 wei this time)"
    return f"sent {ether(sink.value)} to {who(sink.target)}"
