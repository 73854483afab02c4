"""The loop's prediction material: which comparisons a seed keeps for input-to-state."""

from __future__ import annotations

from secant.engine.config import FuzzConfig
from secant.engine.fuzzer import Fuzzer
from secant.engine.policy import Policy, Proposal
from secant.types import BranchEvent, RunResult, Tx, TxOutcome

CODE = b"\x01" * 32


class _Idle(Policy):
    def propose(self) -> Proposal | None:
        return None


def test_a_seed_keeps_the_first_and_last_comparisons_its_last_step_ran() -> None:
    fuzzer = Fuzzer(lambda case: RunResult(case, [], 0), _Idle(), FuzzConfig(seed=0))
    # A dispatcher's selector tests come first (their other sides never covered), the
    # comparison the run stopped short of last; one side of pc 3 is covered already.
    dispatch: list[BranchEvent] = [(CODE, pc, False, "eq", 0xA9059CBB, 0x1000 + pc)
                                   for pc in range(100, 140)]
    deep: list[BranchEvent] = [(CODE, 3, True, "lt", 5, 9), (CODE, 7, False, "eq", 11, 500)]
    fuzzer.coverage.edges.add((CODE, 3, False))
    tx = Tx("f()", (), 1)
    result = RunResult((tx,), [TxOutcome(True, False, b"", 0)], 1,
                       branches=dispatch + deep, branch_marks=[0])
    kept = fuzzer.missed_comparisons(result, limit=8)
    # The first four and the last four that qualify, in the order they ran: the deep one
    # is kept, and pc 3 is not (its other side is covered).
    selector = [(0xA9059CBB, 0x1000 + pc, "eq") for pc in range(100, 140)]
    assert kept == (*selector[:4], *selector[-3:], (11, 500, "eq"))
    assert len(fuzzer.missed_comparisons(result, limit=64)) == 41  # all, within the limit
