"""SARIF 2.1.0: a campaign's findings as code-scanning results (``OUT/findings.sarif``).

One run of one tool (``secant``) with a *rule* per oracle the campaign ran (and any other
oracle a finding names): its id is the oracle's name, its descriptions the oracle's, its
``helpUri`` the SWC registry page of its SWC class (``properties.swc`` names the class),
and its default level the oracle's severity. One *result* per finding:

* ``level``: the finding's ``severity`` (``secant.types.Finding``), else its oracle's:
  ``high`` -> ``error``, ``medium`` -> ``warning``, ``low`` or none -> ``note``;
* ``message.text``: the detail, then the (shrunk) test case, one transaction a line;
* ``locations``: the finding's ``source`` (``file:line``) as a physical location, the file
  relative to the project root (``uriBaseId`` ``SRCROOT``, which ``originalUriBaseIds``
  sets to the root's ``file://`` URI) with ``region.startLine``; a finding without a
  line points at the file that defines its contract; the contract and function are also
  given as a logical location;
* ``partialFingerprints``: a hash of the finding's key (``secantFindingKey/v1``), the
  identity secant deduplicates findings by, so a code-scanning service matches the same
  finding across runs;
* ``properties``: oracle, SWC, severity, confidence, contract, function, pc, the test
  case as in ``summary.json``, and the reproducer test that replays it, when one was
  written (``secant.report.reproducer``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

import secant
from secant.chain.chain import TestChain
from secant.engine.oracle import Oracle
from secant.files import write_atomic
from secant.types import Finding

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
"""The ``$schema`` a SARIF 2.1.0 log names: OASIS's schema, errata 01."""

SWC_REGISTRY = "https://swcregistry.io/docs/"
"""Where the SWC registry has a page per class (``SWC-110``)."""

ROOT_ID = "SRCROOT"
"""The ``uriBaseId`` of source files: the project root the campaign compiled from."""

LEVELS = {"high": "error", "medium": "warning", "low": "note"}
"""SARIF level of each severity (a finding without severity is a note)."""

FINGERPRINT = "secantFindingKey/v1"

_SOURCE = re.compile(r"^(.+):(\d+)$")

_TITLES = {
    "assertion": "Assertion failure or Solidity panic",
    "property": "Property violated",
    "fuzz-test": "Foundry fuzz test failed",
    "leaking-ether": "Ether leaks to an attacker",
    "suicidal": "Attacker can destroy the contract",
    "arbitrary-storage-write": "Write to an arbitrary storage slot",
    "freezing-ether": "Ether locked in the contract",
    "unchecked-call": "Unchecked call return value",
    "block-dependency": "Ether transfer depends on block values",
    "controlled-delegatecall": "Delegatecall to an input-controlled address",
    "controlled-call": "Call to an input-controlled address and function",
    "tx-origin": "Authorization through tx.origin",
    "reentrancy": "Reentrancy through an external call",
    "integer-overflow": "Integer overflow or underflow that is kept",
    "gasless-send": "Ether send that fails for lack of gas, unhandled",
}
"""Short descriptions of the built-in oracles' rules (others use their name)."""


def rating(finding: Finding, oracle: Oracle | type[Oracle] | None = None
           ) -> tuple[str | None, str | None]:
    """The finding's (severity, confidence), the oracle's where the finding has none."""
    return (finding.severity or (oracle.severity if oracle is not None else None),
            finding.confidence or (oracle.confidence if oracle is not None else None))


def level(severity: str | None) -> str:
    """The SARIF level of a severity."""
    return LEVELS.get(severity or "", "note")


def fingerprint(key: tuple[Any, ...]) -> str:
    """A stable hash of a finding's key (the key holds addresses, names and pcs)."""
    return hashlib.sha256(repr(key).encode()).hexdigest()[:32]


def describe_sequence(sequence: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per transaction of a finding's JSON sequence (``summary.json``'s form)."""
    lines = []
    for index, tx in enumerate(sequence, 1):
        args = ", ".join(_value(a) for a in tx.get("args", []))
        line = f"{index}. {tx.get('sender')} calls {tx.get('function')}"
        line += f" with ({args})" if args else ""
        if tx.get("to"):
            line += f" on {tx['to']}"
        if tx.get("value"):
            line += f", sending {tx['value']} wei"
        if tx.get("blocks") or tx.get("time"):
            line += f", {tx.get('blocks', 0)} block(s) and {tx.get('time', 0)} s later"
        lines.append(line)
    return lines


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, str):
        return value if value.startswith("0x") else f'"{value}"'
    return str(value)


def rule(oracle: Oracle | type[Oracle]) -> dict[str, Any]:
    """The reportingDescriptor of an oracle."""
    name = oracle.name
    description = (oracle.description or name).strip()
    full = description[0].upper() + description[1:]
    severity = oracle.severity
    data: dict[str, Any] = {
        "id": name,
        "name": "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name)),
        "shortDescription": {"text": _TITLES.get(name, name)},
        "fullDescription": {"text": full if full.endswith(".") else full + "."},
        "defaultConfiguration": {"level": level(severity)},
        "properties": {"tags": ["security", "smart-contract"]},
    }
    if oracle.swc:
        data["helpUri"] = SWC_REGISTRY + oracle.swc
        data["properties"]["swc"] = oracle.swc
    return data


class SourceRoot:
    """Maps a finding's ``file:line`` to an artifact location under the project root.

    ``root`` is the folder the compiled unit names are relative to (None: unknown, every
    location is given as the unit name alone); ``files`` maps contract names to the unit
    name of the file that defines them, for findings without a line.
    """

    def __init__(self, root: Path | None, files: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.files = dict(files or {})

    def base_ids(self) -> dict[str, Any]:
        """``originalUriBaseIds`` of the run."""
        if self.root is None:
            return {}
        uri = self.root.resolve().as_uri()
        return {ROOT_ID: {"uri": uri if uri.endswith("/") else uri + "/"}}

    def artifact(self, unit: str) -> dict[str, Any]:
        """The artifactLocation of a unit name (absolute names as ``file://`` URIs)."""
        path = PurePosixPath(unit)
        if path.is_absolute():
            return {"uri": Path(unit).as_uri()}
        location: dict[str, Any] = {"uri": quote(path.as_posix())}
        if self.root is not None:
            location["uriBaseId"] = ROOT_ID
        return location

    def locations(self, finding: Finding) -> list[dict[str, Any]]:
        """The result's locations: physical where known, always logical."""
        logical = {"name": finding.function or finding.contract,
                   "fullyQualifiedName": (f"{finding.contract}.{finding.function}"
                                          if finding.function else finding.contract),
                   "kind": "function" if finding.function else "type"}
        location: dict[str, Any] = {"logicalLocations": [logical]}
        match = _SOURCE.match(finding.source or "")
        if match is not None:
            location["physicalLocation"] = {
                "artifactLocation": self.artifact(match.group(1)),
                "region": {"startLine": max(1, int(match.group(2)))}}
        elif finding.contract in self.files:
            location["physicalLocation"] = {
                "artifactLocation": self.artifact(self.files[finding.contract])}
        return [location]


def sarif_log(findings: Sequence[Finding], oracles: Sequence[Oracle | type[Oracle]],
              sources: SourceRoot | None = None,
              reproducers: Mapping[tuple[Any, ...], str] | None = None) -> dict[str, Any]:
    """The SARIF log of a campaign (see the module docstring).

    ``reproducers`` maps a finding's key to the reproducer test that replays it
    (``file.t.sol:Contract.test_name``).
    """
    sources = sources or SourceRoot(None)
    by_name: dict[str, Oracle | type[Oracle]] = {}
    for oracle in oracles:
        by_name.setdefault(oracle.name, oracle)
    for finding in findings:
        name = finding.oracle or finding.kind
        if name not in by_name:
            by_name[name] = _named(name)
    rules = [rule(oracle) for oracle in by_name.values()]
    index = {data["id"]: i for i, data in enumerate(rules)}
    results = []
    for finding in findings:
        name = finding.oracle or finding.kind
        severity, confidence = rating(finding, by_name[name])
        text = finding.detail.rstrip()
        steps = describe_sequence(finding.sequence)
        text += ("\nTest case (shrunk):\n" if finding.shrink else "\nTest case:\n") + (
            "\n".join(steps) if steps else "none: the deployed state shows it")
        properties: dict[str, Any] = {
            "oracle": name, "kind": finding.kind, "contract": finding.contract,
            "function": finding.function, "pc": finding.pc, "sequence": finding.sequence}
        for key, value in (("swc", finding.swc), ("severity", severity),
                           ("confidence", confidence)):
            if value:
                properties[key] = value
        if reproducers and finding.key in reproducers:
            properties["reproducer"] = reproducers[finding.key]
        results.append({
            "ruleId": name,
            "ruleIndex": index[name],
            "level": level(severity),
            "message": {"text": text},
            "locations": sources.locations(finding),
            "partialFingerprints": {FINGERPRINT: fingerprint(finding.key)},
            "properties": properties,
        })
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "secant", "version": secant.__version__,
                            "semanticVersion": secant.__version__, "rules": rules}},
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    base_ids = sources.base_ids()
    if base_ids:
        run["originalUriBaseIds"] = base_ids
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def source_root(chain: TestChain) -> SourceRoot:
    """The project root and the defining files of the contracts on ``chain``.

    A compiled source's unit name is its path relative to the root the compiler read it
    from, so the root is the file's path less the unit name's parts.
    """
    root: Path | None = None
    files: dict[str, str] = {}
    for contract in chain.contracts:
        compiled, compilation = contract.compiled, contract.compilation
        if compiled is None or compilation is None:
            continue
        if compiled.source:
            files.setdefault(contract.name, compiled.source)
        source = compilation.source(compiled.source)
        if root is None and source is not None and source.path is not None:
            parts = PurePosixPath(source.name).parts
            path = source.path.resolve()
            if not PurePosixPath(source.name).is_absolute() and path.parts[-len(parts):] == parts:
                root = path.parents[len(parts) - 1]
    return SourceRoot(root, files)


def write_sarif(path: Path, findings: Sequence[Finding],
                oracles: Sequence[Oracle | type[Oracle]], sources: SourceRoot | None = None,
                reproducers: Mapping[tuple[Any, ...], str] | None = None) -> dict[str, Any]:
    """Write the SARIF log of ``findings`` to ``path``; return it."""
    log = sarif_log(findings, oracles, sources, reproducers)
    write_atomic(path, json.dumps(log, indent=1))
    return log


def _named(name: str) -> Oracle | type[Oracle]:
    """The registered oracle class called ``name`` (a bare stand-in when none is)."""
    from secant.oracles.registry import available

    known = available().get(name)
    if known is not None:
        return known

    class Unknown(Oracle):
        description = f"findings of the {name} oracle"

        def check(self, result: Any, post: Any) -> list[Finding]:
            return []

    Unknown.name = name
    return Unknown
