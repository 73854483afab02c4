"""MODEXP: EIP-198 semantics, EIP-2565 gas, and Osaka's EIP-7823 bounds and EIP-7883 gas."""

from __future__ import annotations

import pytest

from secant.evm.precompiles import PrecompileFailure
from secant.evm.precompiles.modexp import gas_eip2565, gas_eip7883, modexp, modexp_osaka

SECP256K1_P = 2**256 - 2**32 - 977
GAS = 10**12


def word(n: int) -> bytes:
    return n.to_bytes(32, "big")


def encode(base: bytes, exp: bytes, mod: bytes) -> bytes:
    return word(len(base)) + word(len(exp)) + word(len(mod)) + base + exp + mod


def both(data: bytes, gas: int = GAS) -> tuple[tuple[int, bytes], tuple[int, bytes]]:
    return modexp(data, gas), modexp_osaka(data, gas)


def test_eip198_example_fermat() -> None:
    # 3^(p - 1) mod p = 1 for the prime p = 2^256 - 2^32 - 977.
    data = encode(b"\x03", word(SECP256K1_P - 1), word(SECP256K1_P))
    assert both(data) == ((1360, word(1)), (4080, word(1)))


def test_eip198_example_zero_base() -> None:
    data = word(0) + word(32) + word(32) + word(SECP256K1_P - 1) + word(SECP256K1_P)
    assert both(data) == ((1360, word(0)), (4080, word(0)))


@pytest.mark.parametrize(
    ("base_len", "exp", "mod_len", "eip2565", "eip7883"),
    [
        (1, b"\x03", 1, 200, 500),  # minimum prices
        (64, b"\x03", 64, 200, 500),  # 8 words: 64 * 1 // 3 = 21; Osaka 2 * 64 * 1
        (32, bytes(32), 32, 200, 500),  # zero exponent: one iteration
        (32, b"\x80" + bytes(31), 32, 1360, 4080),  # 16 * 255
        (32, bytes(40), 32, 341, 2048),  # zero head, 8 bytes past 32: 8*8 resp. 16*8 iterations
        (512, b"\x80" + bytes(63), 512, 697685, 6283264),  # 4096 * 511 // 3; 8192 * 767
        (33, b"\x01\x00", 1, 200, 500),  # 5 words, 8 iterations: 25 * 8 // 3 = 66; Osaka 2*25*8
        (100, b"\xff" * 33, 100, 14815, 91598),  # 13 words: 169 * (8 + 255) // 3; 338 * (16+255)
    ],
)
def test_gas(base_len: int, exp: bytes, mod_len: int, eip2565: int, eip7883: int) -> None:
    data = encode(b"\x02" * base_len, exp, b"\x07" * mod_len)
    (gas_old, out_old), (gas_new, out_new) = both(data)
    assert (gas_old, gas_new) == (eip2565, eip7883)
    expected = pow(int.from_bytes(b"\x02" * base_len, "big"), int.from_bytes(exp, "big"),
                   int.from_bytes(b"\x07" * mod_len, "big")).to_bytes(mod_len, "big")  # fmt: skip
    assert out_old == out_new == expected


def test_gas_formulas_directly() -> None:
    assert gas_eip2565(0, 0, 0, 0) == 200
    assert gas_eip7883(0, 0, 0, 0) == 500
    # Exponent head bits count for lengths above 32 too.
    assert gas_eip2565(8, 33, 8, 1 << 255) == max(200, 1 * (8 + 255) // 3)
    assert gas_eip7883(64, 33, 8, 1 << 255) == 2 * 8 * 8 * (16 + 255)


def test_exact_gas_and_one_short() -> None:
    data = encode(b"\x03", word(SECP256K1_P - 1), word(SECP256K1_P))
    assert modexp(data, 1360)[0] == 1360
    with pytest.raises(PrecompileFailure):
        modexp(data, 1359)
    assert modexp_osaka(data, 4080)[0] == 4080
    with pytest.raises(PrecompileFailure):
        modexp_osaka(data, 4079)


def test_zero_length_base_and_modulus() -> None:
    # Only the exponent length is huge: no multiplication complexity, so the minimum price.
    data = word(0) + word(2**256 - 1) + word(0)
    assert modexp(data, GAS) == (200, b"")
    with pytest.raises(PrecompileFailure):
        modexp_osaka(data, GAS)  # EIP-7823: exponent length above 1024
    assert both(word(0) + word(1) + word(0) + b"\x05") == ((200, b""), (500, b""))
    assert modexp(b"", 200) == (200, b"")  # all lengths padded to zero


def test_zero_modulus_and_zero_length_modulus() -> None:
    assert both(encode(b"\x05", b"\x03", bytes(4))) == ((200, bytes(4)), (500, bytes(4)))
    assert both(encode(b"\x05", b"\x03", b"")) == ((200, b""), (500, b""))
    assert modexp(encode(b"\x05", b"", b"\x01"), GAS)[1] == b"\x00"  # x^0 mod 1 = 0
    assert modexp(encode(b"", b"", b"\x07"), GAS)[1] == b"\x01"  # 0^0 mod 7 = 1


def test_output_is_left_padded_to_modulus_length() -> None:
    assert modexp(encode(b"\x02", b"\x03", bytes(7) + b"\x64"), GAS)[1] == bytes(7) + b"\x08"


def test_truncated_input_is_zero_padded() -> None:
    header = word(1) + word(1) + word(2)
    assert modexp(header + b"\x02\x03\x05", GAS)[1] == (8).to_bytes(2, "big")  # mod 0x0500
    assert modexp(header + b"\x02\x03", GAS)[1] == bytes(2)  # modulus all padding: zero
    assert modexp(header + b"\x02", GAS)[1] == bytes(2)
    # An exponent head read past the end of the data counts as zeros on the right.
    short_exp = word(1) + word(32) + word(32) + b"\x02\xff"
    assert modexp(short_exp, GAS) == (1360, bytes(32))


def test_exponent_longer_than_32_bytes() -> None:
    exp = (1 << 300) + 12345
    exp_bytes = exp.to_bytes(38, "big")
    data = encode(b"\x07", exp_bytes, word(SECP256K1_P))
    gas, output = modexp(data, GAS)
    assert output == word(pow(7, exp, SECP256K1_P))
    head = int.from_bytes(exp_bytes[:32], "big")
    assert gas == 16 * (8 * 6 + head.bit_length() - 1) // 3


@pytest.mark.parametrize(
    "lengths",
    [(2**256 - 1, 1, 1), (1, 1, 2**256 - 1), (2**255, 0, 0), (1, 2**256 - 1, 1), (0, 2**64, 1)],
)
def test_huge_declared_lengths_with_tiny_data_run_out_of_gas(lengths: tuple[int, ...]) -> None:
    data = b"".join(word(n) for n in lengths) + b"\x01\x02\x03"
    with pytest.raises(PrecompileFailure):
        modexp(data, 2**64)
    with pytest.raises(PrecompileFailure):
        modexp_osaka(data, 2**64)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_osaka_length_bound(index: int) -> None:
    lengths = [1, 1, 1]
    lengths[index] = 1024
    at_bound = b"".join(word(n) for n in lengths)
    modexp_osaka(at_bound, GAS)  # allowed
    lengths[index] = 1025
    above = b"".join(word(n) for n in lengths)
    with pytest.raises(PrecompileFailure):
        modexp_osaka(above, GAS)
    modexp(above, GAS)  # no bound before Osaka
