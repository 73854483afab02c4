"""Harvey's branch-distance cost functions (Harvey §4.3, after Korel's branch distance).

``C_eq(l, r)`` is the cost of making a *holding* ``l == r`` false; ``C_not_eq(l, r)`` the cost
of making ``l == r`` true; likewise for ``<`` and ``<=``. A cost is zero exactly when the
condition already has the wanted outcome, so minimising a cost flips its branch.

Signed relations compare two's-complement values: operands are converted to Python ints in
[-2**255, 2**255) before the arithmetic, so the distance is the true numeric distance.
"""

from __future__ import annotations

SIGN = 1 << 255
MOD = 1 << 256


def to_signed(x: int) -> int:
    """Interpret a 256-bit word as two's complement."""
    return x - MOD if x & SIGN else x


def c_eq(l: int, r: int) -> int:
    """Cost to make ``l == r`` false: 1 if it holds, else 0."""
    return 1 if l == r else 0


def c_not_eq(l: int, r: int) -> int:
    """Cost to make ``l == r`` true: ``|l - r|``."""
    return abs(l - r)


def c_lt(l: int, r: int) -> int:
    """Cost to make ``l < r`` false: ``r - l`` while it holds."""
    return r - l if l < r else 0


def c_not_lt(l: int, r: int) -> int:
    """Cost to make ``l < r`` true: ``l - r + 1`` while it fails."""
    return 0 if l < r else l - r + 1


def c_le(l: int, r: int) -> int:
    """Cost to make ``l <= r`` false: ``r - l + 1`` while it holds."""
    return r - l + 1 if l <= r else 0


def c_not_le(l: int, r: int) -> int:
    """Cost to make ``l <= r`` true: ``l - r`` while it fails."""
    return 0 if l <= r else l - r


# relation -> (cost to make it true, cost to make it false), on unsigned/normalised operands.
_COSTS = {
    "eq": (c_not_eq, c_eq),
    "ne": (c_eq, c_not_eq),
    "lt": (c_not_lt, c_lt),
    "ge": (c_lt, c_not_lt),  # l >= r holds exactly when l < r fails
    "le": (c_not_le, c_le),
}
_SIGNED = {"slt": "lt", "sge": "ge", "sgt": "gt", "sle": "le"}


def relation_cost(relation: str, lhs: int, rhs: int, want: bool) -> int:
    """Cost of making ``lhs <relation> rhs`` evaluate to ``want``.

    ``relation`` is one of eq, ne, lt, ge, gt, le and the signed slt, sge, sgt, sle (as
    reported by ``Inspector.on_branch``).
    """
    unsigned = _SIGNED.get(relation)
    if unsigned is not None:
        lhs, rhs, relation = to_signed(lhs), to_signed(rhs), unsigned
    if relation == "gt":  # l > r is r < l
        lhs, rhs, relation = rhs, lhs, "lt"
    make_true, make_false = _COSTS[relation]
    return make_true(lhs, rhs) if want else make_false(lhs, rhs)


def flip_cost(relation: str, lhs: int, rhs: int, taken: bool) -> int:
    """Cost of flipping a branch that went ``taken``: make the relation ``not taken``.

    ``relation_cost(relation, lhs, rhs, not taken)`` written out, since the fuzzer asks it
    for every just-missed branch of every run: the common relations first, no table.
    """
    if relation[0] == "s":  # slt, sge, sgt, sle: the same on the two's-complement values
        lhs = lhs - MOD if lhs & SIGN else lhs
        rhs = rhs - MOD if rhs & SIGN else rhs
        relation = relation[1:]
    if relation == "ne":  # the branch went ``lhs != rhs == taken``
        if taken:
            return abs(lhs - rhs)  # make them equal
        return 1 if lhs == rhs else 0
    if relation == "eq":
        if taken:
            return 1 if lhs == rhs else 0  # make them differ
        return abs(lhs - rhs)
    if relation == "gt":  # l > r is r < l
        lhs, rhs, relation = rhs, lhs, "lt"
    if relation == "lt":
        if taken:
            return rhs - lhs if lhs < rhs else 0  # make l < r false
        return 0 if lhs < rhs else lhs - rhs + 1
    if relation == "ge":  # l >= r is not l < r
        if taken:
            return 0 if lhs < rhs else lhs - rhs + 1  # make l < r true
        return rhs - lhs if lhs < rhs else 0
    if relation == "le":
        if taken:
            return rhs - lhs + 1 if lhs <= rhs else 0  # make l <= r false
        return 0 if lhs <= rhs else lhs - rhs
    raise KeyError(relation)
