"""Source maps: from a pc of creation or runtime code to ``file:line:column`` and function.

solc's compressed source map has one ``s:l:f:j:m`` entry per instruction (empty fields
repeat the previous entry). An instruction index is turned into a pc by walking the code
(PUSH data skipped). The enclosing function comes from the AST: the innermost function or
modifier whose source range contains the mapped range.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from secant.evm.opcodes import immediate_size

_PLACEHOLDER_RE = re.compile(r"__.{36}__")


@dataclass(frozen=True)
class SourceMapEntry:
    """One instruction's source range: byte ``offset``/``length`` in source ``file``.

    ``jump`` is ``i`` (into a function), ``o`` (out of one) or ``-``; ``file`` is -1 when the
    instruction has no source (compiler-generated code).
    """

    offset: int
    length: int
    file: int
    jump: str = "-"
    modifier_depth: int = 0


def decompress(source_map: str) -> list[SourceMapEntry]:
    """Expand a compressed solc source map into one entry per instruction."""
    entries: list[SourceMapEntry] = []
    if not source_map:
        return entries
    fields: list[str] = ["0", "0", "-1", "-", "0"]
    for item in source_map.split(";"):
        for index, value in enumerate(item.split(":")[:5]):
            if value != "":
                fields[index] = value
        entries.append(SourceMapEntry(int(fields[0]), int(fields[1]), int(fields[2]),
                                      fields[3], int(fields[4])))
    return entries


def code_bytes(hex_code: str) -> bytes:
    """Bytes of (possibly unlinked) hex code; library placeholders become zero addresses."""
    text = _PLACEHOLDER_RE.sub("0" * 40, hex_code.removeprefix("0x"))
    return bytes.fromhex(text)


def instruction_offsets(code: bytes) -> list[int]:
    """Return the pc of every instruction in ``code`` (PUSH1..PUSH32 data skipped)."""
    offsets: list[int] = []
    pc = 0
    size = len(code)
    while pc < size:
        offsets.append(pc)
        op = code[pc]
        pc += 1 + immediate_size(op)
    return offsets


@dataclass(frozen=True)
class FunctionRange:
    """A function or modifier definition and its source range."""

    name: str
    contract: str | None
    kind: str
    start: int
    end: int
    ast_id: int | None = None


@dataclass(frozen=True)
class ContractRange:
    """A contract definition and its source range."""

    name: str
    start: int
    end: int
    ast_id: int | None = None


def _src(node: Mapping[str, Any]) -> tuple[int, int] | None:
    text = node.get("src")
    if not isinstance(text, str):
        return None
    parts = text.split(":")
    try:
        start, length = int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None
    return start, start + length


def _walk(node: Any, contract: str | None = None) -> Iterator[tuple[Mapping[str, Any], str | None]]:
    if isinstance(node, Mapping):
        node_type = node.get("nodeType") or node.get("ast_type")
        yield node, contract
        if node_type == "ContractDefinition":
            contract = str(node.get("name"))
        for value in node.values():
            if isinstance(value, list | dict):
                yield from _walk(value, contract)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item, contract)


def ast_nodes(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every mapping of an AST under ``node``, ``node`` included, in document order."""
    for found, _ in _walk(node):
        yield found


def function_kind(node: Mapping[str, Any]) -> str:
    """What a function-like AST node is (``function``, ``constructor``, ``modifier``...).

    Newer ASTs say it in ``kind``; it is derived for older ones.
    """
    if node.get("nodeType") == "ModifierDefinition":
        return "modifier"
    if "kind" in node and isinstance(node["kind"], str):
        return str(node["kind"])
    if node.get("isConstructor"):
        return "constructor"
    return "fallback" if node.get("name") == "" else "function"


def ast_outline(ast: Mapping[str, Any] | None, module: str | None = None
                ) -> tuple[list[FunctionRange], list[ContractRange]]:
    """Functions/modifiers and contracts of a solc compact AST or a Vyper AST."""
    functions: list[FunctionRange] = []
    contracts: list[ContractRange] = []
    if not ast:
        return functions, contracts
    for node, contract in _walk(ast):
        node_type = node.get("nodeType") or node.get("ast_type")
        span = _src(node)
        if span is None:
            continue
        node_id = node.get("id", node.get("node_id"))
        ast_id = node_id if isinstance(node_id, int) else None
        if node_type in ("FunctionDefinition", "ModifierDefinition"):
            kind = function_kind(node)
            name = str(node.get("name") or kind)
            functions.append(FunctionRange(name, contract, kind, span[0], span[1], ast_id))
        elif node_type == "FunctionDef":  # Vyper
            name = str(node.get("name"))
            kind = "constructor" if name == "__init__" else "function"
            functions.append(FunctionRange(name, module, kind, span[0], span[1], ast_id))
        elif node_type == "ContractDefinition":
            contracts.append(ContractRange(str(node.get("name")), span[0], span[1], ast_id))
    return functions, contracts


@dataclass
class SourceFile:
    """A compiled source: its id in source maps, unit name, file, text and AST."""

    id: int
    name: str
    path: Path | None = None
    content: str | None = None
    ast: Mapping[str, Any] | None = None
    language: str = "Solidity"
    _data: bytes | None = field(default=None, repr=False)
    _line_starts: list[int] | None = field(default=None, repr=False)
    _outline: tuple[list[FunctionRange], list[ContractRange]] | None = field(
        default=None, repr=False)

    def text(self) -> str | None:
        """Return the source text (read from ``path`` on first use when not given)."""
        if self.content is None and self.path is not None:
            try:
                self.content = self.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
        return self.content

    def data(self) -> bytes:
        """Return the UTF-8 bytes of the source (solc offsets count bytes)."""
        if self._data is None:
            self._data = (self.text() or "").encode("utf-8")
        return self._data

    def line_starts(self) -> list[int]:
        """Byte offset of the start of each line."""
        if self._line_starts is None:
            data = self.data()
            self._line_starts = [0] + [i + 1 for i, b in enumerate(data) if b == 0x0A]
        return self._line_starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based ``(line, column)`` of a byte offset (column counts characters)."""
        starts = self.line_starts()
        index = max(0, bisect.bisect_right(starts, offset) - 1)
        column = len(self.data()[starts[index]:offset].decode("utf-8", "replace"))
        return index + 1, column + 1

    def offset_of(self, line: int, column: int) -> int:
        """Byte offset of a 1-based line and 0-based character column."""
        starts = self.line_starts()
        if not 1 <= line <= len(starts):
            return 0
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.data())
        text = self.data()[start:end].decode("utf-8", "replace")
        return start + len(text[:column].encode("utf-8"))

    def outline(self) -> tuple[list[FunctionRange], list[ContractRange]]:
        """Functions and contracts defined in this source (from its AST)."""
        if self._outline is None:
            module = Path(self.name).stem if self.language == "Vyper" else None
            self._outline = ast_outline(self.ast, module)
        return self._outline

    def enclosing_function(self, start: int, end: int) -> FunctionRange | None:
        """Return the innermost function or modifier containing ``[start, end)``."""
        best: FunctionRange | None = None
        for fn in self.outline()[0]:
            if fn.start <= start and end <= fn.end and (
                    best is None or fn.end - fn.start < best.end - best.start):
                best = fn
        return best

    def enclosing_contract(self, start: int, end: int) -> ContractRange | None:
        """Return the contract definition containing ``[start, end)``."""
        for contract in self.outline()[1]:
            if contract.start <= start and end <= contract.end:
                return contract
        return None


@dataclass(frozen=True)
class SourceLocation:
    """Where a pc comes from: file, 1-based line/column (and end), function, contract."""

    source: str
    path: Path | None
    line: int
    column: int
    end_line: int
    end_column: int
    offset: int
    length: int
    function: str | None = None
    contract: str | None = None
    jump: str = "-"

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}:{self.column}"
        if self.function:
            owner = f"{self.contract}." if self.contract else ""
            where += f" ({owner}{self.function})"
        elif self.contract:
            where += f" ({self.contract})"
        return where

    def snippet(self, source: SourceFile) -> str:
        """Return the source text of the mapped range (first line only)."""
        text = source.data()[self.offset:self.offset + self.length].decode("utf-8", "replace")
        return text.split("\n", 1)[0]


class PcMapper:
    """Maps pcs of one piece of code to source locations."""

    def __init__(self, entries: Mapping[int, SourceMapEntry],
                 sources: Mapping[int, SourceFile]) -> None:
        self.entries = entries
        self.sources = sources

    @classmethod
    def from_solc(cls, hex_code: str, source_map: str,
                  sources: Mapping[int, SourceFile]) -> PcMapper:
        """Build from solc's compressed map and the code it describes."""
        decoded = decompress(source_map)
        pcs = instruction_offsets(code_bytes(hex_code)) if decoded else []
        return cls(dict(zip(pcs, decoded)), sources)

    def entry(self, pc: int) -> SourceMapEntry | None:
        """Return the raw source-map entry of the instruction at ``pc``."""
        return self.entries.get(pc)

    def locate(self, pc: int) -> SourceLocation | None:
        """Return the source location of the instruction at ``pc`` (None for generated code)."""
        entry = self.entries.get(pc)
        if entry is None or entry.file < 0:
            return None
        source = self.sources.get(entry.file)
        if source is None or source.text() is None:
            return None
        start, end = entry.offset, entry.offset + entry.length
        line, column = source.position(start)
        end_line, end_column = source.position(end)
        function = source.enclosing_function(start, end)
        contract = source.enclosing_contract(start, end)
        return SourceLocation(
            source=source.name, path=source.path, line=line, column=column,
            end_line=end_line, end_column=end_column, offset=start, length=entry.length,
            function=function.name if function else None,
            contract=(function.contract if function and function.contract else
                      contract.name if contract else None),
            jump=entry.jump,
        )
