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


def prepare_output(folder: Path, replace: bool) -> None:
    """Make ``folder`` ready for a new run: refuse an earlier run's, or clear it."""
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
    folder.mkdir(parents=True, exist_ok=True)
