"""The BN254 (alt_bn128) groups G1 and G2, and their arithmetic.

G1 is the curve ``y^2 = x^3 + 3`` over Fq; G2 a subgroup of the twist ``y^2 = x^3 + 3 / (9 + i)``
over Fq2.

Points given to and returned by the public functions are affine tuples, ``None`` being the
point at infinity. Internally the arithmetic runs in Jacobian coordinates ``(X, Y, Z)``,
``x = X / Z^2``, ``y = Y / Z^3``, with ``Z = 0`` at infinity, so a scalar multiplication needs
a single inversion.

G1 has prime order ``R`` (cofactor 1), so every point on the curve is in the group. The twist
has a large cofactor; a point on it is in G2 iff ``psi(Q) == [6u^2] Q``, where ``psi`` is the
untwist-Frobenius-twist endomorphism (El Housni, Guillevic, Piellard, "Co-factor clearing and
subgroup membership testing on pairing-friendly curves", 2022), since ``p = r + 6u^2``.
"""

from __future__ import annotations

from secant.evm.precompiles.bn254_field import (
    FQ2_ONE,
    FQ2_ZERO,
    Fq2,
    P,
    R,
    fq2_add,
    fq2_conj,
    fq2_inv,
    fq2_mul,
    fq2_pow,
    fq2_scale,
    fq2_sqr,
    fq2_sub,
)

U = 4965661367192848881
"""The BN parameter of the curve: ``p = 36u^4 + 36u^3 + 24u^2 + 6u + 1``."""

B1 = 3
B2: Fq2 = fq2_mul((3, 0), fq2_inv((9, 1)))
"""The ``b`` coefficient of the twist, ``3 / (9 + i)``."""

G1Point = tuple[int, int]
G2Point = tuple[Fq2, Fq2]
_Jac1 = tuple[int, int, int]
_Jac2 = tuple[Fq2, Fq2, Fq2]

G1_GENERATOR: G1Point = (1, 2)
G2_GENERATOR: G2Point = (
    (
        10857046999023057135944570762232829481370756359578518086990519993285655852781,
        11559732032986387107991004021392285783925812861821192530917403151452391805634,
    ),
    (
        8495653923123431417604973247489272438418190587263600148770280649306958101930,
        4082367875863433681332203403145435568316851327593401208105741076214120093531,
    ),
)

# psi(x, y) = (conj(x) * xi^((p-1)/3), conj(y) * xi^((p-1)/2)); psi^2 likewise with p^2.
_PSI_X = fq2_pow((9, 1), (P - 1) // 3)
_PSI_Y = fq2_pow((9, 1), (P - 1) // 2)
_PSI2_X = fq2_pow((9, 1), (P * P - 1) // 3)
_PSI2_Y = fq2_pow((9, 1), (P * P - 1) // 2)

# --------------------------------------------------------------------------------------- G1


def g1_is_on_curve(point: G1Point) -> bool:
    """Return whether affine ``point`` satisfies ``y^2 = x^3 + 3`` (coordinates below P)."""
    x, y = point
    return (y * y - x * x * x - B1) % P == 0


def g1_neg(point: G1Point | None) -> G1Point | None:
    """Return ``-point``."""
    return None if point is None else (point[0], -point[1] % P)


def _g1_double(pt: _Jac1) -> _Jac1:
    """Return ``2 pt`` (Jacobian, a = 0)."""
    x, y, z = pt
    if not z:
        return pt
    a = x * x % P
    b = y * y % P
    c = b * b % P
    d = 2 * ((x + b) * (x + b) - a - c) % P
    e = 3 * a
    x3 = (e * e - 2 * d) % P
    return x3, (e * (d - x3) - 8 * c) % P, 2 * y * z % P


def _g1_add_affine(pt: _Jac1, x2: int, y2: int) -> _Jac1:
    """Return ``pt + (x2, y2)`` for a Jacobian ``pt`` and a finite affine point."""
    x1, y1, z1 = pt
    if not z1:
        return x2, y2, 1
    zz = z1 * z1 % P
    h = (x2 * zz - x1) % P
    rr = 2 * (y2 * z1 * zz - y1) % P
    if not h:
        return _g1_double(pt) if not rr else (1, 1, 0)
    hh = h * h % P
    i = 4 * hh % P
    j = h * i % P
    v = x1 * i % P
    x3 = (rr * rr - j - 2 * v) % P
    y3 = (rr * (v - x3) - 2 * y1 * j) % P
    z3 = ((z1 + h) * (z1 + h) - zz - hh) % P
    return x3, y3, z3


def _g1_to_affine(pt: _Jac1) -> G1Point | None:
    """Return the affine form of a Jacobian point."""
    x, y, z = pt
    if not z:
        return None
    zi = pow(z, -1, P)
    zi2 = zi * zi % P
    return x * zi2 % P, y * zi2 * zi % P


def g1_add(a: G1Point | None, b: G1Point | None) -> G1Point | None:
    """Return ``a + b``."""
    if a is None:
        return b
    if b is None:
        return a
    return _g1_to_affine(_g1_add_affine((a[0], a[1], 1), b[0], b[1]))


def naf(k: int) -> list[int]:
    """Return the non-adjacent form of ``k >= 0``, most significant digit first."""
    digits = []
    while k:
        if k & 1:
            d = 2 - (k & 3)
            k -= d
        else:
            d = 0
        digits.append(d)
        k >>= 1
    return digits[::-1]


def g1_mul(point: G1Point | None, k: int) -> G1Point | None:
    """Return ``k * point`` (``k`` any non-negative integer; it is reduced modulo R)."""
    k %= R
    if point is None or not k:
        return None
    x, y = point
    neg_y = -y % P
    acc: _Jac1 = (1, 1, 0)
    for d in naf(k):
        acc = _g1_double(acc)
        if d == 1:
            acc = _g1_add_affine(acc, x, y)
        elif d == -1:
            acc = _g1_add_affine(acc, x, neg_y)
    return _g1_to_affine(acc)


# --------------------------------------------------------------------------------------- G2


def g2_is_on_curve(point: G2Point) -> bool:
    """Return whether affine ``point`` satisfies ``y^2 = x^3 + 3 / (9 + i)``."""
    x, y = point
    return fq2_sqr(y) == fq2_add(fq2_mul(fq2_sqr(x), x), B2)


def g2_neg(point: G2Point) -> G2Point:
    """Return ``-point``."""
    return point[0], (-point[1][0] % P, -point[1][1] % P)


def g2_psi(point: G2Point) -> G2Point:
    """Return ``psi(point)``, the Frobenius endomorphism seen on the twist."""
    return fq2_mul(fq2_conj(point[0]), _PSI_X), fq2_mul(fq2_conj(point[1]), _PSI_Y)


def g2_psi2(point: G2Point) -> G2Point:
    """Return ``psi(psi(point))``."""
    return fq2_mul(point[0], _PSI2_X), fq2_mul(point[1], _PSI2_Y)


def _g2_double(pt: _Jac2) -> _Jac2:
    """Return ``2 pt`` (Jacobian over Fq2, a = 0)."""
    x, y, z = pt
    if z == FQ2_ZERO:
        return pt
    a = fq2_sqr(x)
    b = fq2_sqr(y)
    c = fq2_sqr(b)
    xb = fq2_add(x, b)
    d = fq2_scale(fq2_sub(fq2_sub(fq2_sqr(xb), a), c), 2)
    e = fq2_scale(a, 3)
    x3 = fq2_sub(fq2_sqr(e), fq2_scale(d, 2))
    y3 = fq2_sub(fq2_mul(e, fq2_sub(d, x3)), fq2_scale(c, 8))
    return x3, y3, fq2_scale(fq2_mul(y, z), 2)


def _g2_add_affine(pt: _Jac2, x2: Fq2, y2: Fq2) -> _Jac2:
    """Return ``pt + (x2, y2)`` for a Jacobian ``pt`` and a finite affine point."""
    x1, y1, z1 = pt
    if z1 == FQ2_ZERO:
        return x2, y2, FQ2_ONE
    zz = fq2_sqr(z1)
    h = fq2_sub(fq2_mul(x2, zz), x1)
    rr = fq2_scale(fq2_sub(fq2_mul(y2, fq2_mul(z1, zz)), y1), 2)
    if h == FQ2_ZERO:
        return _g2_double(pt) if rr == FQ2_ZERO else (FQ2_ONE, FQ2_ONE, FQ2_ZERO)
    hh = fq2_sqr(h)
    i = fq2_scale(hh, 4)
    j = fq2_mul(h, i)
    v = fq2_mul(x1, i)
    x3 = fq2_sub(fq2_sub(fq2_sqr(rr), j), fq2_scale(v, 2))
    y3 = fq2_sub(fq2_mul(rr, fq2_sub(v, x3)), fq2_scale(fq2_mul(y1, j), 2))
    zh = fq2_add(z1, h)
    z3 = fq2_sub(fq2_sub(fq2_sqr(zh), zz), hh)
    return x3, y3, z3


def _g2_mul_jacobian(point: G2Point, k: int) -> _Jac2:
    """Return ``k * point`` in Jacobian coordinates (``k >= 0``, not reduced)."""
    x, y = point
    neg_y = (-y[0] % P, -y[1] % P)
    acc: _Jac2 = (FQ2_ONE, FQ2_ONE, FQ2_ZERO)
    for d in naf(k):
        acc = _g2_double(acc)
        if d == 1:
            acc = _g2_add_affine(acc, x, y)
        elif d == -1:
            acc = _g2_add_affine(acc, x, neg_y)
    return acc


def _g2_to_affine(pt: _Jac2) -> G2Point | None:
    """Return the affine form of a Jacobian point."""
    x, y, z = pt
    if z == FQ2_ZERO:
        return None
    zi = fq2_inv(z)
    zi2 = fq2_sqr(zi)
    return fq2_mul(x, zi2), fq2_mul(y, fq2_mul(zi2, zi))


def g2_mul(point: G2Point | None, k: int) -> G2Point | None:
    """Return ``k * point`` for ``k >= 0`` (not reduced: usable on points outside G2)."""
    if point is None or not k:
        return None
    return _g2_to_affine(_g2_mul_jacobian(point, k))


_SIX_U_SQUARED = 6 * U * U


def g2_in_subgroup(point: G2Point | None) -> bool:
    """Return whether ``point`` (on the twist) is in G2, the subgroup of order R."""
    if point is None:
        return True
    x, y, z = _g2_mul_jacobian(point, _SIX_U_SQUARED)
    if z == FQ2_ZERO:
        return False  # [6u^2] Q = O but psi(Q) != O for a finite Q
    px, py = g2_psi(point)
    z2 = fq2_sqr(z)
    # Jacobian (x, y, z) equals affine (px, py) iff x = px z^2 and y = py z^3.
    return x == fq2_mul(px, z2) and y == fq2_mul(py, fq2_mul(z2, z))
