"""Built-in observers: coverage, comparisons, storage, calls and block-value reads.

Each records plain tuples into lists or sets so a run stays cheap; ``Recorder`` combines them
into one inspector for the fuzzer. Observers are reset between test cases with ``reset()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from secant.evm.analysis import analyze
from secant.evm.inspector import Inspector

if TYPE_CHECKING:
    from secant.evm.forks import Fork
    from secant.evm.frame import Frame


class Branch(NamedTuple):
    """One executed JUMPI: ``taken`` iff ``lhs <relation> rhs`` (see ``costs.flip_cost``)."""

    code_hash: bytes
    address: int
    pc: int
    taken: bool
    relation: str
    lhs: int
    rhs: int
    depth: int


class StorageAccess(NamedTuple):
    """An SLOAD (``old`` is None) or SSTORE of ``slot`` in ``address``'s storage."""

    address: int
    pc: int
    slot: int
    old: int | None
    value: int


@dataclass(frozen=True)
class CallRecord:
    """A message: CALL/CALLCODE/DELEGATECALL/STATICCALL/CREATE/CREATE2 (kind = opcode)."""

    kind: int
    sender: int
    target: int
    code_address: int
    value: int
    gas: int
    data: bytes
    depth: int
    success: bool | None = None
    output: bytes = b""
    error: str | None = None
    reverted: bool = False


class CoverageObserver(Inspector):
    """Instruction coverage per code hash (via basic blocks) and branch edges."""

    def __init__(self) -> None:
        self.blocks: set[tuple[bytes, int]] = set()
        self.edges: set[tuple[bytes, int, bool]] = set()

    def reset(self) -> None:
        """Forget everything recorded."""
        self.blocks.clear()
        self.edges.clear()

    def on_block(self, frame: Frame, pc: int) -> None:
        """Record the block."""
        self.blocks.add((frame.code_hash, pc))

    def on_branch(
        self, frame: Frame, pc: int, taken: bool, relation: str, lhs: int, rhs: int
    ) -> None:
        """Record the edge."""
        self.edges.add((frame.code_hash, pc, taken))

    def instructions(self, codes: dict[bytes, bytes], fork: Fork) -> dict[bytes, set[int]]:
        """Covered instruction pcs per code hash (``codes`` maps hash to bytecode)."""
        covered: dict[bytes, set[int]] = {}
        pcs_cache: dict[bytes, dict[int, tuple[int, ...]]] = {}
        for code_hash, start in self.blocks:
            code = codes.get(code_hash)
            if code is None:
                continue
            pcs = pcs_cache.get(code_hash)
            if pcs is None:
                pcs = pcs_cache[code_hash] = analyze(code, code_hash, fork).block_pcs()
            covered.setdefault(code_hash, set()).update(pcs.get(start, ()))
        return covered


class ComparisonObserver(Inspector):
    """Every JUMPI with the operands of the comparison that decided it, in order."""

    def __init__(self) -> None:
        self.branches: list[Branch] = []

    def reset(self) -> None:
        """Forget everything recorded."""
        self.branches.clear()

    def on_branch(
        self, frame: Frame, pc: int, taken: bool, relation: str, lhs: int, rhs: int
    ) -> None:
        """Record the branch."""
        self.branches.append(
            Branch(frame.code_hash, frame.address, pc, taken, relation, lhs, rhs, frame.depth)
        )


class StorageObserver(Inspector):
    """Every SSTORE (with old and new value) and SLOAD, in order."""

    def __init__(self) -> None:
        self.accesses: list[StorageAccess] = []

    def reset(self) -> None:
        """Forget everything recorded."""
        self.accesses.clear()

    def on_sload(self, frame: Frame, pc: int, slot: int, value: int) -> int:
        """Record the read."""
        self.accesses.append(StorageAccess(frame.address, pc, slot, None, value))
        return value

    def on_sstore(self, frame: Frame, pc: int, slot: int, old: int, new: int) -> None:
        """Record the write."""
        self.accesses.append(StorageAccess(frame.address, pc, slot, old, new))

    @property
    def writes(self) -> list[StorageAccess]:
        """The SSTOREs only."""
        return [a for a in self.accesses if a.old is not None]


class CallObserver(Inspector):
    """Every message with its outcome, reverts and invalids with their depth, self-destructs."""

    def __init__(self) -> None:
        self.calls: list[CallRecord] = []
        self.selfdestructs: list[tuple[int, int, int]] = []
        self._open: list[int] = []

    def reset(self) -> None:
        """Forget everything recorded."""
        self.calls.clear()
        self.selfdestructs.clear()
        self._open.clear()

    def on_message_start(
        self, kind: int, sender: int, target: int, code_address: int, value: int, gas: int,
        data: bytes, depth: int, is_static: bool,
    ) -> None:
        """Open a record."""
        self._open.append(len(self.calls))
        self.calls.append(CallRecord(kind, sender, target, code_address, value, gas, data, depth))

    def on_message_end(
        self, kind: int, target: int, depth: int, success: bool, reverted: bool, output: bytes,
        gas_left: int, error: str | None, frame: Frame | None,
    ) -> None:
        """Close the innermost open record."""
        if not self._open:
            return
        index = self._open.pop()
        old = self.calls[index]
        self.calls[index] = CallRecord(
            old.kind, old.sender, old.target, old.code_address, old.value, old.gas, old.data,
            old.depth, success, output, error, reverted,
        )

    def on_selfdestruct(self, frame: Frame, beneficiary: int, balance: int) -> None:
        """Record (contract, beneficiary, balance)."""
        self.selfdestructs.append((frame.address, beneficiary, balance))


class BlockValueObserver(Inspector):
    """Reads of TIMESTAMP, NUMBER, COINBASE, PREVRANDAO, GASLIMIT, BASEFEE, BLOCKHASH, ..."""

    def __init__(self) -> None:
        self.reads: list[tuple[int, int, int, int]] = []

    def reset(self) -> None:
        """Forget everything recorded."""
        self.reads.clear()

    def on_block_value(self, frame: Frame, pc: int, opcode: int, value: int) -> None:
        """Record (address, pc, opcode, value)."""
        self.reads.append((frame.address, pc, opcode, value))
