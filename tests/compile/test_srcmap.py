"""Source maps: decompression, and known pcs mapped to known lines for 0.4.x and 0.8.x."""

from __future__ import annotations

import pytest

from secant.compile import CompileOptions, compile_files
from secant.compile.srcmap import (
    SourceFile,
    SourceMapEntry,
    code_bytes,
    decompress,
    instruction_offsets,
)

from .conftest import SOLIDITY, needs_node


def test_decompress_inherits_empty_fields() -> None:
    entries = decompress("1:2:0:-;:3;;5::1:i;:::o:1")
    assert entries == [
        SourceMapEntry(1, 2, 0, "-", 0),
        SourceMapEntry(1, 3, 0, "-", 0),
        SourceMapEntry(1, 3, 0, "-", 0),
        SourceMapEntry(5, 3, 1, "i", 0),
        SourceMapEntry(5, 3, 1, "o", 1),
    ]
    assert decompress("") == []


def test_instruction_offsets_skip_push_data() -> None:
    # PUSH1 80, PUSH2 0102, PUSH0, ADD, PUSH32 <32 bytes>, STOP
    code = bytes.fromhex("6080" + "610102" + "5f" + "01" + "7f" + "00" * 32 + "00")
    assert instruction_offsets(code) == [0, 2, 5, 6, 7, 40]
    placeholder = "73" + "__$" + "a" * 34 + "$__" + "00"
    assert code_bytes(placeholder) == bytes([0x73]) + bytes(20) + b"\x00"


def test_positions_count_bytes_and_lines() -> None:
    source = SourceFile(0, "x.sol", content="ab\ncé d\nend")
    assert source.position(0) == (1, 1)
    assert source.position(3) == (2, 1)
    assert source.position(7) == (2, 4)  # "é" is two bytes but one column
    assert source.position(9) == (3, 1)
    assert source.offset_of(2, 3) == 7


# pc -> (line, function) read from solc's output; pinned compiler versions keep them stable.
KNOWN_04 = {  # solc 0.4.26, Simple04.sol, runtime code
    598: (32, "withdraw"),   # REVERT of require(balances[msg.sender] >= amount, ...)
    675: (33, "withdraw"),   # SSTORE balances[msg.sender] -= amount
    724: (34, "withdraw"),   # CALL of msg.sender.transfer(amount)
    1106: (27, "deposit"),   # SSTORE total += msg.value
    1185: (28, "deposit"),   # LOG2 emit Deposited(...)
}
KNOWN_04_CREATION = {67: (15, "constructor")}  # SSTORE owner = msg.sender in Base04
KNOWN_08 = {  # solc 0.8.37, Simple08.sol, runtime code
    324: (15, "set"),        # REVERT NotOwner(msg.sender)
    330: (16, "set"),        # SSTORE value = newValue
    393: (20, "increment"),  # SSTORE value += 1
}
KNOWN_08_CREATION = {16: (11, "constructor")}  # CALLER in owner = msg.sender


@needs_node
@pytest.mark.parametrize(
    ("version", "file", "runtime_pcs", "creation_pcs", "opcodes"),
    [
        ("0.4.26", "Simple04.sol", KNOWN_04, KNOWN_04_CREATION,
         {598: 0xFD, 675: 0x55, 724: 0xF1, 1106: 0x55, 1185: 0xA2}),
        ("0.8.37", "Simple08.sol", KNOWN_08, KNOWN_08_CREATION,
         {324: 0xFD, 330: 0x55, 393: 0x55}),
    ],
)
def test_known_pcs_map_to_known_lines(solc_installed: list[str], version: str, file: str,
                                      runtime_pcs: dict[int, tuple[int, str]],
                                      creation_pcs: dict[int, tuple[int, str]],
                                      opcodes: dict[int, int]) -> None:
    compilation = compile_files([SOLIDITY / file], CompileOptions(solc_version=version))[0]
    contract = compilation.main_contract()
    code = contract.runtime.analysis_bytes()
    for pc, opcode in opcodes.items():
        assert code[pc] == opcode, pc
    for runtime, pcs in ((True, runtime_pcs), (False, creation_pcs)):
        for pc, (line, function) in pcs.items():
            location = compilation.locate(contract, pc, runtime=runtime)
            assert location is not None, pc
            assert (location.line, location.function) == (line, function), (pc, location)
            assert location.source == f"tests/fixtures/solidity/{file}"
            assert str(location).startswith(f"tests/fixtures/solidity/{file}:{line}:")


@needs_node
def test_newest_08_sstore_lines(solc_installed: list[str]) -> None:
    """Version-independent check: every SSTORE of Simple08 maps to an assignment line."""
    compilation = compile_files([SOLIDITY / "Simple08.sol"], CompileOptions())[0]
    contract = compilation.main_contract()
    code = contract.runtime.analysis_bytes()
    mapper = compilation.mapper(contract)
    found = {}
    for pc in sorted(mapper.entries):
        if code[pc] == 0x55:
            location = mapper.locate(pc)
            assert location is not None
            found[location.line] = location.function
    assert found == {16: "set", 20: "increment"}
    source = compilation.source(contract.source)
    assert source is not None
    snippet = mapper.locate(min(p for p in mapper.entries if code[p] == 0x55))
    assert snippet is not None and snippet.snippet(source).startswith("value = newValue")
