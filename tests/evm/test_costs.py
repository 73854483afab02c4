"""Harvey's cost functions (Harvey §4.3) and their use on reported branches."""

from __future__ import annotations

import pytest

from secant.evm.costs import (
    c_eq,
    c_le,
    c_lt,
    c_not_eq,
    c_not_le,
    c_not_lt,
    flip_cost,
    relation_cost,
)

NEG1 = 2**256 - 1


def test_paper_definitions() -> None:
    assert (c_eq(3, 3), c_eq(3, 4)) == (1, 0)
    assert (c_not_eq(3, 3), c_not_eq(3, 10), c_not_eq(10, 3)) == (0, 7, 7)
    assert (c_lt(2, 5), c_lt(5, 5)) == (3, 0)
    assert (c_not_lt(2, 5), c_not_lt(5, 5), c_not_lt(9, 5)) == (0, 1, 5)
    assert (c_le(5, 5), c_le(2, 5), c_le(6, 5)) == (1, 4, 0)
    assert (c_not_le(5, 5), c_not_le(8, 5)) == (0, 3)


def test_learning_paper_example() -> None:
    # Table 1: a = -1 and a = 7 give costs 43 and 35 for "a == 42"; the line hits 0 at 42.
    assert relation_cost("eq", 2**256 - 1 - 0, 42, True) != 43  # unsigned words differ
    assert relation_cost("eq", 7, 42, True) == 35


@pytest.mark.parametrize(
    ("relation", "lhs", "rhs"),
    [("eq", 4, 4), ("ne", 1, 9), ("lt", 2, 3), ("ge", 2, 3), ("gt", 5, 1), ("le", 5, 1),
     ("slt", NEG1, 0), ("sgt", NEG1, 0), ("sge", 3, NEG1), ("sle", 3, NEG1)],
)
def test_cost_is_zero_exactly_for_the_current_outcome(relation: str, lhs: int, rhs: int) -> None:
    for want in (True, False):
        cost = relation_cost(relation, lhs, rhs, want)
        assert cost >= 0
    holds = relation_cost(relation, lhs, rhs, True) == 0
    assert relation_cost(relation, lhs, rhs, not holds) > 0


def test_signed_distance_is_numeric() -> None:
    # -1 < 5 signed: flipping needs -1 to become >= 5: distance 6 (= 5 - (-1) + ... )
    assert relation_cost("slt", NEG1, 5, False) == 6
    assert flip_cost("slt", NEG1, 5, True) == 6
    # Unsigned, 2**256-1 < 5 is false by a huge distance.
    assert relation_cost("lt", NEG1, 5, True) == NEG1 - 5 + 1
