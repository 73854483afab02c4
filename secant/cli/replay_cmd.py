"""``secant replay``: rebuild a campaign from its output folder and run its findings again."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from secant.cli.fuzz_cmd import EXIT_FINDINGS, Announce, crash_exit
from secant.errors import SecantError, cli_errors
from secant.types import finding_label

if TYPE_CHECKING:
    from rich.console import Console

    from secant.rerun.replay import Rebuilt
    from secant.types import TxSeq

_KINDS = ("findings", "corpus")


def register(app: typer.Typer) -> None:
    """Add ``replay`` to the main app."""
    app.command("replay")(replay_command)


@cli_errors
def replay_command(
    path: Annotated[Path, typer.Argument(
        help="A campaign's output folder (secant fuzz --out), one of its findings/*.json "
             "or corpus/*.json, or with --corpus its corpus/ folder.")],
    corpus: Annotated[bool, typer.Option(
        "--corpus", help="Replay the corpus entries instead of the findings, and list the "
                         "findings each shows.")] = False,
    trace: Annotated[bool | None, typer.Option(
        "--trace/--no-trace", help="Print each case transaction by transaction (default: "
                                   "for a single file only).")] = None,
) -> None:
    """Rebuild a campaign's chain from its summary.json manifest and replay its cases.

    Each finding's case runs alone on a fresh chain built as the campaign built it (the
    inputs compiled again with the recorded settings): it reproduces when the same
    finding (the same key) shows again. Exit codes: 0 every finding reproduced (with
    --corpus: every entry ran), 1 otherwise, 2 bad input, 3 secant itself failed (the
    traceback is in the campaign folder's replay-traceback.txt).
    """
    try:
        reproduced = _replay(path, corpus, trace)
    except (SecantError, typer.Exit):
        raise
    except Exception as exc:
        # Next to the campaign's output, under a name of its own (a fuzz crash's stays).
        crash_exit(exc, path if path.is_dir() else path.parent.parent,
                   "replay-traceback.txt")
    if not reproduced:
        raise typer.Exit(EXIT_FINDINGS)


def _replay(path: Path, corpus: bool, trace: bool | None) -> bool:
    """Replay what ``path`` names; whether everything reproduced (or ran, for a corpus)."""
    from rich.console import Console

    from secant.compile.solc import SolcManager
    from secant.rerun.replay import (
        SUMMARY,
        campaign_folders,
        corpus_files,
        finding_files,
        rebuild,
    )

    if not path.exists():
        raise SecantError(f"{path} does not exist", "pass a secant fuzz --out folder")
    jobs: list[tuple[Path, list[Path] | None, bool]] = []  # folder, files (None: all), findings
    if path.is_file():
        if path.parent.name not in _KINDS:
            raise SecantError(f"{path} is not in a campaign's findings/ or corpus/",
                              "pass a file from OUT/findings/ or OUT/corpus/ of secant fuzz")
        jobs.append((path.parent.parent, [path], path.parent.name == "findings"))
        trace = True if trace is None else trace
    elif corpus and path.name == "corpus" and (path.parent / SUMMARY).is_file():
        jobs.append((path.parent, None, False))
    else:
        jobs.extend((folder, None, not corpus) for folder in campaign_folders(path))
    console = Console(highlight=False, soft_wrap=True)
    everything = True
    with SolcManager() as manager:
        for folder, files, findings in jobs:
            rebuilt = rebuild(folder, manager)
            # An oracle that raises is left out of the other replays: say so.
            rebuilt.campaign.listen(Announce("left out of the other replays; please report it"))
            for note in manager.notes:
                print(f"note: {note}", file=sys.stderr)
            manager.notes.clear()
            chosen = files if files is not None else (
                finding_files(folder) if findings else corpus_files(folder))
            everything &= _report(console, rebuilt, chosen, findings, bool(trace))
    return everything


def _report(console: Console, rebuilt: Rebuilt, files: list[Path], findings: bool,
            trace: bool) -> bool:
    """Replay ``files``, print a verdict for each (and its trace); whether all held."""
    from rich.text import Text

    from secant.rerun.replay import replay_file

    manifest = rebuilt.recorded.data
    name = (manifest.get("campaign") or {}).get("name") or rebuilt.folder.name
    when = manifest.get("ended") or manifest.get("started")
    console.print(Text.assemble((name, "bold"), f" ({rebuilt.folder}: seed "
                                f"{manifest.get('seed')}, {manifest.get('status')}"
                                + (f" {when}" if when else "") + ")"))
    if not files:
        console.print(f"  no {'findings' if findings else 'corpus entries'} to replay")
        return True
    good = 0
    for path in files:
        replay = replay_file(rebuilt, path, finding=findings)
        data = replay.data
        label = f"{path.parent.name}/{path.name}"
        if replay.error is not None:
            verdict, style, tail = "not replayed", "bold red", f": {replay.error}"
        elif not findings:
            verdict, style = "replayed", "bold green"
            tail = (f": {len(replay.case or ())} transaction(s), shows "
                    + (", ".join(sorted(replay.shown)) or "no finding"))
        elif replay.reproduced:
            verdict, style, tail = "reproduced", "bold green", ""
        else:
            verdict, style = "NOT reproduced", "bold red"
            others = [f"{finding_label(f.kind, f.severity, f.confidence)} "
                      f"{f.contract}.{f.function}: {f.detail}" for f in replay.shown.values()]
            tail = (": the case now shows " + "; ".join(others) if others
                    else ": the case now shows no finding")
        what = (f"{finding_label(data.get('kind'), data.get('severity'), data.get('confidence'))}"
                f" {data.get('contract')}.{data.get('function')} at "
                f"{data.get('source') or 'pc ' + str(data.get('pc'))}: {data.get('detail')} "
                if findings else "")
        good += replay.reproduced if findings else replay.error is None
        console.print(Text.assemble((f"{verdict:>14}", style), f"  {what}({label}){tail}"))
        if trace and replay.case is not None:
            _print_trace(console, rebuilt, replay.case,
                         data.get("source") if findings else None)
    noun = "findings reproduced" if findings else "corpus entries replayed"
    console.print(f"  {good}/{len(files)} {noun}")
    return good == len(files)


def _print_trace(console: Console, rebuilt: Rebuilt, case: TxSeq, source: str | None) -> None:
    """The case transaction by transaction, then the failing check's line of code."""
    from rich.text import Text

    from secant.rerun.explain import explain, source_line

    if not case:
        console.print(Text("    (no transaction: it fails on the deployed state)"))
    for step in explain(rebuilt.chain, case):
        moves = [part for part in (
            f"+{step.blocks} block{'s' if step.blocks != 1 else ''}" if step.blocks else "",
            f"+{step.time} s" if step.time else "",
            f"{step.value} wei" if step.value else "") if part]
        console.print(Text.assemble(
            f"    {step.index + 1}. ", (step.sender, "cyan"), " -> ",
            (f"{step.contract}.{step.call}", "bold"),
            f"  ({', '.join(moves)})" if moves else ""))
        console.print(Text(f"         {step.outcome}", style="green" if step.ok else "red"))
        for event in step.events:
            console.print(Text(f"         event {event}"))
    if source:
        code = source_line(rebuilt.chain, source)
        console.print(Text(f"    failing check at {source}" + (f": {code}" if code else "")))
