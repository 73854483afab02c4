"""Raw bytecode plus an ABI, as sFuzz takes them.

``X.bin`` / ``X.bin-runtime`` / ``X.hex`` with ``X.abi`` or ``X.json`` beside it, or one JSON
artifact holding ``abi`` and ``bytecode``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from secant.abi import Abi
from secant.compile.artifacts import ABI_HINT, Bytecode, Compilation, CompiledContract, abi_of
from secant.compile.errors import InputError
from secant.compile.srcmap import code_bytes
from secant.evm.opcodes import CALLDATACOPY, CALLDATALOAD, CALLDATASIZE, CODECOPY, immediate_size

BYTECODE_SUFFIXES = (".bin", ".bin-runtime", ".hex", ".evm")
"""File suffixes read as hex bytecode."""

_HEX_RE = re.compile(r"^(0x)?([0-9a-fA-F_$]*)$")


def looks_like_creation(code: bytes) -> bool:
    """Heuristic: creation code copies code (CODECOPY) before it ever reads calldata."""
    pc = 0
    while pc < len(code):
        op = code[pc]
        if op == CODECOPY:
            return True
        if op in (CALLDATALOAD, CALLDATASIZE, CALLDATACOPY):
            return False
        pc += 1 + immediate_size(op)
    return False


def read_hex(path: Path) -> str:
    """Return the hex text of a bytecode file (whitespace and ``0x`` removed)."""
    try:
        text = "".join(path.read_text(encoding="utf-8").split())
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "check the path") from None
    match = _HEX_RE.match(text)
    if match is None or len(match.group(2)) % 2:
        raise InputError(f"{path} is not hex bytecode", "give a file with the code as hex text")
    return match.group(2)


def _find_abi(path: Path) -> Path | None:
    stem = path.name.split(".")[0]
    for suffix in (".abi", ".abi.json", ".json"):
        candidate = path.with_name(stem + suffix)
        if candidate.is_file() and candidate != path:
            return candidate
    return None


def _read_abi(path: Path) -> Abi:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the ABI in {path}: {exc}", ABI_HINT) from None
    return abi_of(data, path)


def _contract(name: str, abi: Abi, code_hex: str, runtime: bool | None,
              source: str) -> CompiledContract:
    is_runtime = (not looks_like_creation(code_bytes(code_hex))) if runtime is None else runtime
    code = Bytecode(code_hex)
    return CompiledContract(name=name, source=source, abi=abi,
                            creation=Bytecode() if is_runtime else code,
                            runtime=code if is_runtime else Bytecode(),
                            language="EVM", compiler="bytecode")


def load_bytecode(path: Path, abi_path: Path | None = None,
                  runtime: bool | None = None) -> Compilation:
    """Load raw code with its ABI; ``runtime`` None guesses creation vs runtime code.

    Runtime-only code has empty ``creation``: deployment installs it at an address directly.
    """
    if not path.is_file():
        raise InputError(f"{path} does not exist", "check the path")
    name = path.name.split(".")[0]
    if path.suffix == ".json" and abi_path is None:
        return _from_json_artifact(path, runtime)
    if path.suffix == ".abi":
        for suffix in (".bin", ".bin-runtime", ".hex"):
            if path.with_suffix(suffix).is_file():
                return load_bytecode(path.with_suffix(suffix), path, runtime)
        raise InputError(f"no bytecode next to {path}",
                         f"put the code as hex in {path.with_suffix('.bin')}")
    code_hex = read_hex(path)
    abi_file = abi_path or _find_abi(path)
    abi = _read_abi(abi_file) if abi_file is not None else Abi.from_json([])
    if runtime is None and path.name.endswith(".bin-runtime"):
        runtime = True
    contract = _contract(name, abi, code_hex, runtime, path.name)
    notes = () if abi_file else (f"no ABI found next to {path.name}; functions are unknown",)
    return Compilation([contract], {}, (path.name,), "bytecode", "bytecode", notes)


def _from_json_artifact(path: Path, runtime: bool | None) -> Compilation:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "give a JSON artifact") from None
    if not isinstance(data, dict) or "abi" not in data:
        raise InputError(f"{path} holds no contract artifact (no 'abi' key)",
                         "give an artifact with 'abi' and 'bytecode', or a .bin file")
    abi = abi_of(data["abi"], path)
    name = str(data.get("contractName") or path.stem)
    creation = data.get("bytecode")
    deployed = data.get("deployedBytecode") or data.get("runtimeBytecode")
    if isinstance(creation, dict):
        creation = creation.get("object")
    if isinstance(deployed, dict):
        deployed = deployed.get("object")
    creation_hex = str(creation or "").removeprefix("0x")
    runtime_hex = str(deployed or "").removeprefix("0x")
    if runtime is True or not creation_hex:
        creation_hex = ""
    contract = CompiledContract(
        name=name, source=str(data.get("sourceName") or data.get("sourcePath") or path.name),
        abi=abi,
        creation=Bytecode(creation_hex, str(data.get("sourceMap") or "")),
        runtime=Bytecode(runtime_hex, str(data.get("deployedSourceMap") or "")),
        language="EVM", compiler=str((data.get("compiler") or {}).get("version", "artifact")),
    )
    return Compilation([contract], {}, (contract.source,), contract.compiler, "bytecode")
