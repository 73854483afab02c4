"""Field arithmetic of the BN254 (alt_bn128) pairing: Fq, Fq2, Fq6 and Fq12 on plain ints.

The tower, as in EIP-197::

    Fq2  = Fq[i] / (i^2 + 1)
    Fq6  = Fq2[v] / (v^3 - xi),   xi = 9 + i
    Fq12 = Fq6[w] / (w^2 - v)     (so w^6 = xi)

Elements are tuples of ints in ``[0, P)``: an Fq2 ``a + b*i`` is ``(a, b)``; an Fq6
``c0 + c1*v + c2*v^2`` is the six ints ``(c0.a, c0.b, c1.a, c1.b, c2.a, c2.b)``; an Fq12
``g + h*w`` is the pair of Fq6 ``(g, h)``. In the basis ``1, w, ..., w^5`` over Fq2 the
coefficients are ``g0, h0, g1, h1, g2, h2``.

The hot functions are written out on ints with lazy reduction: products are summed as
unbounded ints and reduced modulo ``P`` once per output coefficient.
"""

from __future__ import annotations

P = 21888242871839275222246405745257275088696311157297823662689037894645226208583
"""The base field modulus."""

R = 21888242871839275222246405745257275088548364400416034343698204186575808495617
"""The order of the groups G1, G2 and GT."""

Fq2 = tuple[int, int]
Fq6 = tuple[int, int, int, int, int, int]
Fq12 = tuple[Fq6, Fq6]

FQ2_ONE: Fq2 = (1, 0)
FQ6_ZERO: Fq6 = (0, 0, 0, 0, 0, 0)
FQ6_ONE: Fq6 = (1, 0, 0, 0, 0, 0)
FQ12_ONE: Fq12 = (FQ6_ONE, FQ6_ZERO)

# ---------------------------------------------------------------------------------------- Fq2


def fq2_add(a: Fq2, b: Fq2) -> Fq2:
    """Return ``a + b``."""
    return ((a[0] + b[0]) % P, (a[1] + b[1]) % P)


def fq2_sub(a: Fq2, b: Fq2) -> Fq2:
    """Return ``a - b``."""
    return ((a[0] - b[0]) % P, (a[1] - b[1]) % P)


def fq2_conj(a: Fq2) -> Fq2:
    """Return the conjugate ``a^p`` of ``a``."""
    return (a[0], -a[1] % P)


def fq2_mul(a: Fq2, b: Fq2) -> Fq2:
    """Return ``a * b``."""
    a0, a1 = a
    b0, b1 = b
    return ((a0 * b0 - a1 * b1) % P, (a0 * b1 + a1 * b0) % P)


def fq2_sqr(a: Fq2) -> Fq2:
    """Return ``a^2``."""
    a0, a1 = a
    return ((a0 + a1) * (a0 - a1) % P, 2 * a0 * a1 % P)


def fq2_mul_xi(a: Fq2) -> Fq2:
    """Return ``a * xi`` with ``xi = 9 + i``."""
    a0, a1 = a
    return ((9 * a0 - a1) % P, (a0 + 9 * a1) % P)


def fq2_inv(a: Fq2) -> Fq2:
    """Return ``1 / a`` (``a`` must not be zero)."""
    a0, a1 = a
    t = pow(a0 * a0 + a1 * a1, -1, P)
    return (a0 * t % P, -a1 * t % P)


def fq2_pow(a: Fq2, e: int) -> Fq2:
    """Return ``a^e`` for ``e >= 0``."""
    result = FQ2_ONE
    while e:
        if e & 1:
            result = fq2_mul(result, a)
        a = fq2_sqr(a)
        e >>= 1
    return result


# ---------------------------------------------------------------------------------------- Fq6


def fq6_add(a: Fq6, b: Fq6) -> Fq6:
    """Return ``a + b``."""
    return (
        (a[0] + b[0]) % P, (a[1] + b[1]) % P, (a[2] + b[2]) % P,
        (a[3] + b[3]) % P, (a[4] + b[4]) % P, (a[5] + b[5]) % P,
    )  # fmt: skip


def fq6_neg(a: Fq6) -> Fq6:
    """Return ``-a``."""
    return (-a[0] % P, -a[1] % P, -a[2] % P, -a[3] % P, -a[4] % P, -a[5] % P)


def fq6_mul(a: Fq6, b: Fq6) -> Fq6:
    """Return ``a * b``."""
    c = _fq6_mul_lazy(a, b)
    return (c[0] % P, c[1] % P, c[2] % P, c[3] % P, c[4] % P, c[5] % P)


def fq6_sqr(a: Fq6) -> Fq6:
    """Return ``a^2``."""
    c = _fq6_sqr_lazy(a)
    return (c[0] % P, c[1] % P, c[2] % P, c[3] % P, c[4] % P, c[5] % P)


def fq6_mul_v(a: Fq6) -> Fq6:
    """Return ``a * v``: ``(c0, c1, c2) -> (xi*c2, c0, c1)``."""
    a0, a1, b0, b1, c0, c1 = a
    return ((9 * c0 - c1) % P, (c0 + 9 * c1) % P, a0, a1, b0, b1)


def fq6_inv(a: Fq6) -> Fq6:
    """Return ``1 / a`` (``a`` must not be zero)."""
    a0, a1, a2 = (a[0], a[1]), (a[2], a[3]), (a[4], a[5])
    t0 = fq2_sub(fq2_sqr(a0), fq2_mul_xi(fq2_mul(a1, a2)))
    t1 = fq2_sub(fq2_mul_xi(fq2_sqr(a2)), fq2_mul(a0, a1))
    t2 = fq2_sub(fq2_sqr(a1), fq2_mul(a0, a2))
    det = fq2_add(fq2_mul(a0, t0), fq2_mul_xi(fq2_add(fq2_mul(a2, t1), fq2_mul(a1, t2))))
    d = fq2_inv(det)
    c0, c1, c2 = fq2_mul(t0, d), fq2_mul(t1, d), fq2_mul(t2, d)
    return (c0[0], c0[1], c1[0], c1[1], c2[0], c2[1])


def _fq6_mul_lazy(x: Fq6, y: Fq6) -> Fq6:
    """Return ``x * y`` with unreduced coefficients (Karatsuba over Fq2).

    With ``v_k = x_k y_k``: ``c0 = v0 + xi ((x1 + x2)(y1 + y2) - v1 - v2)``,
    ``c1 = (x0 + x1)(y0 + y1) - v0 - v1 + xi v2``, ``c2 = (x0 + x2)(y0 + y2) - v0 - v2 + v1``.
    """
    x00, x01, x10, x11, x20, x21 = x
    y00, y01, y10, y11, y20, y21 = y
    v00 = x00 * y00 - x01 * y01
    v01 = x00 * y01 + x01 * y00
    v10 = x10 * y10 - x11 * y11
    v11 = x10 * y11 + x11 * y10
    v20 = x20 * y20 - x21 * y21
    v21 = x20 * y21 + x21 * y20
    a0, a1, b0, b1 = x10 + x20, x11 + x21, y10 + y20, y11 + y21
    t0 = a0 * b0 - a1 * b1 - v10 - v20
    t1 = a0 * b1 + a1 * b0 - v11 - v21
    a0, a1, b0, b1 = x00 + x10, x01 + x11, y00 + y10, y01 + y11
    s0 = a0 * b0 - a1 * b1 - v00 - v10
    s1 = a0 * b1 + a1 * b0 - v01 - v11
    a0, a1, b0, b1 = x00 + x20, x01 + x21, y00 + y20, y01 + y21
    return (
        v00 + 9 * t0 - t1,
        v01 + t0 + 9 * t1,
        s0 + 9 * v20 - v21,
        s1 + v20 + 9 * v21,
        a0 * b0 - a1 * b1 - v00 - v20 + v10,
        a0 * b1 + a1 * b0 - v01 - v21 + v11,
    )


def _fq6_sqr_lazy(x: Fq6) -> Fq6:
    """Return ``x^2`` with unreduced coefficients."""
    x00, x01, x10, x11, x20, x21 = x
    sr = 2 * (x10 * x20 - x11 * x21)  # 2*x1*x2
    si = 2 * (x10 * x21 + x11 * x20)
    tr = (x20 + x21) * (x20 - x21)  # x2^2
    ti = 2 * x20 * x21
    return (
        (x00 + x01) * (x00 - x01) + 9 * sr - si,
        2 * x00 * x01 + sr + 9 * si,
        2 * (x00 * x10 - x01 * x11) + 9 * tr - ti,
        2 * (x00 * x11 + x01 * x10) + tr + 9 * ti,
        (x10 + x11) * (x10 - x11) + 2 * (x00 * x20 - x01 * x21),
        2 * x10 * x11 + 2 * (x00 * x21 + x01 * x20),
    )


# --------------------------------------------------------------------------------------- Fq12


def fq12_mul(a: Fq12, b: Fq12) -> Fq12:
    """Return ``a * b`` (Karatsuba over Fq6)."""
    ag, ah = a
    bg, bh = b
    t0 = _fq6_mul_lazy(ag, bg)
    t1 = _fq6_mul_lazy(ah, bh)
    t2 = _fq6_mul_lazy(
        (ag[0] + ah[0], ag[1] + ah[1], ag[2] + ah[2], ag[3] + ah[3], ag[4] + ah[4], ag[5] + ah[5]),
        (bg[0] + bh[0], bg[1] + bh[1], bg[2] + bh[2], bg[3] + bh[3], bg[4] + bh[4], bg[5] + bh[5]),
    )
    # g = t0 + t1*v, h = t2 - t0 - t1
    return (
        (
            (t0[0] + 9 * t1[4] - t1[5]) % P,
            (t0[1] + t1[4] + 9 * t1[5]) % P,
            (t0[2] + t1[0]) % P,
            (t0[3] + t1[1]) % P,
            (t0[4] + t1[2]) % P,
            (t0[5] + t1[3]) % P,
        ),
        (
            (t2[0] - t0[0] - t1[0]) % P,
            (t2[1] - t0[1] - t1[1]) % P,
            (t2[2] - t0[2] - t1[2]) % P,
            (t2[3] - t0[3] - t1[3]) % P,
            (t2[4] - t0[4] - t1[4]) % P,
            (t2[5] - t0[5] - t1[5]) % P,
        ),
    )


def fq12_sqr(a: Fq12) -> Fq12:
    """Return ``a^2``: ``(g + h w)^2 = (g^2 + h^2 v) + 2gh w``."""
    g, h = a
    t0 = _fq6_sqr_lazy(g)
    t1 = _fq6_sqr_lazy(h)
    t2 = _fq6_mul_lazy(g, h)
    return (
        (
            (t0[0] + 9 * t1[4] - t1[5]) % P,
            (t0[1] + t1[4] + 9 * t1[5]) % P,
            (t0[2] + t1[0]) % P,
            (t0[3] + t1[1]) % P,
            (t0[4] + t1[2]) % P,
            (t0[5] + t1[3]) % P,
        ),
        (
            2 * t2[0] % P, 2 * t2[1] % P, 2 * t2[2] % P,
            2 * t2[3] % P, 2 * t2[4] % P, 2 * t2[5] % P,
        ),
    )  # fmt: skip


def fq12_mul_line(f: Fq12, c0: Fq2, c1: Fq2, c3: Fq2) -> Fq12:
    """Return ``f * (c0 + c1 w + c3 w^3)``, the product with a sparse line value.

    In the tower the line is ``L_g + L_h w`` with ``L_g = c0`` and ``L_h = c1 + c3 v``, so the
    product is ``(f_g c0 + f_h L_h v) + (f_h c0 + f_g L_h) w``.
    """
    (g00, g01, g10, g11, g20, g21), (h00, h01, h10, h11, h20, h21) = f
    a0, a1 = c0
    b0, b1 = c1
    d0, d1 = c3
    # f_h * L_h = (h0 b + xi h2 d, h0 d + h1 b, h1 d + h2 b); then times v.
    # f_g * L_h = (g0 b + xi g2 d, g0 d + g1 b, g1 d + g2 b).
    xr = h10 * d0 - h11 * d1 + h20 * b0 - h21 * b1  # h1 d + h2 b (wraps into g0 through xi)
    xi_ = h10 * d1 + h11 * d0 + h20 * b1 + h21 * b0
    yr = h20 * d0 - h21 * d1  # h2 d (wraps into g1 through xi)
    yi = h20 * d1 + h21 * d0
    zr = g20 * d0 - g21 * d1  # g2 d (wraps into h0 through xi)
    zi = g20 * d1 + g21 * d0
    return (
        (
            (g00 * a0 - g01 * a1 + 9 * xr - xi_) % P,
            (g00 * a1 + g01 * a0 + xr + 9 * xi_) % P,
            (g10 * a0 - g11 * a1 + h00 * b0 - h01 * b1 + 9 * yr - yi) % P,
            (g10 * a1 + g11 * a0 + h00 * b1 + h01 * b0 + yr + 9 * yi) % P,
            (g20 * a0 - g21 * a1 + h00 * d0 - h01 * d1 + h10 * b0 - h11 * b1) % P,
            (g20 * a1 + g21 * a0 + h00 * d1 + h01 * d0 + h10 * b1 + h11 * b0) % P,
        ),
        (
            (h00 * a0 - h01 * a1 + g00 * b0 - g01 * b1 + 9 * zr - zi) % P,
            (h00 * a1 + h01 * a0 + g00 * b1 + g01 * b0 + zr + 9 * zi) % P,
            (h10 * a0 - h11 * a1 + g00 * d0 - g01 * d1 + g10 * b0 - g11 * b1) % P,
            (h10 * a1 + h11 * a0 + g00 * d1 + g01 * d0 + g10 * b1 + g11 * b0) % P,
            (h20 * a0 - h21 * a1 + g10 * d0 - g11 * d1 + g20 * b0 - g21 * b1) % P,
            (h20 * a1 + h21 * a0 + g10 * d1 + g11 * d0 + g20 * b1 + g21 * b0) % P,
        ),
    )


def fq12_conj(a: Fq12) -> Fq12:
    """Return ``a^(p^6)``: ``g + h w -> g - h w`` (the inverse in the cyclotomic subgroup)."""
    return (a[0], fq6_neg(a[1]))


def fq12_inv(a: Fq12) -> Fq12:
    """Return ``1 / a``: ``(g + h w)^-1 = (g - h w) / (g^2 - h^2 v)``."""
    g, h = a
    d = fq6_inv(fq6_add(fq6_sqr(g), fq6_neg(fq6_mul_v(fq6_sqr(h)))))
    return (fq6_mul(g, d), fq6_neg(fq6_mul(h, d)))


def fq12_pow(a: Fq12, e: int) -> Fq12:
    """Return ``a^e`` for ``e >= 0`` (plain square-and-multiply)."""
    result = FQ12_ONE
    for bit in bin(e)[2:]:
        result = fq12_sqr(result)
        if bit == "1":
            result = fq12_mul(result, a)
    return result


def fq12_cyclotomic_sqr(a: Fq12) -> Fq12:
    """Return ``a^2`` for ``a`` in the cyclotomic subgroup (Granger-Scott squaring).

    Seen over ``Fq4 = Fq2[s] / (s^2 - xi)`` with ``s = w^3`` and ``t = w``, ``a = A + B t + C t^2``
    with ``A = g0 + h1 s``, ``B = h0 + g2 s``, ``C = g1 + h2 s``; then
    ``a^2 = (3A^2 - 2 conj(A)) + (3 s C^2 + 2 conj(B)) t + (3 B^2 - 2 conj(C)) t^2``.
    """
    (g00, g01, g10, g11, g20, g21), (h00, h01, h10, h11, h20, h21) = a
    # A^2 = (g0^2 + xi h1^2) + 2 g0 h1 s, and likewise for B = (h0, g2), C = (g1, h2).
    ar, ai, asr, asi = _fq4_sqr(g00, g01, h10, h11)
    br, bi, bsr, bsi = _fq4_sqr(h00, h01, g20, g21)
    cr, ci, csr, csi = _fq4_sqr(g10, g11, h20, h21)
    # s * C^2 = xi * (C^2)_s + (C^2)_0 s
    scr, sci = 9 * csr - csi, csr + 9 * csi
    return (
        (
            (3 * ar - 2 * g00) % P,
            (3 * ai - 2 * g01) % P,
            (3 * br - 2 * g10) % P,
            (3 * bi - 2 * g11) % P,
            (3 * cr - 2 * g20) % P,
            (3 * ci - 2 * g21) % P,
        ),
        (
            (3 * scr + 2 * h00) % P,
            (3 * sci + 2 * h01) % P,
            (3 * asr + 2 * h10) % P,
            (3 * asi + 2 * h11) % P,
            (3 * bsr + 2 * h20) % P,
            (3 * bsi + 2 * h21) % P,
        ),
    )


def _fq4_sqr(x0: int, x1: int, y0: int, y1: int) -> tuple[int, int, int, int]:
    """Return ``(x + y s)^2 = (x^2 + xi y^2) + 2xy s`` for ``x = x0 + x1 i``, ``y = y0 + y1 i``.

    The result is unreduced: ``(real, imag)`` of the constant term, then of the ``s`` term.
    """
    tr = (y0 + y1) * (y0 - y1)  # y^2
    ti = 2 * y0 * y1
    return (
        (x0 + x1) * (x0 - x1) + 9 * tr - ti,
        2 * x0 * x1 + tr + 9 * ti,
        2 * (x0 * y0 - x1 * y1),
        2 * (x0 * y1 + x1 * y0),
    )


# ---------------------------------------------------------------------------------- Frobenius


def _powers(base: Fq2) -> tuple[Fq2, ...]:
    """Return ``base^k`` for ``k = 0..5``."""
    powers = [FQ2_ONE]
    for _ in range(5):
        powers.append(fq2_mul(powers[-1], base))
    return tuple(powers)


# GAMMA_n[k] = xi^(k (p^n - 1) / 6), so that (w^k)^(p^n) = GAMMA_n[k] w^k. With
# g = xi^((p - 1) / 6): xi^((p^2 - 1) / 6) = g^(p + 1) = g conj(g), and
# xi^((p^3 - 1) / 6) = g^(p^2 + p + 1) = g conj(g) g, as g^(p^2) = g in Fq2.
_G = fq2_pow((9, 1), (P - 1) // 6)
GAMMA1 = _powers(_G)
GAMMA2 = _powers(fq2_mul(_G, fq2_conj(_G)))
GAMMA3 = _powers(fq2_mul(fq2_mul(_G, fq2_conj(_G)), _G))


def _frobenius(a: Fq12, gamma: tuple[Fq2, ...], conjugate: bool) -> Fq12:
    """Apply ``c_k w^k -> c_k' gamma_k w^k`` (``c_k'`` conjugated for odd powers of p)."""
    (g00, g01, g10, g11, g20, g21), (h00, h01, h10, h11, h20, h21) = a
    if conjugate:
        g01, g11, g21, h01, h11, h21 = -g01, -g11, -g21, -h01, -h11, -h21
    coefficients = ((g00, g01), (h00, h01), (g10, g11), (h10, h11), (g20, g21), (h20, h21))
    out = [fq2_mul(c, k) for c, k in zip(coefficients, gamma)]
    return (
        (out[0][0], out[0][1], out[2][0], out[2][1], out[4][0], out[4][1]),
        (out[1][0], out[1][1], out[3][0], out[3][1], out[5][0], out[5][1]),
    )


def fq12_frobenius(a: Fq12) -> Fq12:
    """Return ``a^p``."""
    return _frobenius(a, GAMMA1, True)


def fq12_frobenius2(a: Fq12) -> Fq12:
    """Return ``a^(p^2)``."""
    return _frobenius(a, GAMMA2, False)


def fq12_frobenius3(a: Fq12) -> Fq12:
    """Return ``a^(p^3)``."""
    return _frobenius(a, GAMMA3, True)
