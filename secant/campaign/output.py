"""The output folder of a run: never two campaigns' files mixed in one folder.

A folder holds a campaign's output when it has a ``summary.json``, a ``corpus/`` or a
``findings/`` (or sub-folders that do, one per campaign of a test contract). A new run
refuses such a folder unless told to replace it; replacing removes exactly those entries
and leaves anything else in the folder alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from secant.errors import SecantError
from secant.learn.dataset import DATASET_FILE

_ENTRIES = ("summary.json", "corpus", "findings")
"""What marks a folder as a campaign's output."""

_WRITTEN = (*_ENTRIES, "findings.sarif", "reproducers", "coverage", "coverage.lcov",
            "coverage.png", "coverage.svg", "frontier.json", "traceback.txt", DATASET_FILE)
"""Everything a campaign writes into its folder: replacing the folder removes these."""


class OutputInUse(SecantError):
    """The output folder holds an earlier campaign's files."""


def holds_output(folder: Path) -> bool:
    """Whether ``folder`` itself holds a campaign's files."""
    return any((folder / entry).exists() for entry in _ENTRIES)


def earlier_outputs(folder: Path) -> list[Path]:
    """The folders under (and including) ``folder`` that hold a campaign's files."""
    if not folder.is_dir():
        return []
    found = [folder] if holds_output(folder) else []
    found += [child for child in sorted(folder.iterdir())
              if child.is_dir() and holds_output(child)]
    return found


class OutputNotFolder(SecantError):
    """The output path is, or lies under, something that is not a folder."""


def check_output(folder: Path) -> None:
    """Refuse an output path a folder cannot be made at (a file there or above it).

    Checked before any work, so a mistyped ``--out`` costs no compilation.
    """
    for path in (folder, *folder.parents):
        if path.is_dir():
            return
        if path.exists():
            what = "is a file" if path == folder else f"lies under {path}, a file"
            raise OutputNotFolder(f"--out {folder} {what}, not a folder",
                                  "pass --out with the path of a folder (a missing one is created)")


def prepare_output(folder: Path, replace: bool) -> None:
    """Make ``folder`` ready for a new run: refuse an earlier run's, or clear it."""
    check_output(folder)
    earlier = earlier_outputs(folder)
    if earlier and not replace:
        raise OutputInUse(f"{folder} holds the output of an earlier campaign",
                          "pass --out with a new folder, or --force to replace it")
    for path in earlier:
        for entry in _WRITTEN:
            target = path / entry
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        if path != folder and not any(path.iterdir()):
            path.rmdir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputNotFolder(f"cannot create the output folder {folder}: "
                              f"{exc.strerror or exc}",
                              "pass --out with a folder you can write to") from None
