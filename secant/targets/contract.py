"""The contract target: runs test cases (transaction sequences) on a :class:`TestChain`.

Every run starts from the chain's sealed post-deployment snapshot (``TestChain.reset``,
O(changes)), advances the block by each transaction's deltas and sends the transaction
with a :class:`TraceRecorder` attached. The result carries the recorder's containers, the
outcome of each transaction and the path id of the *last* transaction: earlier
transactions only build up state (Harvey §5).

Path ids hash the last transaction's branch edges in order of first occurrence with
AFL-style hit-count buckets (1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+), so a loop that runs
one more time is the same path while one that runs twice as often is a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from secant.chain.abi import AbiFunction
from secant.chain.chain import TestChain
from secant.chain.deploy import DeployedContract
from secant.engine.abicodec import encoder_for
from secant.evm.transaction import InvalidTransaction
from secant.targets.trace import BranchEvent, PanicEvent, TraceRecorder
from secant.types import TxOutcome, TxSeq

__all__ = ["ContractTarget", "ExecResult", "bucket", "path_hash"]


def bucket(count: int) -> int:
    """AFL's hit-count bucket of an edge executed ``count`` times."""
    if count <= 3:
        return count
    if count <= 7:
        return 4
    if count <= 15:
        return 5
    if count <= 31:
        return 6
    if count <= 127:
        return 7
    return 8


def path_hash(branches: Sequence[BranchEvent], outcome: int) -> int:
    """The path id of one transaction's branches (see the module docstring)."""
    counts: dict[tuple[bytes, int, bool], int] = {}
    get = counts.get
    for code_hash, pc, taken, _, _, _ in branches:
        key = (code_hash, pc, taken)
        counts[key] = get(key, 0) + 1
    return hash((outcome, tuple((key, bucket(n)) for key, n in counts.items())))


@dataclass
class ExecResult:
    """Everything one run of a test case produced (see ``TraceRecorder``)."""

    case: TxSeq
    outcomes: list[TxOutcome]
    path_id: int
    blocks: set[tuple[bytes, int]]
    edges: set[tuple[bytes, int, bool]]
    branches: list[BranchEvent]
    branch_marks: list[int]
    sstores: list[tuple[bytes, int, int]]
    sstore_marks: list[int]
    sloads: list[tuple[int, int, int]]
    panics: list[PanicEvent]
    exec_us: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def tx_branches(self, index: int) -> list[BranchEvent]:
        """The branches of transaction ``index``."""
        marks = self.branch_marks
        end = marks[index + 1] if index + 1 < len(marks) else len(self.branches)
        return self.branches[marks[index]:end]

    @property
    def last_outcome(self) -> TxOutcome:
        """How the last transaction ended."""
        return self.outcomes[-1]


class ContractTarget:
    """Runs test cases on a deployed chain; knows the callable functions by signature."""

    def __init__(self, chain: TestChain, recorder: TraceRecorder | None = None) -> None:
        if chain.main is None:
            raise ValueError("the chain has no main contract")
        self.chain = chain
        self.main: DeployedContract = chain.main
        self.recorder = recorder or TraceRecorder()
        self._functions: dict[tuple[int, str], AbiFunction] = {}
        self._encoders: dict[tuple[int, str], Callable[[Sequence[Any]], bytes]] = {}
        for contract in chain.contracts:
            for fn in contract.functions(include_read_only=True):
                key = (contract.address, fn.signature if fn.kind == "function" else fn.kind)
                self._functions[key] = fn
                if fn.kind == "function":
                    self._encoders[key] = encoder_for(fn)

    def function(self, signature: str, to: int | None = None) -> AbiFunction:
        """The ABI function ``signature`` of contract ``to`` (default: the main one)."""
        return self._functions[(self.main.address if to is None else to, signature)]

    def calldata(self, signature: str, args: Sequence[Any], to: int | None = None) -> bytes:
        """The calldata of a call (empty for fallback/receive)."""
        encoder = self._encoders.get((self.main.address if to is None else to, signature))
        return encoder(args) if encoder is not None else b""

    def run(self, case: TxSeq, overrides_last: bool = True) -> ExecResult:
        """Run ``case`` from the post-deployment state and return what it did.

        A transaction the chain rejects (for instance a value above the sender's balance)
        counts as failed and changes nothing. ``Tx.storage`` overrides apply to the called
        contract's reads (only on the last transaction unless ``overrides_last`` is False).
        """
        chain = self.chain
        recorder = self.recorder
        chain.reset()
        recorder.reset()
        main = self.main.address
        outcomes: list[TxOutcome] = []
        last = len(case) - 1
        for index, tx in enumerate(case):
            to = main if tx.to is None else tx.to
            overrides = (dict(tx.storage) if tx.storage and (index == last or not overrides_last)
                         else None)
            recorder.begin_tx(index, overrides, to if overrides else None)
            if tx.blocks or tx.time:
                chain.advance(tx.blocks, tx.time)
            data = self.calldata(tx.function, tx.args, to)
            try:
                done = chain.transact(tx.sender, to, data, tx.value, inspector=recorder)
            except InvalidTransaction as exc:
                outcomes.append(TxOutcome(False, False, b"", 0, str(exc), invalid=True))
                continue
            outcomes.append(TxOutcome(done.success, done.reverted, done.output,
                                      done.gas_used, done.error))
        marks = recorder.branch_marks
        final = outcomes[-1] if outcomes else TxOutcome(True, False, b"", 0)
        status = 0 if final.success else 1 if final.reverted else 3 if final.invalid else 2
        path = path_hash(recorder.branches[marks[-1]:] if marks else [], status)
        result = ExecResult(case, outcomes, path, recorder.blocks, recorder.edges,
                            recorder.branches, marks, recorder.sstores, recorder.sstore_marks,
                            recorder.sloads, recorder.panics)
        transitions = getattr(recorder, "transitions", None)
        if transitions is not None:
            result.extra["transitions"] = transitions
        return result
