"""Vyper contracts through the ``vyper`` PyPI package (optional extra ``secant[vyper]``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from secant.abi import Abi
from secant.compile.artifacts import Bytecode, Compilation, CompiledContract
from secant.compile.errors import CompilationFailed, InputError, PragmaUnsatisfiable, ToolMissing
from secant.compile.semver import VersionRange, parse_version
from secant.compile.srcmap import SourceFile, SourceMapEntry

_PRAGMA_RE = re.compile(r"^\s*#\s*(?:@version|pragma\s+version)\s+(.+?)\s*$", re.MULTILINE)
_LINE_RE = re.compile(r"line (\d+):(\d+)")
_FORMATS = ["abi", "bytecode", "bytecode_runtime", "source_map", "source_map_runtime",
            "method_identifiers", "layout", "ast_dict"]


def vyper_version() -> str:
    """Return the installed vyper version; ToolMissing when the package is absent."""
    try:
        import vyper
    except ImportError:
        raise ToolMissing(
            "the vyper compiler package is not installed (needed for .vy files)",
            "install it with: pip install 'secant[vyper]'",
        ) from None
    return str(vyper.__version__)


def _positions(source_map: dict[str, Any], source: SourceFile) -> dict[int, SourceMapEntry]:
    entries: dict[int, SourceMapEntry] = {}
    for pc_text, pos in sorted((source_map.get("pc_pos_map") or {}).items(),
                               key=lambda item: int(item[0])):
        if not pos or pos[0] is None:
            continue
        line, column, end_line, end_column = (int(p) for p in pos)
        start = source.offset_of(line, column)
        end = source.offset_of(end_line, end_column)
        jump = (source_map.get("pc_jump_map") or {}).get(pc_text, "-")
        entries[int(pc_text)] = SourceMapEntry(start, max(0, end - start), source.id, jump)
    return entries


def compile_vyper(path: Path) -> Compilation:
    """Compile one Vyper file into a :class:`Compilation` with pc-indexed source maps.

    Vyper keeps immutables in a data section after the runtime code (``layout`` output's
    ``code_layout``), so its runtime :class:`Bytecode` has no immutable references.
    """
    version = vyper_version()
    from vyper.compiler import compile_code
    from vyper.compiler.input_bundle import FilesystemInputBundle

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}", "check the path") from None
    match = _PRAGMA_RE.search(text)
    if match is not None:
        try:
            wanted = VersionRange.parse(match.group(1).replace("~=", "~"))
        except ValueError:
            wanted = VersionRange.any()
        if not wanted.contains(parse_version(version)):
            raise PragmaUnsatisfiable(
                f"installed vyper {version} does not satisfy '{match.group(0).strip()}' "
                f"in {path.name}",
                "install a matching compiler with: pip install 'vyper==<version>'",
            )
    bundle = FilesystemInputBundle([path.parent])
    try:
        out = compile_code(text, contract_path=path.name, source_id=0, resolved_path=path,
                           input_bundle=bundle, output_formats=_FORMATS)
    except Exception as exc:  # vyper raises many unrelated exception types
        message = str(exc).strip().split("\n")[0]
        where = _LINE_RE.search(str(exc))
        location = f"{path.name}:{where.group(1)}:{int(where.group(2)) + 1}" if where else \
            path.name
        raise CompilationFailed(f"compiling {path.name} failed: {location}: "
                                f"{type(exc).__name__}: {message}",
                                "fix the source at that line and retry",
                                (f"{location}: {message}",)) from None
    ast = out.get("ast_dict", {}).get("ast")
    source = SourceFile(0, path.name, path, text, ast, language="Vyper")
    layout = out.get("layout") or {}
    contract = CompiledContract(
        name=path.stem, source=path.name, abi=Abi.from_json(out["abi"]),
        creation=Bytecode(str(out["bytecode"]).removeprefix("0x"),
                          positions=_positions(out.get("source_map") or {}, source)),
        runtime=Bytecode(str(out["bytecode_runtime"]).removeprefix("0x"),
                         positions=_positions(out.get("source_map_runtime") or {}, source)),
        method_identifiers=dict(out.get("method_identifiers") or {}),
        storage_layout=layout.get("storage_layout"),
        language="Vyper", compiler=f"vyper {version}",
    )
    return Compilation([contract], {0: source}, (path.name,), f"vyper {version}", "vyper")
