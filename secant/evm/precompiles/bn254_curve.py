"""The BN254 (alt_bn128) groups G1 and G2, and their arithmetic.

G1 is the curve ``y^2 = x^3 + 3`` over Fq; G2 a subgroup of the twist ``y^2 = x^3 + 3 / (9 + i)``
over Fq2.

Points given to and returned by the public functions are affine tuples, ``None`` being the
point at infinity. Internally the arithmetic runs in Jacobian coordinates ``(X, Y, Z)``,
``x = X / Z^2``, ``y = Y / Z^3``, with ``Z = 0`` at infinity, so a scalar multiplication needs
a single inversion.

G1 has prime order ``R`` (cofactor 1), so every point on the curve is in the group. The twist
has order ``R * (2p - R)``; a point on it is in G2 iff ``psi(Q) == [6u^2] Q``, where ``psi`` is
the untwist-Frobenius-twist endomorphism, which acts on G2 as multiplication by
``p = R + 6u^2`` (the BN membership test of El Housni, Guillevic and Piellard, "Co-factor
clearing and subgroup membership testing on pairing-friendly curves", 2022). That test costs a
127-bit scalar multiplication instead of a 254-bit one; since the twist's order is squarefree,
checking one point of each prime order dividing the cofactor shows it exact (see the tests).
"""

from __future__ import annotations

from secant.evm.precompiles.bn254_field import (
    GAMMA1,
    GAMMA2,
    Fq2,
    P,
    R,
    fq2_add,
    fq2_conj,
    fq2_inv,
    fq2_mul,
    fq2_sqr,
)

U = 4965661367192848881
"""The BN parameter of the curve: ``p = 36u^4 + 36u^3 + 24u^2 + 6u + 1``."""

B1 = 3
B2: Fq2 = fq2_mul((3, 0), fq2_inv((9, 1)))
"""The ``b`` coefficient of the twist, ``3 / (9 + i)``."""

G1Point = tuple[int, int]
G2Point = tuple[Fq2, Fq2]
_Jac1 = tuple[int, int, int]
_Jac2 = tuple[int, int, int, int, int, int]  # (X, Y, Z) over Fq2, flattened

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
_PSI_X, _PSI_Y = GAMMA1[2], GAMMA1[3]
_PSI2_X, _PSI2_Y = GAMMA2[2], GAMMA2[3]

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
    """Return ``2 pt`` (Jacobian over Fq2, a = 0; written out on the coordinates' ints).

    ``A = X^2, B = Y^2, C = B^2, D = 2((X + B)^2 - A - C), E = 3A``:
    ``2 pt = (E^2 - 2D, E (D - X3) - 8C, 2YZ)``.
    """
    x0, x1, y0, y1, z0, z1 = pt
    if not (z0 or z1):
        return pt
    a0 = (x0 + x1) * (x0 - x1) % P
    a1 = 2 * x0 * x1 % P
    b0 = (y0 + y1) * (y0 - y1) % P
    b1 = 2 * y0 * y1 % P
    c0 = (b0 + b1) * (b0 - b1) % P
    c1 = 2 * b0 * b1 % P
    s0 = x0 + b0
    s1 = x1 + b1
    d0 = 2 * ((s0 + s1) * (s0 - s1) - a0 - c0) % P
    d1 = 2 * (2 * s0 * s1 - a1 - c1) % P
    e0 = 3 * a0
    e1 = 3 * a1
    x30 = ((e0 + e1) * (e0 - e1) - 2 * d0) % P
    x31 = (2 * e0 * e1 - 2 * d1) % P
    t0 = d0 - x30
    t1 = d1 - x31
    return (
        x30,
        x31,
        (e0 * t0 - e1 * t1 - 8 * c0) % P,
        (e0 * t1 + e1 * t0 - 8 * c1) % P,
        2 * (y0 * z0 - y1 * z1) % P,
        2 * (y0 * z1 + y1 * z0) % P,
    )


def _g2_add_affine(pt: _Jac2, x2: Fq2, y2: Fq2) -> _Jac2:
    """Return ``pt + (x2, y2)`` for a Jacobian ``pt`` and a finite affine point.

    ``ZZ = Z^2, H = x2 ZZ - X, r = 2(y2 Z ZZ - Y), I = 4H^2, J = H I, V = X I``:
    ``sum = (r^2 - J - 2V, r (V - X3) - 2 Y J, (Z + H)^2 - ZZ - H^2)``.
    """
    x0, x1, y0, y1, z0, z1 = pt
    if not (z0 or z1):
        return x2[0], x2[1], y2[0], y2[1], 1, 0
    u0, u1 = x2
    w0, w1 = y2
    zz0 = (z0 + z1) * (z0 - z1) % P
    zz1 = 2 * z0 * z1 % P
    h0 = (u0 * zz0 - u1 * zz1 - x0) % P
    h1 = (u0 * zz1 + u1 * zz0 - x1) % P
    zzz0 = (z0 * zz0 - z1 * zz1) % P  # Z^3
    zzz1 = (z0 * zz1 + z1 * zz0) % P
    r0 = 2 * (w0 * zzz0 - w1 * zzz1 - y0) % P
    r1 = 2 * (w0 * zzz1 + w1 * zzz0 - y1) % P
    if not (h0 or h1):
        if r0 or r1:
            return (1, 0, 1, 0, 0, 0)  # pt = -(x2, y2)
        return _g2_double(pt)
    hh0 = (h0 + h1) * (h0 - h1) % P
    hh1 = 2 * h0 * h1 % P
    i0, i1 = 4 * hh0, 4 * hh1
    j0 = (h0 * i0 - h1 * i1) % P
    j1 = (h0 * i1 + h1 * i0) % P
    v0 = (x0 * i0 - x1 * i1) % P
    v1 = (x0 * i1 + x1 * i0) % P
    x30 = ((r0 + r1) * (r0 - r1) - j0 - 2 * v0) % P
    x31 = (2 * r0 * r1 - j1 - 2 * v1) % P
    t0 = v0 - x30
    t1 = v1 - x31
    s0 = z0 + h0
    s1 = z1 + h1
    return (
        x30,
        x31,
        (r0 * t0 - r1 * t1 - 2 * (y0 * j0 - y1 * j1)) % P,
        (r0 * t1 + r1 * t0 - 2 * (y0 * j1 + y1 * j0)) % P,
        ((s0 + s1) * (s0 - s1) - zz0 - hh0) % P,
        (2 * s0 * s1 - zz1 - hh1) % P,
    )


def _g2_mul_jacobian(point: G2Point, k: int) -> _Jac2:
    """Return ``k * point`` in Jacobian coordinates (``k >= 0``, not reduced)."""
    x, y = point
    neg_y = (-y[0] % P, -y[1] % P)
    acc: _Jac2 = (1, 0, 1, 0, 0, 0)
    for d in naf(k):
        acc = _g2_double(acc)
        if d == 1:
            acc = _g2_add_affine(acc, x, y)
        elif d == -1:
            acc = _g2_add_affine(acc, x, neg_y)
    return acc


def _g2_to_affine(pt: _Jac2) -> G2Point | None:
    """Return the affine form of a Jacobian point."""
    x0, x1, y0, y1, z0, z1 = pt
    if not (z0 or z1):
        return None
    zi = fq2_inv((z0, z1))
    zi2 = fq2_sqr(zi)
    return fq2_mul((x0, x1), zi2), fq2_mul((y0, y1), fq2_mul(zi2, zi))


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
    x0, x1, y0, y1, z0, z1 = _g2_mul_jacobian(point, _SIX_U_SQUARED)
    if not (z0 or z1):
        return False  # [6u^2] Q = O but psi(Q) != O for a finite Q
    px, py = g2_psi(point)
    z = (z0, z1)
    z2 = fq2_sqr(z)
    # Jacobian (x, y, z) equals affine (px, py) iff x = px z^2 and y = py z^3.
    return (x0, x1) == fq2_mul(px, z2) and (y0, y1) == fq2_mul(py, fq2_mul(z2, z))
