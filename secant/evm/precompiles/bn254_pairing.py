"""The optimal ate pairing on BN254 and the product-of-pairings check of EIP-197.

``pairing_check`` computes one shared Miller loop over all pairs and a single final
exponentiation, then compares with 1.

Miller loop: the G2 point ``T`` runs in homogeneous projective coordinates on the twist
(``x = X / Z``, ``y = Y / Z``), so there is no inversion. The line through ``T`` (tangent or
chord), mapped to E(Fq12) by ``(x, y) -> (x w^2, y w^3)`` and evaluated at ``P = (xP, yP)``,
is ``c0 + c1 w + c3 w^3`` after scaling by a factor in Fq2 (which the final exponentiation
removes); vertical lines are left out for the same reason. The loop runs over the NAF of
``6u + 2`` and ends with the two lines through ``psi(Q)`` and ``-psi^2(Q)``.

Final exponentiation ``f^((p^12 - 1) / r)``: the easy part ``(p^6 - 1)(p^2 + 1)`` with one
inversion and Frobenius maps; the hard part ``(p^4 - p^2 + 1) / r`` by the addition chain of
Scott et al. ("On the final exponentiation for calculating pairings on ordinary elliptic
curves", 2009) with three exponentiations by ``u`` using cyclotomic squarings.
"""

from __future__ import annotations

from collections.abc import Iterable

from secant.evm.precompiles.bn254_curve import (
    B2,
    G1Point,
    G2Point,
    U,
    g2_neg,
    g2_psi,
    g2_psi2,
    naf,
)
from secant.evm.precompiles.bn254_field import (
    FQ12_ONE,
    Fq2,
    Fq12,
    P,
    fq12_conj,
    fq12_cyclotomic_sqr,
    fq12_frobenius,
    fq12_frobenius2,
    fq12_frobenius3,
    fq12_inv,
    fq12_mul,
    fq12_mul_line,
    fq12_sqr,
)

_ATE_NAF = naf(6 * U + 2)
_U_NAF = naf(U)
_INV2 = (P + 1) // 2
# 3b' for the doubling formula, b' = 3 / (9 + i) the twist coefficient.
_B3 = (3 * B2[0] % P, 3 * B2[1] % P)

_Proj2 = tuple[int, int, int, int, int, int]  # (X, Y, Z) on the twist, flattened
_Line = tuple[Fq2, Fq2, Fq2]


def _double_step(t: _Proj2, xp: int, yp: int) -> tuple[_Proj2, _Line]:
    """Return ``2T`` and the tangent line at ``T`` evaluated at ``(xp, yp)``.

    With ``A = XY/2, B = Y^2, C = Z^2, E = 3b'C, F = 3E, G = (B + F)/2, H = 2YZ``:
    ``2T = (A (B - F), G^2 - 3E^2, B H)`` and the line is ``H yP - 3X^2 xP w + (B - E) w^3``.
    """
    x0, x1, y0, y1, z0, z1 = t
    a0 = (x0 * y0 - x1 * y1) * _INV2 % P  # A = XY / 2
    a1 = (x0 * y1 + x1 * y0) * _INV2 % P
    b0 = (y0 + y1) * (y0 - y1) % P  # B = Y^2
    b1 = 2 * y0 * y1 % P
    c0 = (z0 + z1) * (z0 - z1) % P  # C = Z^2
    c1 = 2 * z0 * z1 % P
    k0, k1 = _B3
    e0 = (k0 * c0 - k1 * c1) % P  # E = 3b' C
    e1 = (k0 * c1 + k1 * c0) % P
    f0, f1 = 3 * e0, 3 * e1  # F = 3E
    g0 = (b0 + f0) * _INV2 % P  # G = (B + F) / 2
    g1 = (b1 + f1) * _INV2 % P
    h0 = 2 * (y0 * z0 - y1 * z1) % P  # H = 2YZ
    h1 = 2 * (y0 * z1 + y1 * z0) % P
    j0 = (x0 + x1) * (x0 - x1)  # J = X^2 (unreduced)
    j1 = 2 * x0 * x1
    bf0, bf1 = b0 - f0, b1 - f1
    ee0 = (e0 + e1) * (e0 - e1)  # E^2 (unreduced)
    ee1 = 2 * e0 * e1
    doubled = (
        (a0 * bf0 - a1 * bf1) % P,
        (a0 * bf1 + a1 * bf0) % P,
        ((g0 + g1) * (g0 - g1) - 3 * ee0) % P,
        (2 * g0 * g1 - 3 * ee1) % P,
        (b0 * h0 - b1 * h1) % P,
        (b0 * h1 + b1 * h0) % P,
    )
    m = -3 * xp
    line = ((h0 * yp % P, h1 * yp % P), (j0 * m % P, j1 * m % P), ((b0 - e0) % P, (b1 - e1) % P))
    return doubled, line


def _add_step(t: _Proj2, q: G2Point, xp: int, yp: int) -> tuple[_Proj2, _Line]:
    """Return ``T + Q`` and the chord through ``T`` and ``Q`` evaluated at ``(xp, yp)``.

    With ``theta = Y - yQ Z`` and ``lam = X - xQ Z``: ``C = theta^2, D = lam^2, E = lam^3,
    F = Z C, G = X D, H = E + F - 2G``; ``T + Q = (lam H, theta (G - H) - Y E, Z E)`` and the
    line is ``lam yP - theta xP w + (theta xQ - lam yQ) w^3``.
    """
    x0, x1, y0, y1, z0, z1 = t
    (qx0, qx1), (qy0, qy1) = q
    th0 = (y0 - qy0 * z0 + qy1 * z1) % P  # theta = Y - yQ Z
    th1 = (y1 - qy0 * z1 - qy1 * z0) % P
    la0 = (x0 - qx0 * z0 + qx1 * z1) % P  # lam = X - xQ Z
    la1 = (x1 - qx0 * z1 - qx1 * z0) % P
    c0 = (th0 + th1) * (th0 - th1) % P  # C = theta^2
    c1 = 2 * th0 * th1 % P
    d0 = (la0 + la1) * (la0 - la1) % P  # D = lam^2
    d1 = 2 * la0 * la1 % P
    e0 = (d0 * la0 - d1 * la1) % P  # E = lam^3
    e1 = (d0 * la1 + d1 * la0) % P
    f0 = z0 * c0 - z1 * c1  # F = Z C (unreduced)
    f1 = z0 * c1 + z1 * c0
    g0 = (x0 * d0 - x1 * d1) % P  # G = X D
    g1 = (x0 * d1 + x1 * d0) % P
    h0 = (e0 + f0 - 2 * g0) % P  # H = E + F - 2G
    h1 = (e1 + f1 - 2 * g1) % P
    gh0, gh1 = g0 - h0, g1 - h1
    added = (
        (la0 * h0 - la1 * h1) % P,
        (la0 * h1 + la1 * h0) % P,
        (th0 * gh0 - th1 * gh1 - (y0 * e0 - y1 * e1)) % P,
        (th0 * gh1 + th1 * gh0 - (y0 * e1 + y1 * e0)) % P,
        (z0 * e0 - z1 * e1) % P,
        (z0 * e1 + z1 * e0) % P,
    )
    line = (
        (la0 * yp % P, la1 * yp % P),
        (-th0 * xp % P, -th1 * xp % P),
        (
            (th0 * qx0 - th1 * qx1 - la0 * qy0 + la1 * qy1) % P,
            (th0 * qx1 + th1 * qx0 - la0 * qy1 - la1 * qy0) % P,
        ),
    )
    return added, line


def miller_loop(pairs: Iterable[tuple[G1Point, G2Point]]) -> Fq12:
    """Return the product of the optimal ate Miller functions ``f_{6u+2, Q}(P)`` of ``pairs``.

    Every ``P`` and ``Q`` must be finite and ``Q`` in G2 (the loop assumes it never meets a
    vertical line).
    """
    items = [(p, q, g2_neg(q)) for p, q in pairs]
    if not items:
        return FQ12_ONE
    ts: list[_Proj2] = [(q[0][0], q[0][1], q[1][0], q[1][1], 1, 0) for _, q, _ in items]
    f = FQ12_ONE
    for i, digit in enumerate(_ATE_NAF[1:]):
        if i:
            f = fq12_sqr(f)
        for n, ((xp, yp), q, neg_q) in enumerate(items):
            ts[n], line = _double_step(ts[n], xp, yp)
            f = fq12_mul_line(f, *line)
            if digit:
                ts[n], line = _add_step(ts[n], q if digit > 0 else neg_q, xp, yp)
                f = fq12_mul_line(f, *line)
    for n, ((xp, yp), q, _) in enumerate(items):
        ts[n], line = _add_step(ts[n], g2_psi(q), xp, yp)
        f = fq12_mul_line(f, *line)
        _, line = _add_step(ts[n], g2_neg(g2_psi2(q)), xp, yp)
        f = fq12_mul_line(f, *line)
    return f


def _cyclotomic_exp_u(a: Fq12) -> Fq12:
    """Return ``a^u`` for ``a`` in the cyclotomic subgroup (inverse = conjugate)."""
    a_inv = fq12_conj(a)
    result = a
    for digit in _U_NAF[1:]:
        result = fq12_cyclotomic_sqr(result)
        if digit > 0:
            result = fq12_mul(result, a)
        elif digit < 0:
            result = fq12_mul(result, a_inv)
    return result


def final_exponentiation(f: Fq12) -> Fq12:
    """Return ``f^((p^12 - 1) / r)`` (``f`` must not be zero)."""
    # Easy part: f^((p^6 - 1)(p^2 + 1)) lands in the cyclotomic subgroup.
    f = fq12_mul(fq12_conj(f), fq12_inv(f))
    f = fq12_mul(fq12_frobenius2(f), f)
    # Hard part: f^((p^4 - p^2 + 1) / r).
    fu = _cyclotomic_exp_u(f)
    fu2 = _cyclotomic_exp_u(fu)
    fu3 = _cyclotomic_exp_u(fu2)
    y0 = fq12_mul(fq12_mul(fq12_frobenius(f), fq12_frobenius2(f)), fq12_frobenius3(f))
    y1 = fq12_conj(f)
    y2 = fq12_frobenius2(fu2)
    y3 = fq12_conj(fq12_frobenius(fu))
    y4 = fq12_conj(fq12_mul(fu, fq12_frobenius(fu2)))
    y5 = fq12_conj(fu2)
    y6 = fq12_conj(fq12_mul(fu3, fq12_frobenius(fu3)))
    t0 = fq12_mul(fq12_mul(fq12_cyclotomic_sqr(y6), y4), y5)
    t1 = fq12_mul(fq12_mul(y3, y5), t0)
    t0 = fq12_mul(t0, y2)
    t1 = fq12_cyclotomic_sqr(fq12_mul(fq12_cyclotomic_sqr(t1), t0))
    t0 = fq12_mul(t1, y1)
    t1 = fq12_mul(t1, y0)
    return fq12_mul(fq12_cyclotomic_sqr(t0), t1)


def pairing(p: G1Point | None, q: G2Point | None) -> Fq12:
    """Return the reduced optimal ate pairing ``e(P, Q)`` (1 if either point is infinity)."""
    if p is None or q is None:
        return FQ12_ONE
    return final_exponentiation(miller_loop([(p, q)]))


def pairing_check(pairs: Iterable[tuple[G1Point | None, G2Point | None]]) -> bool:
    """Return whether the product of ``e(P, Q)`` over ``pairs`` is 1 (Q must be in G2)."""
    finite = [(p, q) for p, q in pairs if p is not None and q is not None]
    if not finite:
        return True
    return final_exponentiation(miller_loop(finite)) == FQ12_ONE
