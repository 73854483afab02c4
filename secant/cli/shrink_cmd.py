"""``secant shrink``: shrink a recorded finding again, after its campaign."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from secant.cli.fuzz_cmd import Announce, crash_exit
from secant.engine.shrink import DEFAULT_SHRINK_LIMIT
from secant.errors import SecantError, cli_errors


def register(app: typer.Typer) -> None:
    """Add ``shrink`` to the main app."""
    app.command("shrink")(shrink_command)


@cli_errors
def shrink_command(
    findings: Annotated[list[Path], typer.Argument(
        help="Finding files (OUT/findings/*.json of secant fuzz), or a campaign's --out "
             "folder for all of its findings.")],
    shrink_limit: Annotated[int, typer.Option(
        "--shrink-limit", help="Executions spent at most on each finding.")
    ] = DEFAULT_SHRINK_LIMIT,
) -> None:
    """Shrink findings of a finished campaign and rewrite their files.

    The campaign is rebuilt from its summary.json manifest, as secant replay does; each
    file then holds the shrunk sequence, the case found as original_sequence, and the
    figures in shrink. Exit codes: 0 done, 2 bad input (or a finding that no longer
    shows), 3 secant itself failed.
    """
    if shrink_limit < 1:
        raise SecantError("--shrink-limit must be at least 1",
                          "give the executions each finding may spend, e.g. 5000")
    try:
        _shrink(findings, shrink_limit)
    except (SecantError, typer.Exit):
        raise
    except Exception as exc:
        first = findings[0]
        crash_exit(exc, first if first.is_dir() else first.parent.parent,
                   "shrink-traceback.txt")


def _shrink(paths: list[Path], limit: int) -> None:
    from secant.compile.solc import SolcManager
    from secant.rerun.replay import campaign_folders, finding_files, rebuild
    from secant.rerun.reshrink import shrink_finding_file
    from secant.types import case_to_json

    jobs: dict[Path, list[Path]] = {}
    for path in paths:
        if path.is_file():
            if path.parent.name != "findings":
                raise SecantError(f"{path} is not in a campaign's findings/",
                                  "pass files from OUT/findings/ of secant fuzz")
            jobs.setdefault(path.parent.parent, []).append(path)
        elif path.is_dir():
            for folder in campaign_folders(path):
                jobs.setdefault(folder, []).extend(finding_files(folder))
        else:
            raise SecantError(f"{path} does not exist", "pass a finding's file or an --out folder")
    with SolcManager() as manager:
        for folder, files in jobs.items():
            rebuilt = rebuild(folder, manager)
            # An oracle that raises is left out of the other replays: say so.
            rebuilt.campaign.listen(Announce("left out of the other replays; please report it"))
            for note in manager.notes:
                print(f"note: {note}", file=sys.stderr)
            manager.notes.clear()
            names = rebuilt.chain.names()
            for path in files:
                done = shrink_finding_file(rebuilt, path, limit)
                typer.echo(f"{path}: {len(done.before)} -> {len(done.after)} transaction(s) "
                           f"in {done.stats['execs']} execs")
                typer.echo(f"    sequence: {case_to_json(done.after, names)}")
