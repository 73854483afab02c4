"""Branch sides that only refuse the transaction, on hand-written code of each shape."""

from __future__ import annotations

from secant.evm.cfg import ControlFlowGraph
from secant.evm.refusals import refuses
from tests.evm.asm import asm

REPORTED = frozenset({0x01})

# pc 0: PUSH1 0 CALLDATALOAD PUSH1 0x0a JUMPI      a require: fall through into the revert
# pc 6: PUSH1 0 DUP1 REVERT
# pc 10: JUMPDEST STOP
REQUIRE = asm("PUSH1 0 CALLDATALOAD PUSH1 0x0a JUMPI PUSH1 0 DUP1 REVERT JUMPDEST STOP")


def test_a_failing_require_refuses_and_the_side_that_passes_does_not() -> None:
    graph = ControlFlowGraph.from_code(REQUIRE)
    assert refuses(graph, 5, False, REPORTED)
    assert not refuses(graph, 5, True, REPORTED)


def panic(code: int) -> bytes:
    """A checked operation: on the side not taken a jump to a shared Panic(code) routine.

    pc 0: PUSH1 0 CALLDATALOAD PUSH1 9 JUMPI; pc 6: PUSH1 11 JUMP; pc 9: JUMPDEST STOP;
    pc 11: the routine, which stores the selector and the code and reverts 0x24 bytes.
    """
    return asm("PUSH1 0 CALLDATALOAD PUSH1 9 JUMPI PUSH1 11 JUMP JUMPDEST STOP "
               "JUMPDEST PUSH4 0x4e487b71 PUSH1 0xe0 SHL PUSH1 0 MSTORE "
               f"PUSH1 {code} PUSH1 4 MSTORE PUSH1 0x24 PUSH1 0 REVERT")


def test_a_panic_refuses_unless_its_code_is_reported() -> None:
    overflow = ControlFlowGraph.from_code(panic(0x11))
    assert refuses(overflow, 5, False, REPORTED)
    assert not refuses(overflow, 5, False, REPORTED | {0x11})
    failed_assert = ControlFlowGraph.from_code(panic(0x01))
    assert not refuses(failed_assert, 5, False, REPORTED)


def test_a_helper_called_on_the_way_is_followed_through_its_return() -> None:
    # pc 6: PUSH1 13 PUSH1 11 JUMP (call the helper at 11, return to 13); pc 11: JUMPDEST
    # JUMP (the helper returns at once); pc 13: JUMPDEST PUSH1 0 DUP1 REVERT; then the
    # passing side at 18.
    code = asm("PUSH1 0 CALLDATALOAD PUSH1 18 JUMPI PUSH1 13 PUSH1 11 JUMP JUMPDEST JUMP "
               "JUMPDEST PUSH1 0 DUP1 REVERT JUMPDEST STOP")
    graph = ControlFlowGraph.from_code(code)
    assert refuses(graph, 5, False, REPORTED)


def test_a_side_that_logs_writes_branches_or_jumps_to_a_computed_target_is_kept() -> None:
    # The same require shape, with something in front of the revert.
    for before in ("PUSH1 0 DUP1 LOG0",                      # an event (AssertionFailed)
                   "PUSH1 1 PUSH1 0 SSTORE",                 # a write
                   "PUSH1 0 CALLDATALOAD PUSH1 0 JUMPI",      # another branch
                   "PUSH1 0 CALLDATALOAD JUMP"):              # a jump nobody can follow
        body = asm(before + " PUSH1 0 DUP1 REVERT")
        passing = 6 + len(body)
        code = (asm(f"PUSH1 0 CALLDATALOAD PUSH1 {passing} JUMPI") + body
                + asm("JUMPDEST STOP"))
        graph = ControlFlowGraph.from_code(code)
        assert not refuses(graph, 5, False, REPORTED), before
        assert not refuses(graph, 5, True, REPORTED), before


def test_a_pc_that_is_no_jumpi_refuses_nothing() -> None:
    graph = ControlFlowGraph.from_code(REQUIRE)
    assert not refuses(graph, 2, False, REPORTED)
