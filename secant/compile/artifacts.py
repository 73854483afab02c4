"""Compiled contracts, the one shape every input is turned into; solc output parsing.

Every input (solc, Foundry, Hardhat, Vyper, raw bytecode) becomes these types.

A :class:`Compilation` holds the contracts and sources of one compiler run; a
:class:`CompiledContract` holds what deployment needs: creation code (with unlinked library
placeholders and their :class:`LinkReference` s), the constructor ABI, runtime code with its
immutable references, source maps of both, and AST ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from secant.abi import Abi
from secant.compile.errors import (
    CompilationFailed,
    InputError,
    NoDeployableContract,
    UnknownContract,
)
from secant.compile.srcmap import (
    PcMapper,
    SourceFile,
    SourceLocation,
    SourceMapEntry,
    ast_nodes,
    code_bytes,
    function_kind,
)

ABI_HINT = "give the ABI as a JSON list of entries, as solc writes it"


def abi_of(data: Any, where: object) -> Abi:
    """The ABI ``data`` holds (decoded JSON), read from ``where`` (named in the error).

    An ABI that is not a list of entries is the input's fault: a one-line
    :class:`InputError`, never a crash.
    """
    try:
        return Abi.from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"cannot read the ABI in {where}: {exc}", ABI_HINT) from None


@dataclass(frozen=True)
class LinkReference:
    """Positions of one library's address placeholder in unlinked code."""

    source: str
    library: str
    offsets: tuple[int, ...]
    length: int = 20

    @property
    def qualified_name(self) -> str:
        """``source:Library`` (just ``Library`` when the source is unknown)."""
        return f"{self.source}:{self.library}" if self.source else self.library


@dataclass(frozen=True)
class ImmutableReference:
    """Where runtime code holds the value of one immutable variable (AST id)."""

    ast_id: int
    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Bytecode:
    """EVM code as hex (library placeholders kept) with its source map and references.

    ``positions`` replaces ``source_map`` for compilers that give a pc-indexed map (Vyper).
    """

    hex: str = ""
    source_map: str = ""
    link_references: tuple[LinkReference, ...] = ()
    immutable_references: tuple[ImmutableReference, ...] = ()
    positions: Mapping[int, SourceMapEntry] | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str | None, source_map: str = "",
                  link_references: Mapping[str, Any] | None = None) -> Bytecode:
        """Build from a standard-JSON ``evm.bytecode`` object or a bare hex string."""
        if data is None:
            return cls()
        if isinstance(data, str):
            return cls(data.removeprefix("0x"), source_map or "",
                       parse_link_references(link_references or {}))
        immutables = tuple(
            ImmutableReference(int(ast_id), tuple((int(r["start"]), int(r["length"]))
                                                  for r in ranges))
            for ast_id, ranges in sorted((data.get("immutableReferences") or {}).items(),
                                         key=lambda item: int(item[0]))
        )
        refs = data.get("linkReferences") or link_references or {}
        return cls(str(data.get("object", "") or "").removeprefix("0x"),
                   str(data.get("sourceMap", "") or source_map or ""),
                   parse_link_references(refs), immutables)

    @property
    def size(self) -> int:
        """Length of the code in bytes."""
        return len(self.hex) // 2

    @property
    def empty(self) -> bool:
        """Whether there is no code at all."""
        return not self.hex

    @property
    def is_linked(self) -> bool:
        """Whether no library placeholder is left."""
        return not self.link_references and "__" not in self.hex

    def analysis_bytes(self) -> bytes:
        """Return the code with placeholders zeroed: fine for disassembly, not for deployment."""
        return code_bytes(self.hex)

    def to_bytes(self) -> bytes:
        """Return the executable code; raises when libraries are still unlinked."""
        if not self.is_linked:
            names = ", ".join(r.qualified_name for r in self.link_references) or "libraries"
            raise ValueError(f"code needs linking with {names}")
        return bytes.fromhex(self.hex)

    def link(self, addresses: Mapping[str, bytes | str | int]) -> bytes:
        """Return the code with each library address filled in.

        Keys are ``source:Library`` or ``Library``; values are 20-byte addresses as bytes,
        hex text or int.
        """
        code = bytearray(self.analysis_bytes())
        for ref in self.link_references:
            value = addresses.get(ref.qualified_name, addresses.get(ref.library))
            if value is None:
                raise KeyError(f"no address given for library {ref.qualified_name}")
            if isinstance(value, int):
                raw = value.to_bytes(20, "big")
            elif isinstance(value, str):
                raw = bytes.fromhex(value.removeprefix("0x").rjust(40, "0"))
            else:
                raw = bytes(value)
            for offset in ref.offsets:
                code[offset:offset + ref.length] = raw[-ref.length:]
        return bytes(code)


def parse_link_references(data: Mapping[str, Any]) -> tuple[LinkReference, ...]:
    """``{source: {Library: [{start, length}]}}`` from standard JSON into references."""
    refs = []
    for source in sorted(data):
        for library in sorted(data[source]):
            places = data[source][library]
            offsets = tuple(int(p["start"]) for p in places)
            length = int(places[0]["length"]) if places else 20
            refs.append(LinkReference(source, library, offsets, length))
    return tuple(refs)


@dataclass(eq=False)
class CompiledContract:
    """One contract as deployment and analysis need it."""

    name: str
    source: str
    abi: Abi
    creation: Bytecode
    runtime: Bytecode
    kind: str = "contract"
    method_identifiers: dict[str, str] = field(default_factory=dict)
    storage_layout: Mapping[str, Any] | None = None
    ast_id: int | None = None
    base_ids: tuple[int, ...] = ()
    uses: tuple[int, ...] = ()
    """The AST ids the contract's definition refers to (the contracts it creates, calls or
    holds among them)."""
    language: str = "Solidity"
    compiler: str = ""

    @property
    def qualified_name(self) -> str:
        """``source:Name`` (just ``Name`` without a source)."""
        return f"{self.source}:{self.name}" if self.source else self.name

    @property
    def deployable(self) -> bool:
        """A contract (not library/interface/abstract) with creation or runtime code."""
        return self.kind == "contract" and not (self.creation.empty and self.runtime.empty)

    @property
    def libraries(self) -> tuple[str, ...]:
        """Qualified names of the libraries the creation code must be linked with."""
        names = [r.qualified_name for r in self.creation.link_references]
        names += [r.qualified_name for r in self.runtime.link_references]
        return tuple(dict.fromkeys(names))


@dataclass(eq=False)
class Compilation:
    """The contracts and sources of one compiler run (or one artifact set)."""

    contracts: list[CompiledContract]
    sources: dict[int, SourceFile]
    roots: tuple[str, ...] = ()
    compiler: str = ""
    origin: str = "solc"
    warnings: tuple[str, ...] = ()
    _mappers: dict[tuple[int, bool], PcMapper] = field(default_factory=dict, repr=False)

    def source(self, name: str) -> SourceFile | None:
        """Return the source with unit name ``name``."""
        return next((s for s in self.sources.values() if s.name == name), None)

    def contract(self, name: str) -> CompiledContract:
        """Return the contract called ``name`` or ``source:name``; UnknownContract otherwise."""
        matches = [c for c in self.contracts if name in (c.name, c.qualified_name)]
        if len(matches) > 1:
            rooted = [c for c in matches if c.source in self.roots]
            matches = rooted if len(rooted) == 1 else matches
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(sorted({c.name for c in self.contracts})) or "none"
        if not matches:
            raise UnknownContract(f"no contract named {name!r} (compiled: {known})",
                                  "pass one of the compiled names to --contract")
        names = ", ".join(c.qualified_name for c in matches)
        raise UnknownContract(f"contract name {name!r} is ambiguous ({names})",
                              "pass the qualified name source:Name to --contract")

    def deployable(self) -> list[CompiledContract]:
        """Return the contracts that can be deployed."""
        return [c for c in self.contracts if c.deployable]

    def main_contract(self, name: str | None = None) -> CompiledContract:
        """Return the named contract, else the main deployable one of the root files.

        The main one is, among the contracts of the root files no other one inherits, those
        no other one uses (creates, holds, calls), the most derived, the last one on a tie.
        """
        if name is not None:
            chosen = self.contract(name)
            if not chosen.deployable:
                raise NoDeployableContract(
                    f"{chosen.qualified_name} is a{'n' if chosen.kind[0] in 'aeiou' else ''} "
                    f"{chosen.kind} without deployable code",
                    "name a concrete contract with --contract",
                )
            return chosen
        candidates = [c for c in self.deployable() if not self.roots or c.source in self.roots]
        candidates = candidates or self.deployable()
        if not candidates:
            raise NoDeployableContract(
                f"no deployable contract in {', '.join(self.roots) or 'the input'} "
                "(only interfaces, libraries or abstract contracts)",
                "add a concrete contract or compile the file that defines one",
            )
        used_as_base = {b for c in candidates for b in c.base_ids[1:]}
        leaves = [c for c in candidates if c.ast_id is None or c.ast_id not in used_as_base]
        pool = leaves or candidates
        # A contract another one creates, holds or calls is that one's dependency (a bank's
        # journal, a token its sale creates): the main contract is one nobody else uses.
        used = {u for c in pool for u in c.uses if u != c.ast_id and u not in c.base_ids}
        pool = [c for c in pool if c.ast_id is None or c.ast_id not in used] or pool
        return max(enumerate(pool), key=lambda item: (len(item[1].base_ids), item[0]))[1]

    def mapper(self, contract: CompiledContract, runtime: bool = True) -> PcMapper:
        """Return the pc-to-source mapper of a contract's runtime or creation code (cached)."""
        key = (id(contract), runtime)
        if key not in self._mappers:
            code = contract.runtime if runtime else contract.creation
            if code.positions is not None:
                self._mappers[key] = PcMapper(code.positions, self.sources)
            else:
                self._mappers[key] = PcMapper.from_solc(code.hex, code.source_map, self.sources)
        return self._mappers[key]

    def locate(self, contract: CompiledContract | str, pc: int,
               runtime: bool = True) -> SourceLocation | None:
        """Return the source location of ``pc`` in a contract's runtime (or creation) code."""
        chosen = self.contract(contract) if isinstance(contract, str) else contract
        return self.mapper(chosen, runtime).locate(pc)


def _contract_info(sources: Mapping[int, SourceFile]) -> dict[tuple[str, str], dict[str, Any]]:
    info: dict[tuple[str, str], dict[str, Any]] = {}
    for source in sources.values():
        for node in (source.ast or {}).get("nodes", []) or []:
            if node.get("nodeType") != "ContractDefinition":
                continue
            kind = str(node.get("contractKind", "contract"))
            if kind == "contract" and (node.get("abstract") or
                                       node.get("fullyImplemented") is False):
                kind = "abstract"
            info[(source.name, str(node.get("name")))] = {
                "kind": kind, "id": node.get("id"),
                "bases": tuple(node.get("linearizedBaseContracts") or ()),
                "constructor_types": _constructor_contract_types(node),
                "uses": tuple(sorted({int(n["referencedDeclaration"]) for n in ast_nodes(node)
                                      if isinstance(n.get("referencedDeclaration"), int)})),
            }
    return info


def _constructor_contract_types(contract: Mapping[str, Any]) -> tuple[str | None, ...]:
    """For each constructor parameter, the contract it stands for (``contract Log``), or None.

    A parameter declared as a contract says so itself, but the ABI of solc before 0.5.11 has
    no ``internalType`` to carry it; an ``address`` parameter the constructor only converts
    to a contract (``log = Log(_log)``) stands for that contract too. Deployment gives such
    a parameter an instance of the contract (``secant.chain.deploy``): an address without
    code there makes every call to it revert, and the code behind it unreachable.
    """
    constructor = next((n for n in contract.get("nodes", []) or []
                        if n.get("nodeType") == "FunctionDefinition"
                        and function_kind(n) == "constructor"), None)
    if constructor is None:
        return ()
    params = (constructor.get("parameters") or {}).get("parameters") or []
    converted: dict[int, set[str]] = {}  # parameter id -> the contracts it is converted to
    conversions: set[int] = set()  # the identifier nodes that are converted
    uses: dict[int, set[int]] = {}  # parameter id -> the identifier nodes naming it
    ids = {p.get("id") for p in params}
    for node in ast_nodes(constructor.get("body")):
        if node.get("nodeType") == "FunctionCall" and node.get("kind") == "typeConversion":
            target = str(((node.get("expression") or {}).get("typeDescriptions") or {})
                         .get("typeString", ""))
            args = node.get("arguments") or []
            if (target.startswith("type(contract ") and len(args) == 1
                    and args[0].get("nodeType") == "Identifier"
                    and args[0].get("referencedDeclaration") in ids):
                converted.setdefault(args[0]["referencedDeclaration"], set()).add(
                    target.removeprefix("type(").removesuffix(")"))
                conversions.add(int(args[0].get("id", -1)))
        elif node.get("nodeType") == "Identifier" and node.get("referencedDeclaration") in ids:
            uses.setdefault(node["referencedDeclaration"], set()).add(int(node.get("id", -1)))
    other_uses = {param for param, nodes in uses.items() if nodes - conversions}
    found: list[str | None] = []
    for param in params:
        declared = str((param.get("typeDescriptions") or {}).get("typeString", ""))
        kinds = converted.get(param.get("id"), set())
        if declared.startswith("contract "):
            found.append(declared)
        elif declared.startswith("address") and len(kinds) == 1 and (
                param.get("id") not in other_uses):
            found.append(kinds.pop())
        else:
            found.append(None)
    return tuple(found)


_LOCATION_RE = re.compile(r"^\s*(?:-->\s*)?([^\s:][^:\n]*):(\d+):(\d+):", re.MULTILINE)


def format_diagnostic(error: Mapping[str, Any], sources: Mapping[str, str]) -> str:
    """One line ``file:line:col: Type: message`` from a solc error object."""
    message = str(error.get("message", "")).strip().split("\n")[0]
    kind = str(error.get("type", "Error"))
    location = error.get("sourceLocation") or {}
    file = location.get("file")
    if file and file in sources and isinstance(location.get("start"), int):
        probe = SourceFile(0, str(file), content=sources[file])
        line, column = probe.position(max(0, int(location["start"])))
        return f"{file}:{line}:{column}: {kind}: {message}"
    formatted = str(error.get("formattedMessage", ""))
    match = _LOCATION_RE.search(formatted)
    if match is not None:
        return f"{match.group(1)}:{match.group(2)}:{match.group(3)}: {kind}: {message}"
    return f"{file + ': ' if file else ''}{kind}: {message}"


def check_errors(output: Mapping[str, Any], sources: Mapping[str, str],
                 what: str) -> tuple[str, ...]:
    """Raise CompilationFailed on errors in a solc output; return the warnings as lines."""
    errors: list[str] = []
    warnings: list[str] = []
    for item in output.get("errors", []) or []:
        line = format_diagnostic(item, sources)
        (errors if item.get("severity") == "error" else warnings).append(line)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CompilationFailed(f"compiling {what} failed: {errors[0]}{more}",
                                "fix the source at that line and retry", tuple(errors))
    return tuple(warnings)


def _declared(abi: Any, types: Sequence[str | None] | None) -> Any:
    """The ABI with the contract each constructor parameter stands for as its ``internalType``.

    Only where solc gave none (:func:`_constructor_contract_types` finds them).
    """
    if not types or not isinstance(abi, list):
        return abi
    entries = []
    for entry in abi:
        if isinstance(entry, Mapping) and entry.get("type") == "constructor":
            inputs = list(entry.get("inputs") or [])
            for index, kind in enumerate(types[:len(inputs)]):
                item = inputs[index]
                if (kind is not None and isinstance(item, Mapping)
                        and not item.get("internalType") and item.get("type") == "address"):
                    inputs[index] = {**item, "internalType": kind}
            entry = {**entry, "inputs": inputs}
        entries.append(entry)
    return entries


def from_standard_json(output: Mapping[str, Any], contents: Mapping[str, str],
                       paths: Mapping[str, Path], roots: Sequence[str], compiler: str,
                       origin: str = "solc", what: str | None = None) -> Compilation:
    """Turn a solc standard-JSON output into a :class:`Compilation`.

    ``contents``/``paths`` give the text and file of each source unit (for line numbers);
    missing texts are read from ``paths`` on demand. ``what`` names the input in error
    messages (default: the roots).
    """
    what = what or ", ".join(roots) or "the sources"
    warnings = check_errors(output, contents, what)
    sources: dict[int, SourceFile] = {}
    for name, data in (output.get("sources") or {}).items():
        source_id = int(data.get("id", len(sources)))
        sources[source_id] = SourceFile(source_id, name, paths.get(name), contents.get(name),
                                        data.get("ast") or data.get("legacyAST"))
    info = _contract_info(sources)
    contracts: list[CompiledContract] = []
    for source_name in sorted(output.get("contracts") or {}):
        for name, data in sorted(output["contracts"][source_name].items()):
            evm = data.get("evm") or {}
            details = info.get((source_name, name), {})
            layout = data.get("storageLayout")
            contracts.append(CompiledContract(
                name=name, source=source_name,
                abi=abi_of(_declared(data.get("abi") or [], details.get("constructor_types")),
                           f"{source_name}:{name}"),
                creation=Bytecode.from_json(evm.get("bytecode")),
                runtime=Bytecode.from_json(evm.get("deployedBytecode")),
                kind=details.get("kind", "contract"),
                method_identifiers=dict(evm.get("methodIdentifiers") or {}),
                storage_layout=layout if isinstance(layout, Mapping) else None,
                ast_id=details.get("id"), base_ids=details.get("bases", ()),
                uses=details.get("uses", ()),
                compiler=compiler,
            ))
    if not contracts:
        raise NoDeployableContract(
            f"{what} defines no contract",
            "check that the file contains a contract definition",
        )
    order = {(s.name, c.name): (s.id, c.start) for s in sources.values()
             for c in s.outline()[1]}
    contracts.sort(key=lambda c: order.get((c.source, c.name), (1 << 30, 0)))
    return Compilation(contracts, sources, tuple(roots), compiler, origin, warnings)
