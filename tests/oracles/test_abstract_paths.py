"""The static pre-checks' path walker: both sides of a branch, constant jumps, budgets."""

from __future__ import annotations

from secant.evm.opcodes import ADD, JUMP, JUMPDEST, JUMPI, PUSH1, STOP
from secant.oracles.abstract_paths import follow_paths

# 0: PUSH1 1  2: PUSH1 9  4: JUMPI  5: PUSH1 5  7: ADD  8: STOP  9: JUMPDEST  10: PUSH1 12
# 12: JUMP (to 12: not a JUMPDEST, the path ends)
OPS = {0: (PUSH1, 1), 2: (PUSH1, 9), 4: (JUMPI, 0), 5: (PUSH1, 5), 7: (ADD, 0),
       8: (STOP, 0), 9: (JUMPDEST, 0), 10: (PUSH1, 12), 12: (JUMP, 0)}
JUMPDESTS = frozenset({9})


def walk(steps: int = 100, paths: int = 8, stop_at_branch: bool = False
         ) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []

    def apply(stack: list[int | None], pc: int, op: int, value: int) -> None:
        seen.append((pc, op))
        if op == PUSH1:
            stack.append(value)
        elif op == ADD:
            stack.append(None)

    def decided(pc: int, op: int, dest: int | None, condition: int | None,
                stack: list[int | None]) -> bool:
        seen.append((pc, op))
        return stop_at_branch

    follow_paths(OPS, JUMPDESTS, 0, [], steps, paths, apply, decided)
    return seen


def test_the_jump_is_followed_first_then_the_fall_through() -> None:
    assert [pc for pc, _ in walk()] == [0, 2, 4, 9, 10, 12, 5, 7]


def test_a_decided_branch_ends_its_path_and_budgets_bound_the_walk() -> None:
    assert [pc for pc, _ in walk(stop_at_branch=True)] == [0, 2, 4]
    assert [pc for pc, _ in walk(paths=1)] == [0, 2, 4, 9, 10, 12]
    assert [pc for pc, _ in walk(steps=4)] == [0, 2, 4, 9]
