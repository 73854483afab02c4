"""Resuming a campaign from its output folder: its corpus and findings on today's code.

``secant fuzz --resume OUT`` builds the campaign again (from OUT's manifest, or from the
input given) and, before fuzzing, :func:`resume` reads what OUT holds:

* **findings** (``findings/``): each case is adapted to today's code
  (``secant.rerun.adapt``) and replayed alone (``Worker.replay``); a finding that shows
  again (same key) is the campaign's from the start, with the case, detail and shrinking
  figures its file recorded (a case that had to be adapted is shrunk again at the end).
  When an edit moved the code, the finding that the case shows in the same contract and
  function, by the same oracle, is the same bug under a new key: its file replaces the old
  one. A finding that does not show again keeps its file untouched and is listed in the
  summary as not reproduced: the code changed, or fixed the bug.
* **the corpus** (``corpus/``): every entry is adapted and re-executed by every worker in
  the order it was found (``Worker.import_cases``), within the new run's budget, so the
  coverage it had is the resumed campaign's start; the finding cases run too.

Every file a campaign writes is renamed into place, so a campaign killed at any moment
(even ``kill -9``) leaves whole files and, at worst, a temporary ``.tmp-*`` file, which
resuming removes. The summary's ``resume`` section says what was kept, adapted and
dropped, and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from secant.campaign.campaign import Campaign, finding_file_name
from secant.campaign.options import CampaignOptions
from secant.chain.chain import TestChain
from secant.engine.values import VType, vtype
from secant.rerun.adapt import Adapter, AdaptReport, Functions
from secant.rerun.replay import CaseError, case_from_json
from secant.types import Finding, TxSeq, case_to_json

TEMPORARY_PREFIX = ".tmp-"
"""Files ``secant.files.write_atomic`` had not renamed yet when the campaign stopped."""


@dataclass
class ResumeReport:
    """What resuming found in the folder and did with it (``summary.json``'s ``resume``)."""

    corpus: AdaptReport = field(default_factory=AdaptReport)
    findings: AdaptReport = field(default_factory=AdaptReport)
    reproduced: dict[str, str] = field(default_factory=dict)
    """Finding files shown again, each with its file now (another when its key changed)."""
    not_reproduced: dict[str, str] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    temporary_removed: int = 0
    imported: int = 0
    """Cases re-executed (finding cases and corpus entries, per worker)."""
    previous: dict[str, Any] = field(default_factory=dict)
    """The earlier run's manifest times and status, when its summary was readable."""

    def to_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {"corpus": self.corpus.to_json(), "findings": self.findings.to_json(),
                "findings_reproduced": dict(self.reproduced),
                "findings_not_reproduced": dict(self.not_reproduced),
                "unreadable": dict(self.unreadable),
                "temporary_files_removed": self.temporary_removed,
                "cases_imported": self.imported, "previous": dict(self.previous)}

    def lines(self) -> list[str]:
        """The report in a few lines for the terminal."""
        c, f = self.corpus, self.findings
        out = [f"resumed: corpus {c.kept} kept, {c.adapted} adapted, {c.dropped} dropped; "
               f"findings {len(self.reproduced)} reproduced, "
               f"{len(self.not_reproduced)} not"]
        changes = c.changes + f.changes
        out += [f"  {count} transaction(s): {what}" for what, count in sorted(changes.items())]
        out += [f"  finding {name} not reproduced: {why}"
                for name, why in sorted(self.not_reproduced.items())]
        out += [f"  {name} skipped: {why}" for name, why in sorted(self.unreadable.items())]
        return out


def functions_of(chain: TestChain) -> tuple[Functions, dict[str | None, int | None]]:
    """Every contract's functions as cases name them, and where each name points.

    The main contract is ``None`` (a case names no ``to`` for it); the others go by the
    names the chain gives them (``case_to_json`` writes those) and by hex address.
    """
    by_address: dict[int, dict[str, tuple[VType, ...]]] = {}
    for contract in chain.contracts:
        functions = by_address.setdefault(contract.address, {})
        for fn in contract.functions(include_read_only=True):
            key = fn.signature if fn.kind == "function" else fn.kind
            functions[key] = tuple(vtype(p) for p in fn.inputs)
    main = chain.main.address if chain.main is not None else None
    found: dict[str | None, Mapping[str, tuple[VType, ...]]] = {}
    where: dict[str | None, int | None] = {None: None}
    if main is not None and main in by_address:
        found[None] = by_address[main]
    for name, address in chain.names().items():
        if address in by_address:
            found[name] = by_address[address]
            where[name] = address
    for address, functions in by_address.items():
        found[f"0x{address:040x}"] = functions
        where[f"0x{address:040x}"] = address
    return found, where


def _entries(folder: Path, report: ResumeReport) -> list[tuple[Path, dict[str, Any]]]:
    """The readable JSON entries of ``folder`` (a corpus or findings folder)."""
    found: list[tuple[Path, dict[str, Any]]] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.iterdir()):
        if path.name.startswith(TEMPORARY_PREFIX):
            path.unlink(missing_ok=True)  # a write the killed campaign never finished
            report.temporary_removed += 1
            continue
        if path.suffix != ".json" or not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            report.unreadable[f"{folder.name}/{path.name}"] = f"not JSON ({exc})"
            continue
        if not isinstance(data, dict) or not isinstance(data.get("sequence"), list):
            report.unreadable[f"{folder.name}/{path.name}"] = "no \"sequence\" list"
            continue
        found.append((path, data))
    return found


def resume(campaign: Campaign, folder: Path) -> ResumeReport:
    """Carry ``folder``'s findings and corpus into ``campaign`` before it fuzzes.

    Returns what was kept, adapted, dropped and reproduced; the campaign's summary shows
    it (``Campaign.resumed``).
    """
    report = ResumeReport()
    report.previous = _previous(folder)
    chain = campaign.chain
    functions, where = functions_of(chain)
    names = chain.names()
    findings = _entries(folder / "findings", report)
    corpus = _entries(folder / "corpus", report)
    recorded = [data["sequence"] for _, data in findings + corpus]
    finding_adapter = Adapter(functions, recorded)
    corpus_adapter = Adapter(functions, recorded)
    report.findings, report.corpus = finding_adapter.report, corpus_adapter.report
    types_of = _types_of(functions, where)

    cases: list[TxSeq] = []
    worker = campaign.first
    for path, data in findings:
        sequence, changed = finding_adapter.adapt(data["sequence"])
        if sequence is None:
            report.not_reproduced[path.name] = "none of its transactions exists any more"
            continue
        try:
            case = case_from_json(sequence, names, types_of)
        except CaseError as exc:
            report.not_reproduced[path.name] = exc.one_line()
            continue
        cases.append(case)
        shown = {finding_file_name(f.oracle or f.kind, key): f
                 for key, f in worker.replay(case).items()}
        name = path.name
        finding = shown.get(name) or _same_site(shown, data)
        if finding is None:
            report.not_reproduced[name] = (
                "its case shows no such finding on the current code"
                + (" (after adapting it)" if changed else ""))
            continue
        now = finding_file_name(finding.oracle or finding.kind, finding.key)
        moved = now != name
        report.reproduced[name] = now
        if finding.key in campaign.findings:
            path.unlink()  # a second file of one finding under today's key
            continue
        _restore(finding, data, case, changed or moved, names, types_of)
        campaign.findings[finding.key] = finding
        if changed or moved:
            campaign.write_finding(finding)
        if moved:
            # The same bug under today's key (an edit moved its code): one file for it.
            path.unlink()
    cases += _corpus_cases(corpus, corpus_adapter, report, names, types_of)
    for each in campaign.workers:
        report.imported += len(cases)
        each.import_cases(cases)
    campaign.resumed = report.to_json()
    return report


def _types_of(functions: Functions, where: Mapping[str | None, int | None]
              ) -> Callable[[int | None, str], tuple[VType, ...]]:
    """The argument types of a function called at an address (``case_from_json``'s need)."""
    def types_of(to: int | None, signature: str) -> tuple[VType, ...]:
        name = None if to is None else next(
            (n for n, a in where.items() if a == to), f"0x{to:040x}")
        return functions[name][signature]

    return types_of


def _corpus_cases(corpus: list[tuple[Path, dict[str, Any]]], adapter: Adapter,
                  report: ResumeReport, names: Mapping[str, int],
                  types_of: Callable[[int | None, str], tuple[VType, ...]]) -> list[TxSeq]:
    """The cases of corpus entries in the order they were found, adapted to today's code."""
    cases: list[TxSeq] = []
    found_order = sorted(corpus, key=lambda entry: (_found_at(entry[1]), entry[0].name))
    for path, data in found_order:
        sequence, _ = adapter.adapt(data["sequence"])
        if sequence is None:
            continue
        try:
            cases.append(case_from_json(sequence, names, types_of))
        except CaseError as exc:
            report.unreadable[f"{path.parent.name}/{path.name}"] = exc.one_line()
    return cases


def import_corpus(campaign: Campaign, folder: Path) -> list[str]:
    """Run the entries of a shared corpus folder (``--corpus``) in every worker first.

    Each entry is adapted to today's code like a resumed corpus's (``secant.rerun.adapt``)
    and re-executed within the run's budget. Returns what to tell the user, one line each.
    """
    report = ResumeReport()
    corpus = _entries(folder, report)
    if not corpus:
        return []
    chain = campaign.chain
    functions, where = functions_of(chain)
    types_of = _types_of(functions, where)

    adapter = Adapter(functions, [data["sequence"] for _, data in corpus])
    cases = _corpus_cases(corpus, adapter, report, chain.names(), types_of)
    first = campaign.first.fuzzer.stats
    before = first.execs
    for each in campaign.workers:
        each.import_cases(cases)
    # The first worker runs them here and now; the others (processes, Ray actors) at the
    # start of their first epoch, each within its own share of the budget.
    ran = first.execs - before
    dropped = len(corpus) - len(cases)
    campaign.shared_corpus = {"folder": str(folder), "entries": len(corpus),
                              "run": ran, "adapted": adapter.report.adapted,
                              "dropped": dropped}
    line = (f"corpus {folder}: {ran} of {len(corpus)} entr"
            f"{'y' if len(corpus) == 1 else 'ies'} run first"
            + (f" ({dropped} no longer fit the code)" if dropped else "")
            + (f" ({len(cases) - ran} left out: the budget ran out)"
               if ran < len(cases) else ""))
    if adapter.report.adapted:
        line += f"; {adapter.report.adapted} adapted to today's functions"
    return [line] + [f"corpus {folder}: {name}: {why}"
                     for name, why in report.unreadable.items()]


def _same_site(shown: Mapping[str, Finding], data: Mapping[str, Any]) -> Finding | None:
    """The one finding shown by the same oracle in the same contract and function.

    An edit that moves code changes the key of a finding that names a pc (an assertion's
    site): the finding the recorded case shows in the same function is the same bug.
    """
    def function(name: object) -> str:
        return str(name).split("(", 1)[0]

    same = [f for f in shown.values()
            if (f.oracle or f.kind) == data.get("oracle") and f.contract == data.get("contract")
            and function(f.function) == function(data.get("function"))]
    return same[0] if len(same) == 1 else None


def _found_at(data: Mapping[str, Any]) -> int:
    found = data.get("found_at", 0)
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def _restore(finding: Finding, data: Mapping[str, Any], case: TxSeq, changed: bool,
             names: dict[str, int], types_of: Any) -> None:
    """Give a replayed finding what its file recorded (when it was found, its shrinking)."""
    finding.case = finding.case or case
    finding.sequence = case_to_json(finding.case, names)
    for name in ("execs_to_find", "time_to_find_s"):
        value = data.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            setattr(finding, name, value)
    shrink = data.get("shrink")
    if changed or not isinstance(shrink, dict):
        return  # an adapted case is shrunk again at the end
    finding.shrink = dict(shrink)
    original = data.get("original_sequence")
    if isinstance(original, list):
        finding.original_sequence = list(original)
        try:
            finding.original_case = case_from_json(original, names, types_of)
        except CaseError:
            finding.original_case = None
    detail = data.get("original_detail")
    finding.original_detail = detail if isinstance(detail, str) else finding.detail


def _previous(folder: Path) -> dict[str, Any]:
    """The earlier run's start, end and status from its summary (empty when unreadable)."""
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        manifest = summary["manifest"]
        return {key: manifest.get(key) for key in ("started", "ended", "status")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def recorded_options(folder: Path) -> CampaignOptions | None:
    """The options the campaign of ``folder`` ran with (None: no readable manifest).

    ``path`` is the input as it was resolved. A project's campaigns (one sub-folder
    each) share their options; the first is read.
    """
    candidates: Sequence[Path] = [folder] + (sorted(p for p in folder.iterdir() if p.is_dir())
                                             if folder.is_dir() else [])
    for candidate in candidates:
        try:
            summary = json.loads((candidate / "summary.json").read_text(encoding="utf-8"))
            manifest = summary["manifest"]
            options = dict(manifest["options"])
            # The input as resolved then: the command may have run from another folder.
            options["path"] = manifest["target"]["inputs"][0]["resolved"]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            continue
        return CampaignOptions.from_record(options)
    return None
