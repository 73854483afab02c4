"""Benchmark: instructions per execution of ``secant fuzz``, this tree against a baseline.

Usage: ``.venv/bin/python bench/instructions.py [--baseline 051af23 | --baseline-path DIR]
[--only TARGET]... [--execs 4000] [--from 1000] [--seed 0] [--out DIR] [--list]``

``bench/speed.py`` times the loop, and a run's time moves by a few per cent with whatever
else the machine does, more than most single changes to the loop move it. This counts
instead: each version runs each target under callgrind (``valgrind --tool=callgrind``,
about fifty times slower than a plain run), twice, with ``--execs FROM`` and ``--execs
EXECS``; the second run's instructions less the first's, over ``EXECS - FROM``, are the
instructions of one execution of the loop (compiling, deploying and writing the reports
cost about the same in both; a finding made between the two budgets adds its shrinking).
The count does not depend on the machine's load; the runs fix the string hash
(``PYTHONHASHSEED=0``: sets and dicts of strings and bytes then behave the same in every
run) and use one worker (``SECANT_WORKERS=1``: callgrind follows one process). Valgrind
comes from the operating system's packages (``apt-get install valgrind``).

The targets are ``bench/speed.py``'s (``--list``), with their arguments: the maze, the
token, the vault suite and the oracle fixtures. The table gives, per target, both
versions' millions of instructions per execution, ``base / head`` (above 1: head runs
fewer) and both campaigns' transactions. Equal transactions mean the two versions ran the
same campaign, so the ratio compares the same work; a change that alters what a campaign
does shows as different transactions. Every run's log, output folder and callgrind file
(``callgrind_annotate`` reads it) stay in ``--out``. Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))

from speed import (  # noqa: E402  (bench/ is no package: speed.py is found through sys.path)
    Target,
    Version,
    add_baseline_options,
    all_targets,
    baseline_version,
    head_version,
    summaries,
    target_args,
)

DEFAULT_EXECS = 4000
DEFAULT_FROM = 1000
RUN_TIMEOUT_S = 4 * 3600
LAUNCH = "import sys; from secant.cli.main import app; sys.exit(app())"
"""The command line, as the ``secant`` script starts it (run outside the tree: ``-c`` puts
the working folder first on the path)."""
_COLLECTED = re.compile(r"==\d+==\s+Collected\s*:\s*([\d,]+)")


@dataclass
class Count:
    """One version's count on one target."""

    version: str
    instructions: dict[int, int]  # by --execs
    transactions: int = 0  # of the longer run
    failed: str = ""

    def per_exec(self, start: int, stop: int) -> float | None:
        """Instructions of one execution between the two runs (None: a run failed)."""
        if self.failed or start not in self.instructions or stop not in self.instructions:
            return None
        return (self.instructions[stop] - self.instructions[start]) / (stop - start)


def collected(log: str) -> int | None:
    """The instructions callgrind counted, from its report at the end of ``log``."""
    found = _COLLECTED.findall(log)
    return int(found[-1].replace(",", "")) if found else None


def command(arguments: list[str], execs: int, seed: int, out: Path,
            profile: Path | None) -> list[str]:
    """``secant fuzz`` on ``arguments``; under callgrind when ``profile``.

    Which version runs is the environment's choice (``environment``: its tree first on
    the path), so the command is the same for both.
    """
    fuzz = [sys.executable, "-c", LAUNCH, "fuzz", *arguments, "--execs", str(execs),
            "--seed", str(seed), "--out", str(out), "--force"]
    if profile is None:
        return fuzz
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", *fuzz]


def environment(version: Version) -> dict[str, str]:
    """One worker, a fixed string hash, and ``version``'s tree first on the path."""
    return {**os.environ, "PYTHONPATH": str(version.tree), "PYTHONHASHSEED": "0",
            "SECANT_WORKERS": "1"}


def imports_from(version: Version, folder: Path) -> Path:
    """Where ``version``'s environment imports secant from, run in ``folder``."""
    done = subprocess.run([sys.executable, "-c", "import secant; print(secant.__file__)"],
                          capture_output=True, text=True, env=environment(version),
                          cwd=folder, check=False)
    return Path(done.stdout.strip()).resolve()


def count(version: Version, arguments: list[str], budgets: tuple[int, int], seed: int,
          folder: Path) -> Count:
    """Warm the compiler's cache, then count both budgets under callgrind."""
    result = Count(version.name, {})
    folder.mkdir(parents=True, exist_ok=True)
    where = imports_from(version, folder)
    if not where.is_relative_to(version.tree):
        result.failed = f"imports secant from {where}, not from {version.tree}"
        return result
    env = environment(version)
    warm = folder / "warm-up"
    subprocess.run(command(arguments, 20, seed, warm, None), env=env, cwd=folder,
                   capture_output=True, timeout=RUN_TIMEOUT_S, check=False)
    for execs in budgets:
        out = folder / f"execs-{execs}"
        out.mkdir(parents=True, exist_ok=True)
        log = folder / f"execs-{execs}.log"
        with log.open("w", encoding="utf-8") as sink:
            subprocess.run(command(arguments, execs, seed, out / "campaign",
                                   folder / f"callgrind-{execs}.out"),
                           stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=folder,
                           timeout=RUN_TIMEOUT_S, check=False)
        found = collected(log.read_text(encoding="utf-8", errors="replace"))
        if found is None:
            result.failed = f"callgrind reported no count (see {log})"
            return result
        result.instructions[execs] = found
        runs = summaries(out / "campaign")
        if not runs:
            result.failed = f"no summary.json (see {log})"
            return result
        result.transactions = sum(int(s.get("transactions", 0)) for s in runs)
    return result


def row(target: Target, counts: list[Count], start: int, stop: int) -> str:
    """One line of the table."""
    per = {c.version: c.per_exec(start, stop) for c in counts}
    cells = [target.name, f"{start:,}-{stop:,}"]
    for c in counts:
        value = per[c.version]
        cells.append(f"{value / 1e6:.4f}" if value is not None else f"failed: {c.failed}")
    base, head = per.get("base"), per.get("head")
    cells.append(f"{base / head:.3f}" if base and head else "-")
    cells += [" / ".join(f"{c.transactions:,}" for c in counts)]
    return "  ".join(cells)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_baseline_options(parser)
    parser.add_argument("--only", action="append", default=[], metavar="TARGET",
                        help="count only this target (repeatable; default: the token)")
    parser.add_argument("--execs", type=int, default=DEFAULT_EXECS,
                        help=f"executions of the longer run (default {DEFAULT_EXECS})")
    parser.add_argument("--from", dest="start", type=int, default=DEFAULT_FROM,
                        help=f"executions of the shorter run (default {DEFAULT_FROM})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="logs, outputs and callgrind files "
                        "(default: a temporary folder)")
    parser.add_argument("--list", action="store_true", help="print the targets and exit")
    args = parser.parse_args(argv)
    if not 0 < args.start < args.execs:
        parser.error("--from must be positive and below --execs")
    args.error = parser.error
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    targets = {t.name: t for t in all_targets()}
    if args.list:
        print("\n".join(targets))
        return 0
    names = args.only or ["token"]
    unknown = [n for n in names if n not in targets]
    if unknown:
        args.error(f"--only: unknown {', '.join(unknown)}; see --list")
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py: valgrind is not installed; install the operating "
                         "system's valgrind package (apt-get install valgrind)")
    head = head_version()
    base = baseline_version(args.baseline, args.baseline_path)
    out = args.out or Path(tempfile.mkdtemp(prefix="secant-instructions-"))
    print(f"head {head.commit}, baseline {base.commit}; seed {args.seed}; executions "
          f"{args.start:,} to {args.execs:,}; PYTHONHASHSEED=0, one worker")
    print("target  executions  base Minstr/exec  head Minstr/exec  base/head  "
          "transactions base / head")
    for name in names:
        target = targets[name]
        folder = out / name.replace(":", "-")
        arguments = target_args(target, out, folder)
        if arguments is None:
            print(f"{name}  failed to prepare (see {folder / 'prepare.txt'})")
            continue
        counts = [count(version, arguments, (args.start, args.execs), args.seed,
                        folder / version.name) for version in (base, head)]
        print(row(target, counts, args.start, args.execs), flush=True)
    print(f"logs, outputs and callgrind files in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
