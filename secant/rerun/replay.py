"""Replaying a campaign's output: rebuild its chain from the manifest, run its cases again.

:func:`rebuild` reads ``summary.json``'s manifest (``secant.campaign.manifest``), compiles
the inputs again with the recorded settings and builds the campaign the way ``secant
fuzz`` did, through :func:`secant.campaign.plan.plan`, on a fresh chain; nothing is
written. :func:`replay_finding` reads a finding's file back into a test case
(:func:`case_from_json`, the inverse of :func:`secant.types.case_to_json`) and runs it
alone (``Worker.replay``: a target of its own, fresh copies of the oracles): the finding
reproduces when the run shows a finding with the same key. The key is not in the file,
its hash is in the file's name (``secant.campaign.campaign.finding_file_name``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from secant.campaign.campaign import Campaign, finding_file_name
from secant.campaign.manifest import Recorded, read_manifest
from secant.campaign.plan import plan
from secant.campaign.worker import Worker
from secant.chain.chain import TestChain
from secant.compile.loader import load
from secant.compile.solc import SolcManager
from secant.engine.values import VType, vtype
from secant.errors import SecantError
from secant.types import Finding, Tx, TxSeq

SUMMARY = "summary.json"

TypesOf = Callable[[int | None, str], Sequence[VType]]
"""The argument types of function ``signature`` of contract ``to`` (None: the main one);
KeyError when it has no such function."""


class CaseError(SecantError):
    """A JSON test case cannot be read back (a name, a function or a value is unknown)."""


# ---------------------------------------------------------------------- JSON -> cases
def case_from_json(sequence: Sequence[Mapping[str, Any]], names: Mapping[str, int],
                   types_of: TypesOf) -> TxSeq:
    """The test case a JSON sequence (``case_to_json``'s output) stands for.

    Senders and ``to`` are names the chain knows (``deployer``, ``attacker1``, a contract's
    name) or hex addresses; arguments are read by their ABI types (bytes from ``0x``-hex,
    arrays and tuples from lists), which ``types_of`` gives.
    """
    case = []
    for index, entry in enumerate(sequence):
        where = f"transaction {index + 1}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("function"), str):
            raise CaseError(f"{where} has no function", "give each step a \"function\"")
        function = entry["function"]
        to = None if entry.get("to") is None else _address(entry["to"], names, where)
        try:
            types = types_of(to, function)
        except KeyError:
            contract = "the main contract" if to is None else str(entry["to"])
            raise CaseError(f"{where} calls {function}, which {contract} does not have",
                            "the contract changed since the campaign: fuzz it again") from None
        args = entry.get("args", [])
        if not isinstance(args, list) or len(args) != len(types):
            raise CaseError(f"{where}: {function} takes {len(types)} argument(s), the case "
                            f"gives {len(args) if isinstance(args, list) else args!r}",
                            "give one value per parameter")
        values = tuple(_value(vt, raw, names, f"{where}, argument {i + 1}")
                       for i, (vt, raw) in enumerate(zip(types, args)))
        storage = tuple((_int(slot, where), _int(value, where))
                        for slot, value in entry.get("storage", []))
        case.append(Tx(function, values, _address(entry.get("sender"), names, where),
                       value=_int(entry.get("value", 0), where),
                       blocks=_int(entry.get("blocks", 0), where),
                       time=_int(entry.get("time", 0), where), to=to, storage=storage))
    return tuple(case)


def _int(raw: Any, where: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise CaseError(f"{where}: {raw!r} is not a number", "write an integer")
    try:
        return raw if isinstance(raw, int) else int(raw, 0)
    except ValueError:
        raise CaseError(f"{where}: {raw!r} is not a number", "write an integer") from None


def _address(raw: Any, names: Mapping[str, int], where: str) -> int:
    """A sender or contract: a name the chain knows, or an address."""
    if isinstance(raw, str) and raw in names:
        return names[raw]
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    if isinstance(raw, str) and raw.startswith("0x"):
        return _int(raw, where)
    known = ", ".join(sorted(names))
    raise CaseError(f"{where}: {raw!r} is neither an address nor a name the chain knows",
                    f"use 0x-hex or one of: {known}")


def _value(vt: VType, raw: Any, names: Mapping[str, int], where: str) -> Any:
    """A JSON value as the fuzzer represents an argument of type ``vt``."""
    kind = vt.kind
    if kind in ("uint", "int"):
        return _int(raw, where)
    if kind == "address":
        return _address(raw, names, where)
    if kind == "bool":
        if not isinstance(raw, bool):
            raise CaseError(f"{where}: {raw!r} is not a bool", "write true or false")
        return raw
    if kind in ("bytes", "fbytes"):
        if not isinstance(raw, str) or not raw.startswith("0x"):
            raise CaseError(f"{where}: {raw!r} is not 0x-hex bytes", "write bytes as 0x...")
        try:
            return bytes.fromhex(raw[2:])
        except ValueError:
            raise CaseError(f"{where}: {raw!r} is not 0x-hex bytes",
                            "write bytes as 0x...") from None
    if kind == "string":
        if not isinstance(raw, str):
            raise CaseError(f"{where}: {raw!r} is not a string", "write a JSON string")
        return raw
    if not isinstance(raw, list):
        raise CaseError(f"{where}: {raw!r} is not a list", f"write a {vt} as a JSON list")
    if kind == "tuple":
        if len(raw) != len(vt.fields):
            raise CaseError(f"{where}: {vt} has {len(vt.fields)} fields, not {len(raw)}",
                            "give one value per field")
        return tuple(_value(f, item, names, where) for f, item in zip(vt.fields, raw))
    assert vt.elem is not None
    if vt.length is not None and len(raw) != vt.length:
        raise CaseError(f"{where}: {vt} has {vt.length} elements, not {len(raw)}",
                        "give one value per element")
    return tuple(_value(vt.elem, item, names, where) for item in raw)


# ---------------------------------------------------------------------- rebuilding
@dataclass
class Rebuilt:
    """A campaign rebuilt from its output folder, ready to replay cases."""

    folder: Path
    recorded: Recorded
    campaign: Campaign
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def worker(self) -> Worker:
        """The worker whose chain and oracles replay the cases."""
        return self.campaign.first

    @property
    def chain(self) -> TestChain:
        """The campaign's chain, as deployed."""
        return self.campaign.chain

    def case(self, sequence: Sequence[Mapping[str, Any]]) -> TxSeq:
        """A JSON sequence of this campaign as a test case."""
        target = self.worker.target

        def types_of(to: int | None, signature: str) -> tuple[VType, ...]:
            return tuple(vtype(p) for p in target.function(signature, to).inputs)

        return case_from_json(sequence, self.chain.names(), types_of)


def campaign_folders(path: Path) -> list[Path]:
    """The campaign output folders at ``path``: itself, or its campaigns' sub-folders."""
    if (path / SUMMARY).is_file():
        return [path]
    found = ([child for child in sorted(path.iterdir()) if (child / SUMMARY).is_file()]
             if path.is_dir() else [])
    if not found:
        raise SecantError(f"{path} has no {SUMMARY}",
                          "pass the --out folder of a secant fuzz run (or a finding's file "
                          "in its findings/)")
    return found


def read_summary(folder: Path) -> dict[str, Any]:
    """A campaign folder's ``summary.json``."""
    path = folder / SUMMARY
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SecantError(f"{folder} has no {SUMMARY}",
                          "pass the --out folder of a secant fuzz run") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SecantError(f"cannot read {path}: {exc}",
                          "pass the --out folder of a finished secant fuzz run") from None
    if not isinstance(data, dict):
        raise SecantError(f"{path} is not a campaign summary", "pass a secant fuzz --out folder")
    return data


def rebuild(folder: Path, manager: SolcManager | None = None) -> Rebuilt:
    """The campaign of ``folder`` on a fresh chain, as its manifest records it."""
    summary = read_summary(folder)
    recorded = read_manifest(summary, folder / SUMMARY)
    for path in recorded.inputs:
        if not path.exists():
            raise SecantError(f"the campaign's input {path} does not exist any more",
                              "restore it, or fuzz the new input with secant fuzz")
    compilations = load(recorded.inputs, recorded.compile_options, manager)
    plans = plan(compilations, recorded.selection, recorded.chain_config, recorded.config,
                 recorded.project)
    chosen = next((p for p in plans if p.slug == recorded.slug), None)
    if chosen is None and recorded.slug is None and len(plans) == 1:
        chosen = plans[0]
    if chosen is None:
        have = ", ".join(p.slug for p in plans)
        raise SecantError(f"the input has no campaign {recorded.slug!r} any more (it has: "
                          f"{have})", "fuzz the input again with secant fuzz")
    campaign = Campaign(chosen.make_chain(), replace(chosen.config, out=None),
                        oracles=chosen.oracles, functions=chosen.functions,
                        senders=chosen.senders, block_steps=chosen.block_steps)
    return Rebuilt(folder, recorded, campaign, summary)


# ---------------------------------------------------------------------- replaying
@dataclass
class Replay:
    """One recorded case run again: what it showed, and whether that is what was recorded.

    ``expected`` is the finding file's name (None for a corpus entry); ``shown`` the
    findings the run showed by file name; ``error`` says why the case could not run.
    """

    path: Path
    data: dict[str, Any]
    case: TxSeq | None
    shown: dict[str, Finding]
    expected: str | None = None
    error: str | None = None

    @property
    def reproduced(self) -> bool:
        """Whether the run showed the recorded finding again (same key)."""
        return self.expected is not None and self.expected in self.shown


def read_entry(path: Path) -> dict[str, Any]:
    """A finding's or corpus entry's JSON file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SecantError(f"cannot read {path}: {exc}",
                          "pass a finding's file from a campaign's findings/") from None
    if not isinstance(data, dict) or not isinstance(data.get("sequence"), list):
        raise SecantError(f"{path} holds no test case (no \"sequence\" list)",
                          "pass a file from a campaign's findings/ or corpus/")
    return data


def replay_file(rebuilt: Rebuilt, path: Path, finding: bool = True) -> Replay:
    """Run the case of a finding's file (or of a corpus entry) alone on the rebuilt chain."""
    data = read_entry(path)
    expected = path.name if finding else None
    try:
        case = rebuilt.case(data["sequence"])
    except CaseError as exc:
        return Replay(path, data, None, {}, expected, exc.one_line())
    found = rebuilt.worker.replay(case)
    shown = {finding_file_name(f.oracle or f.kind, key): f for key, f in found.items()}
    return Replay(path, data, case, shown, expected)


def finding_files(folder: Path) -> list[Path]:
    """The finding files of a campaign folder, in name order."""
    return sorted((folder / "findings").glob("*.json"))


def corpus_files(folder: Path) -> list[Path]:
    """The corpus entries of a campaign folder, in name order."""
    return sorted((folder / "corpus").glob("*.json"))
