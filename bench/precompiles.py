"""Benchmark: the precompiled contracts, and secant's BN254 pairing against py_ecc's.

Usage: ``.venv/bin/python bench/precompiles.py [--repeat 5] [--skip-py-ecc]``

Prints the median wall time of one call of each precompile on a typical input. For the
pairing check of two pairs (the usual Groth16-style ``e(A, B) * e(-C, D) == 1``) it also times
py_ecc (a test-only dependency) doing what the execution specs do: per pair, the G2 subgroup
check ``[r] Q == O`` and a full pairing, then a product compared with 1; and py_ecc's bare
two pairings without the checks.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from secant.evm.precompiles import precompile_table
from secant.evm.precompiles.bn254_curve import G1_GENERATOR, G2_GENERATOR, g1_mul, g1_neg, g2_mul


def word(n: int) -> bytes:
    return n.to_bytes(32, "big")


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Return the median seconds of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pairing_input() -> tuple[bytes, list[tuple[object, object]]]:
    """Return ``e(aG1, bG2) * e(-abG1, G2) == 1`` as precompile input and as affine points."""
    a, b = 0x1234567890ABCDEF, 0xFEDCBA0987654321
    p1, q1 = g1_mul(G1_GENERATOR, a), g2_mul(G2_GENERATOR, b)
    p2, q2 = g1_neg(g1_mul(G1_GENERATOR, a * b)), G2_GENERATOR
    data = b""
    for p, q in ((p1, q1), (p2, q2)):
        assert p is not None and q is not None
        (x0, x1), (y0, y1) = q
        data += word(p[0]) + word(p[1]) + word(x1) + word(x0) + word(y1) + word(y0)
    return data, [(p1, q1), (p2, q2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-py-ecc", action="store_true")
    args = parser.parse_args()
    table = precompile_table("osaka")
    rows: list[tuple[str, float]] = []

    def bench(name: str, address: int, data: bytes) -> None:
        fn = table[address]
        fn(data, 10**9)  # warm up (and check it succeeds)
        rows.append((name, timed(lambda: fn(data, 10**9), args.repeat)))

    pair_data, pairs = pairing_input()
    assert table[8](pair_data, 10**9)[1] == word(1)
    g = word(1) + word(2)
    bench("ecrecover", 0x01, bytes.fromhex(
        "456e9aea5e197a1f1af7a3e85a3212fa4049a3ba34c2289b4c860fc0b0c64ef3") + word(28)
        + word(0x9242685BF161793CC25603C231BC2F568EB630EA16AA137D2664AC8038825608)
        + word(0x4F8AE3BD7535248D0BD448298CC2E2071E56992D0774DC340C368AE950852ADA))  # fmt: skip
    bench("sha256 (1 KiB)", 0x02, bytes(1024))
    bench("modexp (256-byte RSA, e = 65537)", 0x05,
          word(256) + word(3) + word(256) + b"\x07" * 256 + b"\x01\x00\x01" + b"\xfb" * 256)
    bench("ecadd", 0x06, g + word(1) + word(2))
    bench("ecmul (256-bit scalar)", 0x07, g + word(2**256 - 1))
    bench("ecpairing (2 pairs, with G2 checks)", 0x08, pair_data)
    bench("blake2f (12 rounds)", 0x09, (12).to_bytes(4, "big") + bytes(208) + b"\x01")
    bench("blake2f (10000 rounds)", 0x09, (10000).to_bytes(4, "big") + bytes(208) + b"\x01")
    p256 = bytes.fromhex(
        "4cee90eb86eaa050036147a12d49004b6b9c72bd725d39d4785011fe190f0b4d"
        "a73bd4903f0ce3b639bbbf6e8e80d16931ff4bcf5993d58468e8fb19086e8cac"
        "36dbcd03009df8c59286b162af3bd7fcc0450c9aa81be5d10d312af6c66b1d60"
        "4aebd3099c618202fcfe16ae7770b0c49ab5eadf74b754204a3bb6060e44eff3"
        "7618b065f9832de4ca6ca971a7a1adc826d0f7c00181a5fb2ddf79ae00b4e10e"
    )
    bench("p256verify", 0x100, p256)
    try:
        from secant.evm.precompiles import point_evaluation as pe

        start = time.perf_counter()
        pe.kzg_settings()
        rows.append(("kzg trusted setup load (once)", time.perf_counter() - start))
        infinity = b"\xc0" + bytes(47)
        bench("point evaluation", 0x0A, pe.kzg_to_versioned_hash(infinity) + word(5) + word(0)
              + infinity + infinity)  # fmt: skip
    except ImportError:
        pass

    if not args.skip_py_ecc:
        from py_ecc import optimized_bn128 as ref

        ref_pairs = [
            ((ref.FQ(p[0]), ref.FQ(p[1]), ref.FQ(1)),  # type: ignore[index]
             (ref.FQ2(list(q[0])), ref.FQ2(list(q[1])), ref.FQ2.one()))  # type: ignore[index]
            for p, q in pairs
        ]  # fmt: skip

        def spec_style() -> bool:
            result = ref.FQ12.one()
            for p, q in ref_pairs:
                assert ref.is_inf(ref.multiply(q, ref.curve_order))
                result *= ref.pairing(q, p)
            return bool(result == ref.FQ12.one())

        def bare() -> object:
            return [ref.pairing(q, p) for p, q in ref_pairs]

        assert spec_style()
        repeat = max(1, min(args.repeat, 3))
        rows.append(("py_ecc: 2 pairings + G2 checks (spec style)", timed(spec_style, repeat)))
        rows.append(("py_ecc: 2 bare pairings", timed(bare, repeat)))

    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds * 1000:10.3f} ms")


if __name__ == "__main__":
    main()
