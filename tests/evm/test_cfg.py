"""Control-flow graph recovery from bytecode and AFLGo distances."""

from __future__ import annotations

import pytest

from secant.evm.cfg import ControlFlowGraph
from tests.evm.asm import asm

# pc 0: PUSH1 0 CALLDATALOAD PUSH1 0x0a JUMPI          -> block 0 (JUMPI diamond)
# pc 6: PUSH1 0x0d JUMP                                 -> block 6 (else: to 0x0d)
# pc 9: INVALID                                          -> block 9 (unreachable filler)
# pc a: JUMPDEST PUSH1 0 STOP ... (0x0a is the then side)
DIAMOND = asm("PUSH1 0 CALLDATALOAD PUSH1 0x0a JUMPI PUSH1 0x0e JUMP INVALID "
              "JUMPDEST PUSH1 0 POP JUMPDEST STOP")


def test_jumpi_diamond_has_both_successors() -> None:
    g = ControlFlowGraph.from_code(DIAMOND)
    assert g.starts == [0, 6, 9, 10, 14]
    assert g.successors[0] == {6, 10}
    assert g.successors[6] == {14}
    assert g.successors[10] == {14}  # fall-through into the next JUMPDEST
    assert g.successors[14] == set()
    assert g.block_of(12) == 10


# An internal call: the caller pushes its return address (0x0b), jumps to the subroutine
# at 0x0d, which jumps back through the stack value.
CALL = asm("PUSH1 0x0b PUSH1 0x0d JUMP INVALID INVALID INVALID INVALID INVALID INVALID "
           "JUMPDEST STOP JUMPDEST PUSH1 1 POP JUMP")


def test_internal_call_gets_call_and_summary_edges_not_return_edges() -> None:
    g = ControlFlowGraph.from_code(CALL)
    assert g.successors[0] == {0x0D, 0x0B}  # call edge and summary edge over the callee
    assert 0x0B in g.continuations
    assert 0x0D in g.unresolved  # the return jumps through the stack
    assert g.successors[0x0D] == set()
    # The run-time return into a known continuation is not added (the summary stands).
    assert not g.add_edge(0x0D, 0x0B)


DYNAMIC = asm("PUSH1 0 CALLDATALOAD JUMP JUMPDEST PUSH1 0x01 POP JUMPDEST STOP")


def test_dynamic_jump_completed_at_run_time_changes_distances() -> None:
    g = ControlFlowGraph.from_code(DYNAMIC)
    assert g.unresolved == {0}
    assert 0 not in g.distances([8])
    assert g.add_edge(0, 4)
    assert not g.add_edge(0, 4)
    distances = g.distances([8])
    assert distances[8] == 0.0
    assert distances[4] == 1.0
    assert distances[0] == 2.0


def test_harmonic_mean_over_targets_and_seed_distance() -> None:
    g = ControlFlowGraph.from_code(DIAMOND)
    # Targets: block 10 (one step from 0) and block 14 (two steps from 0).
    distances = g.distances([10, 14])
    assert distances[10] == 0.0 and distances[14] == 0.0
    assert distances[0] == pytest.approx(1 / (1 / 1 + 1 / 2))
    assert distances[6] == pytest.approx(1.0)  # only 14 is reachable from 6
    assert 9 not in distances  # reaches no target
    assert g.seed_distance([0, 6, 9], distances) == pytest.approx((2 / 3 + 1) / 2)
    assert g.seed_distance([9], distances) is None
