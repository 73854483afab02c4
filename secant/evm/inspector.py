"""Inspectors: observers attached to an EVM run.

An ``Evm`` without an inspector runs the plain dispatch tables: no hook, no check, no cost.
With one, it runs the traced tables (see ``analysis.py``), which call the hooks below. Hooks
receive the live ``Frame``; they must not mutate it.

Relations in ``on_branch``: the JUMPI condition is non-zero exactly when
``lhs <relation> rhs``, relation in eq, ne, lt, ge, gt, le (unsigned) and slt, sge, sgt, sle
(two's complement). When no comparison was found the relation is "ne" with rhs 0.

Recording without hooks. The fuzzer's recorder is told of every basic block and every JUMPI
of every execution, and a Python call each costs more than most blocks do. An inspector that
sets ``branch_log`` to a list gets them without calls (the *recorded* tables): every JUMPI
appends ``(code_hash, pc, taken, relation, lhs, rhs)`` to that list, every frame collects
the starts of the blocks it runs, in order, in ``frame.trail`` (read it in
``on_message_end``), and ``on_block``/``on_branch`` are not called. ``block_hooks`` names,
per code hash, the block starts at whose entry ``on_hooked_block`` is still called with the
live frame (a recording that evaluates a few blocks from their entry stack); every variant
of the tables honours it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from secant.evm.frame import Frame
    from secant.types import BranchEvent


class Inspector:
    """Base class with no-op hooks; override what you need."""

    #: Set to True to receive ``on_step`` before every instruction (slower dispatch tables).
    wants_steps = False

    #: A list to append every JUMPI to instead of calling ``on_branch`` (and to hand over
    #: block trails instead of calling ``on_block``); see the module docstring. Read when an
    #: ``Evm`` is made (once per transaction), so the list may be replaced between them.
    branch_log: list[BranchEvent] | None = None

    #: Code hash -> block starts at whose entry ``on_hooked_block`` is called (None: none).
    block_hooks: Mapping[bytes, frozenset[int]] | None = None

    def on_message_start(
        self, kind: int, sender: int, target: int, code_address: int, value: int, gas: int,
        data: bytes, depth: int, is_static: bool,
    ) -> None:
        """A message (call or create; kind is its opcode, CALL for a transaction's call)."""

    def on_message_end(
        self, kind: int, target: int, depth: int, success: bool, reverted: bool, output: bytes,
        gas_left: int, error: str | None, frame: Frame | None,
    ) -> None:
        """A message ended (``frame`` is None for precompiles and code-less accounts)."""

    def on_block(self, frame: Frame, pc: int) -> None:
        """Execution entered the basic block starting at ``pc``."""

    def on_hooked_block(self, frame: Frame, pc: int) -> None:
        """Execution is entering the block at ``pc``, which ``block_hooks`` names."""

    def on_branch(
        self, frame: Frame, pc: int, taken: bool, relation: str, lhs: int, rhs: int
    ) -> None:
        """A JUMPI at ``pc`` decided ``taken`` because ``lhs <relation> rhs`` held or not."""

    def on_sload(self, frame: Frame, pc: int, slot: int, value: int) -> int:
        """SLOAD of ``slot`` read ``value``; the returned value is what the program sees.

        Returning something other than ``value`` overrides the read without touching the
        state (Harvey's aggressive mode fuzzes the persistent state this way).
        """
        return value

    def on_sstore(self, frame: Frame, pc: int, slot: int, old: int, new: int) -> None:
        """SSTORE wrote ``new`` over ``old`` at ``slot`` (of ``frame.address``)."""

    def on_log(self, frame: Frame, pc: int, topics: tuple[int, ...], data: bytes) -> None:
        """A LOG instruction emitted an event."""

    def on_selfdestruct(self, frame: Frame, beneficiary: int, balance: int) -> None:
        """SELFDESTRUCT sends ``balance`` to ``beneficiary``."""

    def on_block_value(self, frame: Frame, pc: int, opcode: int, value: int) -> None:
        """A block-information opcode (TIMESTAMP, NUMBER, ...) produced ``value``."""

    def on_step(self, frame: Frame, pc: int, opcode: int, stack: list[int]) -> None:
        """Before every instruction (only when ``wants_steps``)."""

