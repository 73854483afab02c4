"""BN254 precompiles (ECADD, ECMUL, ECPAIRING) and their arithmetic, cross-checked with py_ecc."""

from __future__ import annotations

import random

import pytest
from py_ecc import optimized_bn128 as ref
from py_ecc.fields import optimized_bn128_FQ12 as RefFQ12

from secant.evm.precompiles import PrecompileFailure
from secant.evm.precompiles.bn254 import (
    ECADD_GAS,
    ECMUL_GAS,
    decode_g2,
    ecadd,
    ecmul,
    ecpairing,
    encode_g1,
)
from secant.evm.precompiles.bn254_curve import (
    B2,
    G1_GENERATOR,
    G2_GENERATOR,
    G2Point,
    g1_add,
    g1_mul,
    g1_neg,
    g2_in_subgroup,
    g2_is_on_curve,
    g2_mul,
    g2_neg,
    g2_psi,
)
from secant.evm.precompiles.bn254_field import (
    FQ12_ONE,
    GAMMA1,
    GAMMA2,
    GAMMA3,
    Fq2,
    Fq12,
    P,
    R,
    fq2_add,
    fq2_mul,
    fq2_pow,
    fq2_sqr,
    fq12_conj,
    fq12_cyclotomic_sqr,
    fq12_frobenius,
    fq12_frobenius2,
    fq12_frobenius3,
    fq12_inv,
    fq12_mul,
    fq12_mul_line,
    fq12_pow,
    fq12_sqr,
)
from secant.evm.precompiles.bn254_pairing import final_exponentiation, miller_loop, pairing

GAS = 10_000_000
ONE = (1).to_bytes(32, "big")
ZERO = bytes(32)

# ------------------------------------------------------------------------------- helpers


def word(n: int) -> bytes:
    return n.to_bytes(32, "big")


def g1_bytes(point: tuple[int, int] | None) -> bytes:
    return encode_g1(point)


def g2_bytes(point: G2Point | None) -> bytes:
    if point is None:
        return bytes(128)
    (x0, x1), (y0, y1) = point
    return word(x1) + word(x0) + word(y1) + word(y0)


def to_ref_g1(point: tuple[int, int] | None) -> tuple[ref.FQ, ref.FQ, ref.FQ]:
    if point is None:
        return ref.Z1
    return (ref.FQ(point[0]), ref.FQ(point[1]), ref.FQ(1))


def from_ref_g1(point: tuple[ref.FQ, ref.FQ, ref.FQ]) -> tuple[int, int] | None:
    if ref.is_inf(point):
        return None
    x, y = ref.normalize(point)
    return (int(x), int(y))


def to_ref_g2(point: G2Point) -> tuple[ref.FQ2, ref.FQ2, ref.FQ2]:
    (x0, x1), (y0, y1) = point
    return (ref.FQ2([x0, x1]), ref.FQ2([y0, y1]), ref.FQ2.one())


def to_ref_fq12(a: Fq12) -> RefFQ12:
    """Map ``sum c_k w^k`` (c_k in Fq2, i = w^6 - 9) to py_ecc's Fq[w] / (w^12 - 18 w^6 + 82)."""
    g, h = a
    coefficients = [(g[0], g[1]), (h[0], h[1]), (g[2], g[3]), (h[2], h[3]), (g[4], g[5]),
                    (h[4], h[5])]  # fmt: skip
    out = [0] * 12
    for k, (re, im) in enumerate(coefficients):
        out[k] = (re - 9 * im) % P
        out[k + 6] = im
    return RefFQ12(out)


def random_fq12(rng: random.Random) -> Fq12:
    return (
        tuple(rng.randrange(P) for _ in range(6)),  # type: ignore[return-value]
        tuple(rng.randrange(P) for _ in range(6)),
    )


def fq2_sqrt(a: Fq2) -> Fq2 | None:
    """Square root in Fq2 for p = 3 mod 4 (Adj and Rodriguez-Henriquez, algorithm 9)."""
    a1 = fq2_pow(a, (P - 3) // 4)
    alpha = fq2_mul(fq2_sqr(a1), a)
    norm = fq2_mul(fq2_pow(alpha, P), alpha)
    if norm == (P - 1, 0):
        return None
    x0 = fq2_mul(a1, a)
    if alpha == (P - 1, 0):
        x = fq2_mul((0, 1), x0)
    else:
        x = fq2_mul(fq2_pow(fq2_add((1, 0), alpha), (P - 1) // 2), x0)
    return x if fq2_sqr(x) == a else None


def random_twist_point(rng: random.Random) -> G2Point:
    """A random point on the twist curve, almost surely outside G2."""
    while True:
        x = (rng.randrange(P), rng.randrange(P))
        y = fq2_sqrt(fq2_add(fq2_mul(fq2_sqr(x), x), B2))
        if y is not None:
            return (x, y)


def random_g1(rng: random.Random) -> tuple[int, int]:
    point = g1_mul(G1_GENERATOR, rng.randrange(1, R))
    assert point is not None
    return point


def random_g2(rng: random.Random) -> G2Point:
    point = g2_mul(G2_GENERATOR, rng.randrange(1, R))
    assert point is not None
    return point


# ----------------------------------------------------------------------------- field tower


def test_fq12_arithmetic_matches_py_ecc() -> None:
    rng = random.Random(1)
    for _ in range(10):
        a, b = random_fq12(rng), random_fq12(rng)
        ra, rb = to_ref_fq12(a), to_ref_fq12(b)
        assert to_ref_fq12(fq12_mul(a, b)) == ra * rb
        assert to_ref_fq12(fq12_sqr(a)) == ra * ra
        assert to_ref_fq12(fq12_inv(a)) == ra.inv()
        assert to_ref_fq12(fq12_frobenius(a)) == ra**P
    a = random_fq12(rng)
    assert fq12_frobenius2(a) == fq12_frobenius(fq12_frobenius(a))
    assert fq12_frobenius3(a) == fq12_frobenius(fq12_frobenius2(a))
    assert fq12_conj(a) == fq12_frobenius3(fq12_frobenius3(a))  # a^(p^6)


def test_frobenius_constants() -> None:
    for n, gamma in ((1, GAMMA1), (2, GAMMA2), (3, GAMMA3)):
        for k in range(6):
            assert gamma[k] == fq2_pow((9, 1), k * (P**n - 1) // 6)


def test_sparse_line_product_matches_dense_product() -> None:
    rng = random.Random(2)
    for _ in range(10):
        f = random_fq12(rng)
        c0, c1, c3 = [(rng.randrange(P), rng.randrange(P)) for _ in range(3)]
        dense = ((c0[0], c0[1], 0, 0, 0, 0), (c1[0], c1[1], c3[0], c3[1], 0, 0))
        assert fq12_mul_line(f, c0, c1, c3) == fq12_mul(f, dense)


def test_cyclotomic_squaring() -> None:
    rng = random.Random(3)
    for _ in range(5):
        f = random_fq12(rng)
        f = fq12_mul(fq12_conj(f), fq12_inv(f))  # f^(p^6 - 1)
        f = fq12_mul(fq12_frobenius2(f), f)  # then ^(p^2 + 1): in the cyclotomic subgroup
        assert fq12_cyclotomic_sqr(f) == fq12_sqr(f)


def test_final_exponentiation_is_the_plain_power() -> None:
    f = random_fq12(random.Random(4))
    assert final_exponentiation(f) == fq12_pow(f, (P**12 - 1) // R)


# ------------------------------------------------------------------------------ the groups


def test_g1_arithmetic_matches_py_ecc() -> None:
    rng = random.Random(5)
    for _ in range(5):
        a, b = rng.randrange(R), rng.randrange(R)
        pa = g1_mul(G1_GENERATOR, a)
        pb = g1_mul(G1_GENERATOR, b)
        assert pa == from_ref_g1(ref.multiply(ref.G1, a))
        assert g1_add(pa, pb) == from_ref_g1(ref.add(ref.multiply(ref.G1, a),
                                                     ref.multiply(ref.G1, b)))  # fmt: skip
    point = random_g1(rng)
    assert g1_add(point, point) == g1_mul(point, 2)
    assert g1_add(point, g1_neg(point)) is None
    assert g1_mul(point, R) is None
    assert g1_mul(point, R + 5) == g1_mul(point, 5)


def test_g2_generator_and_multiples() -> None:
    assert g2_is_on_curve(G2_GENERATOR)
    assert g2_mul(G2_GENERATOR, R) is None
    k = 123456789123456789
    mine = g2_mul(G2_GENERATOR, k)
    assert mine is not None
    x, y = ref.normalize(ref.multiply(ref.G2, k))
    assert mine == ((x.coeffs[0], x.coeffs[1]), (y.coeffs[0], y.coeffs[1]))


def test_g2_subgroup_check_agrees_with_multiplying_by_r() -> None:
    rng = random.Random(6)
    for _ in range(4):
        point = random_g2(rng)
        assert g2_in_subgroup(point)
        assert g2_psi(point) == g2_mul(point, P)  # psi acts as p on G2
        outside = random_twist_point(rng)
        assert g2_mul(outside, R) is not None
        assert not g2_in_subgroup(outside)
        # A point of the cofactor part (order dividing 2p - r), alone and added to G2.
        torsion = g2_mul(outside, R)
        assert torsion is not None and g2_mul(torsion, 2 * P - R) is None
        assert not g2_in_subgroup(torsion)
        mixed = _g2_add(point, torsion)
        assert g2_is_on_curve(mixed) and not g2_in_subgroup(mixed)
    assert g2_in_subgroup(None)


# The twist has order R * H2 with H2 = 2p - R squarefree, so its group is cyclic and a point
# passes "psi(Q) == [6u^2] Q" iff each prime-order component does. Checking one point of each
# prime order dividing H2 therefore proves the test exact.
H2_FACTORS = (10069, 5864401, 1875725156269,
              197620364512881247228717050342013327560683201906968909)  # fmt: skip


def test_g2_subgroup_check_rejects_every_cofactor_component() -> None:
    product = 1
    for factor in H2_FACTORS:
        product *= factor
    assert product == 2 * P - R
    rng = random.Random(13)
    for factor in H2_FACTORS:
        torsion = g2_mul(random_twist_point(rng), R * (product // factor))
        assert torsion is not None and g2_mul(torsion, factor) is None  # order exactly `factor`
        assert not g2_in_subgroup(torsion)
        assert not g2_in_subgroup(_g2_add(G2_GENERATOR, torsion))


def _g2_add(a: G2Point, b: G2Point) -> G2Point:
    total = ref.add(to_ref_g2(a), to_ref_g2(b))
    x, y = ref.normalize(total)
    return ((x.coeffs[0], x.coeffs[1]), (y.coeffs[0], y.coeffs[1]))


# -------------------------------------------------------------------------------- pairing


def test_pairing_matches_py_ecc() -> None:
    rng = random.Random(7)
    p = random_g1(rng)
    q = random_g2(rng)
    expected = ref.pairing(to_ref_g2(q), to_ref_g1(p))
    assert to_ref_fq12(pairing(p, q)) == expected


def test_pairing_is_bilinear() -> None:
    rng = random.Random(8)
    a, b = rng.randrange(1, R), rng.randrange(1, R)
    e = pairing(G1_GENERATOR, G2_GENERATOR)
    assert e != FQ12_ONE
    assert pairing(g1_mul(G1_GENERATOR, a), g2_mul(G2_GENERATOR, b)) == fq12_pow(e, a * b % R)
    assert final_exponentiation(miller_loop([])) == FQ12_ONE
    assert pairing(None, G2_GENERATOR) == FQ12_ONE


# ------------------------------------------------------------------------------ ECADD


def test_ecadd_matches_py_ecc() -> None:
    rng = random.Random(9)
    for _ in range(4):
        p, q = random_g1(rng), random_g1(rng)
        expected = ref.add(to_ref_g1(p), to_ref_g1(q))
        assert ecadd(g1_bytes(p) + g1_bytes(q), GAS) == (ECADD_GAS, g1_bytes(from_ref_g1(expected)))


def test_ecadd_special_cases() -> None:
    g = g1_bytes(G1_GENERATOR)
    two_g = g1_bytes(g1_mul(G1_GENERATOR, 2))
    assert ecadd(g + g, GAS)[1] == two_g  # doubling
    assert ecadd(g + g1_bytes(g1_neg(G1_GENERATOR)), GAS)[1] == bytes(64)  # P + (-P)
    assert ecadd(g + bytes(64), GAS)[1] == g  # P + infinity
    assert ecadd(b"", GAS) == (150, bytes(64))  # zero padding: infinity + infinity
    assert ecadd(g, GAS)[1] == g  # the second point padded to infinity
    assert ecadd(g + g + b"\xff" * 100, GAS)[1] == two_g  # extra input ignored
    assert ecadd(g + word(0) + b"\x00", GAS)[1] == g  # (0, 0 padded): infinity
    with pytest.raises(PrecompileFailure):
        ecadd(g + word(1), GAS)  # (1, 0 padded): off the curve


@pytest.mark.parametrize(
    "data",
    [
        word(1) + word(3),  # not on the curve
        word(1) + word(2 + P),  # coordinate not below P (though 2 + P = 2 mod P)
        word(P) + word(0),
        word(0) + word(1),
        word(1) + word(2) + word(1) + word(1),  # second point off the curve
    ],
)
def test_ecadd_rejects_invalid_points(data: bytes) -> None:
    with pytest.raises(PrecompileFailure):
        ecadd(data, GAS)


def test_ecadd_gas() -> None:
    assert ecadd(b"", 150)[0] == 150
    with pytest.raises(PrecompileFailure):
        ecadd(b"", 149)


# ------------------------------------------------------------------------------ ECMUL


@pytest.mark.parametrize("scalar", [0, 1, 2, 3, R - 1, R, R + 1, 2 * R - 1, 2**256 - 1])
def test_ecmul_matches_py_ecc(scalar: int) -> None:
    p = random_g1(random.Random(scalar % 1000))
    expected = from_ref_g1(ref.multiply(to_ref_g1(p), scalar % R))
    assert ecmul(g1_bytes(p) + word(scalar), GAS) == (ECMUL_GAS, g1_bytes(expected))


def test_ecmul_special_cases() -> None:
    g = g1_bytes(G1_GENERATOR)
    assert ecmul(bytes(64) + word(5), GAS)[1] == bytes(64)  # infinity times k
    assert ecmul(g, GAS)[1] == bytes(64)  # scalar padded to 0
    assert ecmul(g + b"\x02", GAS)[1] == g1_bytes(g1_mul(G1_GENERATOR, 2 << 248))  # padded right
    assert ecmul(b"", GAS) == (ECMUL_GAS, bytes(64))
    with pytest.raises(PrecompileFailure):
        ecmul(word(1) + word(3) + word(0), GAS)  # off the curve, even times 0
    with pytest.raises(PrecompileFailure):
        ecmul(g + word(2), ECMUL_GAS - 1)


# -------------------------------------------------------------------------- ECPAIRING


def pair(p: tuple[int, int] | None, q: G2Point | None) -> bytes:
    return g1_bytes(p) + g2_bytes(q)


def test_ecpairing_valid_and_invalid_equations() -> None:
    rng = random.Random(10)
    a, b = rng.randrange(1, R), rng.randrange(1, R)
    pa = g1_mul(G1_GENERATOR, a)
    qb = g2_mul(G2_GENERATOR, b)
    minus_ab = g1_neg(g1_mul(G1_GENERATOR, a * b))
    # e(aG1, bG2) * e(-abG1, G2) == 1
    data = pair(pa, qb) + pair(minus_ab, G2_GENERATOR)
    assert ecpairing(data, GAS) == (45000 + 2 * 34000, ONE)
    wrong = pair(pa, qb) + pair(minus_ab, g2_mul(G2_GENERATOR, 2))
    assert ecpairing(wrong, GAS)[1] == ZERO
    assert ecpairing(pair(G1_GENERATOR, G2_GENERATOR), GAS)[1] == ZERO
    assert ecpairing(pair(G1_GENERATOR, G2_GENERATOR) * 2 + pair(g1_neg(G1_GENERATOR),
                     G2_GENERATOR) * 2, GAS)[1] == ONE  # fmt: skip


def test_ecpairing_check_agrees_with_py_ecc() -> None:
    rng = random.Random(11)
    p1, p2 = random_g1(rng), random_g1(rng)
    q1, q2 = random_g2(rng), random_g2(rng)
    product = ref.pairing(to_ref_g2(q1), to_ref_g1(p1)) * ref.pairing(to_ref_g2(q2), to_ref_g1(p2))
    expected = ONE if product == RefFQ12.one() else ZERO
    assert ecpairing(pair(p1, q1) + pair(p2, q2), GAS)[1] == expected == ZERO


def test_ecpairing_infinity_and_empty() -> None:
    assert ecpairing(b"", GAS) == (45000, ONE)
    assert ecpairing(pair(None, G2_GENERATOR), GAS) == (79000, ONE)
    assert ecpairing(pair(G1_GENERATOR, None), GAS) == (79000, ONE)
    assert ecpairing(pair(G1_GENERATOR, None) + pair(G1_GENERATOR, G2_GENERATOR), GAS)[1] == ZERO


def test_ecpairing_rejects_bad_input() -> None:
    rng = random.Random(12)
    good = pair(G1_GENERATOR, G2_GENERATOR)
    outside = random_twist_point(rng)
    bad_inputs = [
        good[:-1],  # length not a multiple of 192
        good + b"\x00",
        pair(G1_GENERATOR, outside),  # on the twist but not in G2
        pair(G1_GENERATOR, g2_neg(outside)),
        pair(G1_GENERATOR, ((1, 0), (1, 0))),  # not on the twist
        word(1) + word(3) + g2_bytes(G2_GENERATOR),  # G1 point off the curve
        g1_bytes(G1_GENERATOR) + word(P) + g2_bytes(G2_GENERATOR)[32:],  # coordinate >= P
        good + pair(G1_GENERATOR, outside),  # a bad pair after a good one
    ]
    for data in bad_inputs:
        with pytest.raises(PrecompileFailure):
            ecpairing(data, GAS)


def test_g2_encoding_is_imaginary_part_first() -> None:
    (x0, x1), (y0, y1) = G2_GENERATOR
    assert decode_g2(word(x1) + word(x0) + word(y1) + word(y0)) == G2_GENERATOR
    with pytest.raises(PrecompileFailure):
        decode_g2(word(x0) + word(x1) + word(y0) + word(y1))


def test_ecpairing_gas() -> None:
    data = pair(G1_GENERATOR, G2_GENERATOR) + pair(g1_neg(G1_GENERATOR), G2_GENERATOR)
    assert ecpairing(data, 113000) == (113000, ONE)
    with pytest.raises(PrecompileFailure):
        ecpairing(data, 112999)
    with pytest.raises(PrecompileFailure):
        ecpairing(b"", 44999)
