"""Compilers older than standard JSON (solc before 0.4.11): their input and output translated.

Such a compiler takes ``{"sources": {name: text}}`` and answers its own JSON: contracts keyed
``file:Name`` (0.4.x) or just ``Name`` (before 0.4), the ABI as a string, errors as
formatted text, and an AST of ``{"name": kind, "attributes", "children"}`` nodes that the
releases before 0.4 nest wrongly (a node's later siblings end up among its children).
:func:`standard_output` turns that answer into the standard-JSON output every newer
release gives, so the rest of secant reads one shape: contracts under their files, link
references, both source maps, and the AST rebuilt from the nodes' source ranges in the
compact form (``nodeType``, the attributes as fields, ``typeDescriptions``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from secant.compile.semver import Version
from secant.compile.sources import strip_comments

TRANSLATION = "legacy-1"
"""Names this module's translation in the output cache's keys: change it when the
translation changes, so that outputs translated before are not read back."""

PRAGMAS: Version = (0, 4, 0)
"""The first release that knows ``pragma`` directives; older ones refuse the word."""

_PRAGMA_RE = re.compile(r"\bpragma\b[^;]*;")
_ERROR_RE = re.compile(r"^(?:(?P<file>[^\n:]+):(?P<line>\d+):(?P<column>\d+):\s*)?"
                       r"(?P<kind>[A-Za-z]+): ")
_PLACEHOLDER_RE = re.compile(r"__(.{36})__")

# Node kinds the releases before 0.4 name otherwise.
_KINDS = {"Contract": "ContractDefinition", "Function": "FunctionDefinition",
          "root": "SourceUnit"}
# Attributes renamed to the compact AST's fields that secant reads.
_FIELDS = {"Identifier": {"value": "name"}, "MemberAccess": {"member_name": "memberName"}}
_RESERVED = ("nodeType", "id", "src", "nodes", "typeDescriptions")


def legacy_input(std_input: Mapping[str, Any], version: Version) -> dict[str, Any]:
    """The legacy request for a standard-JSON input: every source's text, the optimizer.

    Releases before :data:`PRAGMAS` refuse any ``pragma`` directive: it is blanked, byte
    for byte, so that the offsets of everything after it (source maps, the AST) stay true.
    """
    sources: dict[str, str] = {}
    for name, unit in (std_input.get("sources") or {}).items():
        text = str((unit or {}).get("content") or "")
        sources[name] = text if version >= PRAGMAS else blank_pragmas(text)
    optimizer = (std_input.get("settings") or {}).get("optimizer") or {}
    return {"sources": sources, "optimize": bool(optimizer.get("enabled"))}


def blank_pragmas(text: str) -> str:
    """``text`` with its ``pragma ...;`` directives (outside comments) turned into spaces.

    Each character becomes as many spaces as it has UTF-8 bytes: solc counts bytes.
    """
    visible = strip_comments(text)  # the same length: comments blanked, strings kept
    pieces: list[str] = []
    last = 0
    for match in _PRAGMA_RE.finditer(visible):
        pieces.append(text[last:match.start()])
        pieces.append("".join(c if c == "\n" else " " * len(c.encode("utf-8"))
                              for c in text[match.start():match.end()]))
        last = match.end()
    pieces.append(text[last:])
    return "".join(pieces)


def standard_output(legacy: Mapping[str, Any], contents: Mapping[str, str]) -> dict[str, Any]:
    """A legacy compiler's answer as standard JSON; ``contents`` are the sources sent.

    Contracts that the answer names without a file go to the source that defines them
    (found in its AST; else the only source sent, else none).
    """
    output: dict[str, Any] = {"errors": _errors(legacy)}
    found = legacy.get("sources")
    raw_sources: Mapping[str, Mapping[str, Any]] = {
        str(name): data for name, data in (found.items() if isinstance(found, Mapping) else ())
        if isinstance(data, Mapping)}
    order = [str(n) for n in legacy.get("sourceList") or []] or \
        [*contents, *(n for n in raw_sources if n not in contents)]
    # Releases before 0.4 list their standard library (``owned``, ``mortal``...) among the
    # sources; they stay, with their ids, since source maps count them.
    ids = {name: index for index, name in enumerate(order)}
    defined: dict[str, str] = {}
    for name in sorted(raw_sources, key=lambda n: (n not in contents, ids.get(n, len(ids)))):
        for node in _legacy_nodes(raw_sources[name].get("AST")):
            if _KINDS.get(str(node.get("name")), node.get("name")) == "ContractDefinition":
                defined.setdefault(str((node.get("attributes") or {}).get("name")), name)
    bases: dict[int, list[str]] = {}
    asts = {name: _compact(raw_sources[name].get("AST"), contents.get(name),
                           ids.get(name, index), bases)
            for index, name in enumerate(raw_sources)}
    _fill_bases(asts, bases)
    output["sources"] = {name: {"id": ids.get(name, index), **({"ast": ast} if ast else {})}
                         for index, (name, ast) in enumerate(asts.items())}
    only = next(iter(contents)) if len(contents) == 1 else ""
    labels = {key: key for key in legacy.get("contracts") or {}}
    contracts: dict[str, dict[str, Any]] = {}
    for key, data in (legacy.get("contracts") or {}).items():
        unit, _, name = str(key).rpartition(":")
        unit = unit or defined.get(name, only)
        labels[key] = f"{unit}:{name}" if unit else name
        contracts.setdefault(unit, {})[name] = data
    output["contracts"] = {
        unit: {name: _contract(data, labels) for name, data in named.items()}
        for unit, named in contracts.items()
    }
    # Releases before 0.4 do not say which contracts are abstract; they give those no code.
    for unit, ast in asts.items():
        for node in (ast or {}).get("nodes", []):
            entry = contracts.get(unit, {}).get(str(node.get("name")))
            if (node.get("nodeType") == "ContractDefinition" and entry is not None
                    and "fullyImplemented" not in node and not entry.get("bytecode")):
                node["fullyImplemented"] = False
    return output


def _errors(legacy: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answer's formatted error texts as standard-JSON error objects."""
    texts = legacy.get("errors") or ([legacy["error"]] if legacy.get("error") else [])
    errors = []
    for text in texts if isinstance(texts, list) else [texts]:
        text = str(text)
        match = _ERROR_RE.match(text)
        # Releases before 0.4.11 call every problem of the source "Error" (parse, names,
        # types alike); only "Warning" lets it compile.
        kind = match.group("kind") if match is not None else "Error"
        message = text[match.end():] if match is not None else text
        errors.append({"type": kind, "component": "general",
                       "severity": "warning" if kind == "Warning" else "error",
                       "message": message.strip(), "formattedMessage": text})
    return errors


def _contract(data: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    """One legacy contract entry as a standard-JSON contract."""
    try:
        abi = json.loads(str(data.get("interface") or "[]"))
    except ValueError:
        abi = []
    creation = str(data.get("bytecode") or "")
    runtime = str(data.get("runtimeBytecode") or "")
    return {
        "abi": abi,
        "evm": {
            "bytecode": {"object": creation, "sourceMap": str(data.get("srcmap") or ""),
                         "linkReferences": _link_references(creation, labels)},
            # 0.3.x spells it with a hyphen, 0.4.x in camel case.
            "deployedBytecode": {"object": runtime,
                                 "sourceMap": str(data.get("srcmapRuntime")
                                                  or data.get("srcmap-runtime") or ""),
                                 "linkReferences": _link_references(runtime, labels)},
            "methodIdentifiers": dict(data.get("functionHashes") or {}),
        },
    }


def _link_references(code: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """``{source: {Library: [{start, length}]}}`` of the placeholders left in ``code``.

    A placeholder is ``__`` + the library's label (``file:Name`` or ``Name``) cut or padded
    with ``_`` to 36 characters + ``__``; the label is found again among the contracts.
    """
    padded = {label[:36].ljust(36, "_"): full for label, full in labels.items()}
    found: dict[str, dict[str, list[dict[str, int]]]] = {}
    for match in _PLACEHOLDER_RE.finditer(code):
        if match.start() % 2:
            continue  # not on a byte boundary: hex digits that only look like one
        full = padded.get(match.group(1), labels.get(match.group(1).rstrip("_"),
                                                     match.group(1).rstrip("_")))
        unit, _, name = full.rpartition(":")
        found.setdefault(unit, {}).setdefault(name, []).append(
            {"start": match.start() // 2, "length": 20})
    return found


def _legacy_nodes(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every node of a legacy AST, in document order of the (possibly wrong) tree."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            yield item
            stack.extend(reversed(item.get("children") or []))


def _span(node: Mapping[str, Any]) -> tuple[int, int] | None:
    parts = str(node.get("src", "")).split(":")
    try:
        start, length = int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None
    return (start, start + length) if start >= 0 and length >= 0 else None


def _compact(ast: Any, content: str | None, file: int,
             bases: dict[int, list[str]]) -> dict[str, Any] | None:
    """A legacy AST as a compact one, nested again by source ranges; None without ranges.

    Nesting by range repairs the trees of the releases before 0.4 and keeps the right ones
    of 0.4.x as they are (a node that spans the same range as its parent stays inside it).
    The names in a contract's header (``is A, B``) are added to ``bases`` by its id.
    """
    flat = [(span, index, node) for index, node in enumerate(_legacy_nodes(ast))
            if (span := _span(node)) is not None]
    if not flat:
        return _outline(ast, content)
    flat.sort(key=lambda item: (item[0][0], -item[0][1], item[1]))
    data = content.encode("utf-8") if content is not None else b""
    unit: dict[str, Any] = {"nodeType": "SourceUnit", "src": f"0:{len(data)}:{file}",
                            "nodes": []}
    stack: list[tuple[int, dict[str, Any]]] = [(1 << 62, unit)]
    contract: dict[str, Any] | None = None
    header = 0  # where the current contract's body starts
    for (start, end), _, node in flat:
        while len(stack) > 1 and (stack[-1][0] < end or stack[-1][0] <= start):
            stack.pop()
        parent = stack[-1][1]
        compact = _node(node, file, start, end)
        kind = compact["nodeType"]
        if kind == "ContractDefinition":
            compact.setdefault("contractKind", _contract_kind(node, data, start))
            contract = compact
            brace = data.find(b"{", start, end)
            header = brace if brace >= 0 else end
        elif kind == "FunctionDefinition" and "isConstructor" not in compact:
            # Before 0.4.22 a constructor is the function named after its contract.
            compact["isConstructor"] = contract is not None and \
                parent is contract and compact.get("name") == contract.get("name")
        elif kind == "VariableDeclaration" and parent.get("nodeType") == "ContractDefinition":
            compact["stateVariable"] = True
        elif (kind == "UserDefinedTypeName" and parent is contract and start < header
              and isinstance(contract.get("id"), int)):
            bases.setdefault(contract["id"], []).append(str(compact.get("name")))
        parent["nodes"].append(compact)
        stack.append((end, compact))
    return unit


def _outline(ast: Any, content: str | None) -> dict[str, Any] | None:
    """The contracts of an AST without source ranges (0.2.x), as compact definitions.

    Only their names and kinds: a library is told by its keyword in the text.
    """
    visible = strip_comments(content or "")
    nodes = []
    for node in _legacy_nodes(ast):
        if _KINDS.get(str(node.get("name")), node.get("name")) == "ContractDefinition":
            name = str((node.get("attributes") or {}).get("name"))
            library = re.search(rf"\blibrary\s+{re.escape(name)}\b", visible) is not None
            nodes.append({"nodeType": "ContractDefinition", "name": name,
                          "contractKind": "library" if library else "contract"})
    return {"nodeType": "SourceUnit", "nodes": nodes} if nodes else None


def _node(node: Mapping[str, Any], file: int, start: int, end: int) -> dict[str, Any]:
    """One legacy node in the compact form (children come later, by range)."""
    kind = _KINDS.get(str(node.get("name")), str(node.get("name")))
    found = node.get("attributes")
    attributes: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    renames = _FIELDS.get(kind, {})
    compact: dict[str, Any] = {renames.get(k, k): v for k, v in attributes.items()
                               if k not in _RESERVED}
    compact.update({"nodeType": kind, "src": f"{start}:{end - start}:{file}", "nodes": []})
    if isinstance(node.get("id"), int):
        compact["id"] = node["id"]
    if isinstance(attributes.get("type"), str):
        compact["typeDescriptions"] = {"typeString": attributes["type"]}
    return compact


def _contract_kind(node: Mapping[str, Any], data: bytes, start: int) -> str:
    """``library`` or ``contract``: 0.4.x says so, older releases by the keyword in the text."""
    attributes = node.get("attributes") or {}
    if isinstance(attributes.get("contractKind"), str):
        return str(attributes["contractKind"])
    if "isLibrary" in attributes:
        return "library" if attributes["isLibrary"] else "contract"
    word = re.match(rb"\s*(\w+)", data[start:start + 16])
    return "library" if word is not None and word.group(1) == b"library" else "contract"


def _fill_bases(asts: Mapping[str, dict[str, Any] | None],
                bases: Mapping[int, list[str]]) -> None:
    """Give contracts of releases before 0.4 the ``linearizedBaseContracts`` they lack.

    ``bases`` names each contract's direct bases (found among all sources by name); the
    order is the contract, then its bases depth first from the last one named (solc's C3
    order for the usual single chains).
    """
    contracts = [node for ast in asts.values() if ast
                 for node in ast["nodes"] if node.get("nodeType") == "ContractDefinition"
                 and isinstance(node.get("id"), int)]
    by_name = {str(c.get("name")): int(c["id"]) for c in contracts}

    def linearize(own: int, seen: tuple[int, ...]) -> list[int]:
        order = [own]
        for name in reversed(bases.get(own, [])):
            base = by_name.get(name)
            if base is not None and base not in seen and base != own:
                order += [b for b in linearize(base, (*seen, own)) if b not in order]
        return order

    for contract in contracts:
        if "linearizedBaseContracts" not in contract:
            contract["linearizedBaseContracts"] = linearize(int(contract["id"]), ())
