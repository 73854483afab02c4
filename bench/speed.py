"""Benchmark: executions per second of the default ``secant fuzz``, this tree against a baseline.

Usage: ``.venv/bin/python bench/speed.py [--baseline 051af23 | --baseline-path DIR]
[--only TARGET]... [--configs base,head,head-assert,base-assert] [--execs N | --execs-scale F]
[--seed 0] [--runs 1] [--out DIR] [--markdown] [--no-warm-up] [--list]
[--extra NAME=PATH[:CONTRACT]]...``

Issue 24's measure ("speed per core: the default campaign at least three times faster,
oracles nearly free"). Two versions of secant run in one go, each as a subprocess of the
same interpreter with its tree first on ``PYTHONPATH``: *head*, this working tree (uncommitted
changes included), and *base*, ``--baseline REV`` (default 051af23, the commit before that
work), extracted once with ``git archive`` into ``<secant cache>/bench/speed-<sha>/``, or an
existing checkout given with ``--baseline-path``. Four configurations per target
(``--configs`` picks some): ``base`` and ``head`` with secant's default options,
``head-assert`` and ``base-assert`` with ``--oracles assertion`` (the vault's differ: see
below). Every run is ``secant fuzz TARGET --execs N --seed S --out FRESH --force`` with the
target's own arguments, nothing else.

What is measured, and why:

* **loop exec/s**, the main figure: a small driver (``--driver``, in this file) wraps
  ``Fuzzer.fuzz`` to add up the wall time spent inside it and the executions it ran, then
  calls the command line in-process. That is the fuzzing speed alone: compiling, deploying,
  the oracles' static scans, shrinking the findings and writing the reports are outside
  (they do not grow with the budget, and would hide the loop's speed at small budgets);
* **wall s**: the whole command's time (interpreter start to exit), beside it, so that the
  loop's speed is not bought elsewhere. Compiled outputs are cached by secant, so one
  unrecorded warm-up run per version and target (``--no-warm-up``: none) compiles first;
* the **findings** (their number, and for the oracle fixtures whether the fixture's oracle
  reported its contract) and the **branches covered**, so that no speed is bought with
  findings: with an execution budget and a seed a campaign is deterministic.

Derived: the speed-up ``head / base`` and each version's oracle cost ``1 - default /
assert`` (every oracle against the assertion oracle alone). The issue's aims: the default at
least 3x faster on the maze and 2x on the token; every oracle together costs at most 15 %
on each target; no finding lost. Printed as figures, never as an exit code.

Targets (``--list``; ``--only NAME``, repeatable; default executions in brackets):

``maze`` [60000]
    the maze of seed 0 from bench/maze_gen.py, run as bench/maze.py runs secant on it
    (``--contract Maze --solc-version 0.8.26 --max-sequence-length L``). 60,000
    executions, about 45 s of the default at this tree: the concolic stage starts a
    query whenever its charge is within its share, and one query may cost more than the
    whole share so far, so early on it runs ahead of its share and then waits (at 20,000
    executions it had been charged 2.5 times its share, and head/base was 2.6x, against
    3.9x at 60,000, on 2026-11-27); a ten-minute campaign runs hundreds of thousands.
``token`` [20000]
    bench/contracts/Token.sol, bench/engine.py's ERC-20, with a supply of 10**30.
``vault`` [10000]
    examples/vault-project, a Foundry invariant suite. Its ``-assert`` configurations run
    ``--oracles assertion,property,fuzz-test``: with the assertion oracle alone the suite's
    invariants would not be checked at all (a third of its branches are in them), so only
    the vulnerability oracles are left out, which is what the oracle cost is about.
``ORACLE:Contract`` [5000]
    one vulnerable fixture per rated oracle, from the oracle tests' tables (``VULNERABLE``
    of tests/oracles/test_vulnerabilities.py and tests/oracles/test_dataflow.py): the one
    bench/oracles.py's ``SPEED_FIXTURES`` names for that oracle, else the table's first,
    deployed as the tests deploy it (``--value`` when it is sent ether).

``--extra NAME=PATH[:CONTRACT]`` [5000] (repeatable)
    code kept outside the repository, e.g. a maze of a public maze benchmark fetched
    elsewhere: ``--extra daedaluzz-0=/path/to/generated-mazes/maze-0.sol:Maze``.

Prints a header (machine, commits, date), a table with a row per target, and a line per
aim; writes the logs, every run's output folder and ``results.json`` (every run's figures
and command) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SCRIPT = Path(__file__).resolve()
DEFAULT_BASELINE = "051af23"
MARKER = "secant-speed-bench: "
"""Prefix of the driver's one JSON line in a run's log."""

CONFIGS = ("base", "head", "head-assert", "base-assert")
ASSERT_ONLY = "assertion"
SUITE_CHECKS = "assertion,property,fuzz-test"
"""The ``-assert`` oracles of a Foundry suite: without ``property`` its invariants go unchecked."""
MAZE_SEED = 0
MAZE_SOLC = "0.8.26"
TOKEN_SUPPLY = 10**30
WARM_UP_EXECS = 20
RUN_TIMEOUT_S = 3600

AIM_MAZE = 3.0
AIM_TOKEN = 2.0
AIM_ORACLE_COST = 0.15

GIT_ENV = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # read the repository, never lock it


# --- the driver: runs in the subprocess, with the version's tree first on PYTHONPATH --------


@dataclass
class LoopClock:
    """Wall time spent inside ``Fuzzer.fuzz``, and the executions it ran there."""

    seconds: float = 0.0
    execs: int = 0
    steps: int = 0  # transactions run (a resumed prefix's are not)
    inside: bool = False  # a fuzz inside a fuzz is already timed


def driver(arguments: list[str]) -> int:
    """Run ``secant fuzz ARGUMENTS`` in-process, timing ``Fuzzer.fuzz``; print one JSON line."""
    import secant
    from secant.engine.fuzzer import Fuzzer

    clock = LoopClock()
    original = Fuzzer.fuzz

    def timed_fuzz(self: Any, execs: int | None = None) -> None:
        if clock.inside:
            original(self, execs)
            return
        before = self.stats.execs
        steps = getattr(self.stats, "steps_run", 0)
        clock.inside = True
        started = time.perf_counter()
        try:
            original(self, execs)
        finally:
            clock.seconds += time.perf_counter() - started
            clock.execs += self.stats.execs - before
            clock.steps += getattr(self.stats, "steps_run", 0) - steps
            clock.inside = False

    Fuzzer.fuzz = timed_fuzz  # type: ignore[method-assign]
    from secant.cli.main import app

    exit_code: object = 0
    error = ""
    try:
        returned = app(["fuzz", *arguments], standalone_mode=False)
        exit_code = returned if isinstance(returned, int) else 0
    except SystemExit as stop:
        exit_code = stop.code if stop.code is not None else 0
    except Exception as exc:  # secant failed: the log keeps the traceback
        traceback.print_exc()
        error = f"{type(exc).__name__}: {exc}"
    sys.stdout.flush()
    print(MARKER + json.dumps({"loop_seconds": clock.seconds, "loop_execs": clock.execs,
                               "loop_steps": clock.steps,
                               "exit_code": exit_code, "error": error,
                               "secant": secant.__file__}), flush=True)
    return 0


# --- the two versions -----------------------------------------------------------------------


@dataclass
class Version:
    """A secant tree the runs import (its root goes first on PYTHONPATH)."""

    name: str  # head or base
    tree: Path
    commit: str


def git(*args: str, cwd: Path = ROOT) -> str:
    """A git command's output in ``cwd``'s repository (empty when it fails)."""
    proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          env=GIT_ENV, timeout=120, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def head_version() -> Version:
    """This working tree, its commit marked ``+dirty`` when anything in it changed."""
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain"):
        commit += "+dirty"
    return Version("head", ROOT, commit)


def bench_cache() -> Path:
    """``<secant cache>/bench``: where extracted baselines are kept."""
    from secant.compile.cache import cache_root

    return cache_root() / "bench"


def extract(sha: str, dest: Path) -> None:
    """``git archive SHA | tar -x -C DEST``, through a temporary folder (no half trees)."""
    partial = dest.with_name(f"{dest.name}.partial-{os.getpid()}")
    partial.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", sha],
                               stdout=subprocess.PIPE, env=GIT_ENV)
    assert archive.stdout is not None
    untar = subprocess.run(["tar", "-x", "-C", str(partial)], stdin=archive.stdout,
                           check=False)
    archive.stdout.close()
    if archive.wait() != 0 or untar.returncode != 0:
        raise SystemExit(f"speed.py: could not extract {sha} into {partial}")
    partial.rename(dest)


def baseline_version(rev: str, path: Path | None) -> Version:
    """The baseline: a checkout given by path, or ``rev`` extracted once into the cache."""
    if path is not None:
        tree = path.resolve()
        if not (tree / "secant" / "__init__.py").is_file():
            raise SystemExit(f"speed.py: {tree} holds no secant/ package")
        return Version("base", tree, git("rev-parse", "--short", "HEAD", cwd=tree) or str(tree))
    sha = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if not sha:
        raise SystemExit(f"speed.py: no commit {rev!r} in {ROOT}")
    tree = bench_cache() / f"speed-{sha}"
    if not (tree / "secant" / "__init__.py").is_file():
        print(f"extracting {rev} ({sha[:12]}) into {tree}", file=sys.stderr)
        extract(sha, tree)
    return Version("base", tree, git("rev-parse", "--short", sha))


# --- the targets ----------------------------------------------------------------------------


@dataclass
class Target:
    """A campaign to time: ``secant fuzz`` arguments besides the budget, seed and output."""

    name: str
    execs: int  # default executions
    args: list[str] = field(default_factory=list)
    expected: tuple[str, str] | None = None  # (oracle, contract) a fixture must be reported by
    assert_oracles: str = ASSERT_ONLY  # ``--oracles`` of the -assert configurations
    prepare: Callable[[Path], list[str]] | None = None  # builds the arguments in a folder


def bench_imports() -> None:
    """Let ``import maze_gen`` and the other bench modules work (as when run as a script)."""
    if str(BENCH) not in sys.path:
        sys.path.append(str(BENCH))


def maze_args(folder: Path) -> list[str]:
    """Write the maze of seed 0 into ``folder``; its arguments as bench/maze.py gives them."""
    bench_imports()
    from maze import sequence_cap
    from maze_gen import generate, write

    sol, truth = write(generate(MAZE_SEED), folder / f"maze-{MAZE_SEED}")
    cap = sequence_cap(json.loads(truth.read_text(encoding="utf-8")))
    return [str(sol), "--contract", "Maze", "--solc-version", MAZE_SOLC,
            "--max-sequence-length", str(cap)]


def fixture_targets() -> list[Target]:
    """One vulnerable fixture per rated oracle (bench/oracles.py's choice, else the first)."""
    bench_imports()
    from oracles import RATED, SPEED_FIXTURES, tables

    helpers, fixtures = tables()
    targets = []
    for oracle in RATED:
        cases = [f.case for f in fixtures if f.vulnerable and f.case.oracle == oracle]
        chosen = [c for c in cases if c.contract in SPEED_FIXTURES] or cases
        case = chosen[0]
        args = [str(helpers.FIXTURES / case.file), "--contract", case.contract]
        if case.value:
            args += ["--value", str(case.value)]
        targets.append(Target(case.id, 5000, args,
                              expected=(case.oracle, case.reported or case.contract)))
    return targets


def extra_target(text: str, error: Callable[[str], Any]) -> Target:
    """A target from ``NAME=PATH[:CONTRACT]`` (``--extra``)."""
    name, sep, where = text.partition("=")
    path, _, contract = where.partition(":")
    if not sep or not name or not path or not Path(path).exists():
        error(f"--extra {text!r}: give NAME=PATH[:CONTRACT] with an existing PATH")
    args = [str(Path(path).resolve())] + (["--contract", contract] if contract else [])
    return Target(name, 5000, args)


def all_targets() -> list[Target]:
    """Every target, in the order the table lists them."""
    return [
        Target("maze", 60000, prepare=maze_args),
        Target("token", 20000, [str(BENCH / "contracts" / "Token.sol"), "--contract", "Token",
                                "--arg", str(TOKEN_SUPPLY)]),
        Target("vault", 10000, [str(ROOT / "examples" / "vault-project")],
               assert_oracles=SUITE_CHECKS),
        *fixture_targets(),
    ]


# --- one run --------------------------------------------------------------------------------


@dataclass
class Run:
    """One ``secant fuzz`` run of a configuration on a target, and what it measured."""

    target: str
    config: str
    index: int
    execs: int
    command: list[str]
    pythonpath: str
    log: str
    out: str
    failed: str = ""  # why, when the run gave no figures
    loop_seconds: float = 0.0
    loop_execs: int = 0
    loop_steps: int = 0
    wall_seconds: float = 0.0
    summary_execs: int = 0
    findings: list[list[str]] = field(default_factory=list)  # [oracle, contract]
    branches_covered: int = 0
    branches_total: int = 0
    expected_found: bool | None = None

    @property
    def rate(self) -> float:
        """Executions per second of the fuzzing loop."""
        return self.loop_execs / self.loop_seconds if self.loop_seconds else 0.0

    @property
    def step_rate(self) -> float:
        """Transactions per second of the fuzzing loop (0: not reported)."""
        return self.loop_steps / self.loop_seconds if self.loop_seconds else 0.0

    def shell(self) -> str:
        """The command as one shell line."""
        return f"PYTHONPATH={shlex.quote(self.pythonpath)} {shlex.join(self.command)}"


def config_version(config: str, head: Version, base: Version) -> Version:
    return base if config.startswith("base") else head


def versions_of(configs: Sequence[str], head: Version, base: Version) -> list[Version]:
    """The versions some of ``configs`` run, each once."""
    return [v for v in (base, head) if any(config_version(c, head, base) is v
                                           for c in configs)]


def config_args(config: str, target: Target) -> list[str]:
    return ["--oracles", target.assert_oracles] if config.endswith("-assert") else []


def summaries(out: Path) -> list[dict[str, Any]]:
    """The campaign's summary.json (one per test contract for a multi-contract project)."""
    paths = [out / "summary.json"] if (out / "summary.json").is_file() else sorted(
        out.glob("*/summary.json"))
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def driver_line(log: Path) -> dict[str, Any] | None:
    """The driver's JSON line in a run's log (the last one)."""
    for line in reversed(log.read_text(encoding="utf-8", errors="replace").splitlines()):
        if line.startswith(MARKER):
            value = json.loads(line[len(MARKER):])
            return value if isinstance(value, dict) else None
    return None


def driver_command(arguments: list[str]) -> list[str]:
    """The subprocess that runs ``secant fuzz ARGUMENTS`` through this file's driver."""
    return [sys.executable, str(SCRIPT), "--driver", "--", *arguments]


def execute(version: Version, arguments: list[str], log: Path) -> float:
    """Run the driver on ``arguments`` with ``version``'s tree; its output into ``log``.

    Returns the whole command's wall time.
    """
    command = driver_command(arguments)
    # Speed per core: one worker (the driver times the loop in its own process only; a
    # baseline from before worker processes ignores the variable).
    env = {**os.environ, "PYTHONPATH": str(version.tree), "SECANT_WORKERS": "1"}
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as sink:
        try:
            subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, env=env,
                           cwd=log.parent, timeout=RUN_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            sink.write(f"\nspeed.py: killed after {RUN_TIMEOUT_S} s\n")
    return time.perf_counter() - started


def measure(run: Run, version: Version, arguments: list[str],
            expected: tuple[str, str] | None) -> None:
    """Run it and fill in its figures (or why it failed)."""
    run.wall_seconds = execute(version, arguments, Path(run.log))
    reported = driver_line(Path(run.log))
    if reported is None:
        run.failed = "the driver printed no figures"
        return
    where = Path(reported["secant"]).resolve()
    if not where.is_relative_to(version.tree):
        run.failed = f"imported secant from {where}, not from {version.tree}"
        return
    if reported["error"] or reported["exit_code"] not in (0, 1):
        run.failed = reported["error"] or f"secant exited with {reported['exit_code']}"
        return
    found = summaries(Path(run.out))
    if not found:
        run.failed = "no summary.json"
        return
    if not reported["loop_execs"]:
        run.failed = "Fuzzer.fuzz ran no execution"
        return
    run.loop_seconds = float(reported["loop_seconds"])
    run.loop_execs = int(reported["loop_execs"])
    run.loop_steps = int(reported.get("loop_steps", 0))
    run.summary_execs = sum(int(s.get("execs", 0)) for s in found)
    run.findings = [[f.get("oracle") or f.get("kind") or "?", f.get("contract") or "?"]
                    for s in found for f in s.get("findings", [])]
    run.branches_covered = sum(int(s.get("branches_covered", 0)) for s in found)
    run.branches_total = sum(int(s.get("branches_total", 0)) for s in found)
    if expected is not None:
        run.expected_found = list(expected) in run.findings


def fuzz_args(target: Target, target_args: list[str], config: str, execs: int, seed: int,
              out: Path) -> list[str]:
    return [*target_args, *config_args(config, target), "--execs", str(execs),
            "--seed", str(seed), "--out", str(out), "--force"]


# --- the table ------------------------------------------------------------------------------


@dataclass
class Row:
    """A target's runs, by configuration."""

    target: Target
    execs: int
    runs: dict[str, list[Run]] = field(default_factory=dict)

    def ran(self, config: str) -> list[Run]:
        return [r for r in self.runs.get(config, []) if not r.failed]

    def rate(self, config: str) -> float | None:
        """The median loop rate of a configuration (None: not run, or every run failed)."""
        ran = self.ran(config)
        return statistics.median(r.rate for r in ran) if ran else None

    def speed_up(self) -> float | None:
        head, base = self.rate("head"), self.rate("base")
        return head / base if head and base else None

    def step_speed_up(self) -> float | None:
        """Head against base in transactions per second: the figure that does not depend
        on how long the cases are (an invariant suite's grow)."""
        heads = [r.step_rate for r in self.ran("head") if r.step_rate]
        bases = [r.step_rate for r in self.ran("base") if r.step_rate]
        if not heads or not bases:
            return None
        return statistics.median(heads) / statistics.median(bases)

    def oracle_cost(self, version: str) -> float | None:
        """``1 - default / assert``: what every oracle costs against the assertion oracle."""
        default, alone = self.rate(version), self.rate(f"{version}-assert")
        return 1 - default / alone if default and alone else None


def spread(values: Sequence[float], text: Callable[[float], str]) -> str:
    """The median, with the range when there are several values."""
    middle = text(statistics.median(values))
    if len(values) < 2:
        return middle
    return f"{middle} ({text(min(values))}-{text(max(values))})"


def rate_cell(row: Row, config: str) -> str:
    runs = row.runs.get(config, [])
    if not runs:
        return "-"
    failed = [r for r in runs if r.failed]
    if failed:
        return f"failed (see {failed[0].log})"
    return spread([r.rate for r in runs], lambda v: f"{v:,.0f}")


def per_config(row: Row, configs: Sequence[str], figure: Callable[[list[Run]], str]) -> str:
    """One figure per configuration, joined with slashes ('-' where none ran)."""
    return " / ".join(figure(row.ran(c)) if row.ran(c) else "-" for c in configs)


def same_or_range(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


def expected_cell(row: Row, configs: Sequence[str]) -> str:
    if row.target.expected is None:
        return "-"

    def found(runs: list[Run]) -> str:
        hits = sum(bool(r.expected_found) for r in runs)
        return "yes" if hits == len(runs) else "no" if not hits else f"{hits}/{len(runs)}"

    return per_config(row, [c for c in configs if not c.endswith("-assert")], found)


def ratio_cell(value: float | None, suffix: str) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}x" if suffix == "x" else f"{value * 100:.0f} %"


def table_rows(rows: list[Row], configs: Sequence[str]) -> list[list[str]]:
    """The header and a line per target, as cells."""
    header = ["target", "execs", *(f"{c} exec/s" for c in configs), "head/base",
              "head/base tx/s", "oracle cost head", "oracle cost base", "wall s", "findings",
              "expected found", "branches"]
    lines = [header]
    for row in rows:
        lines.append([
            row.target.name, f"{row.execs:,}",
            *(rate_cell(row, c) for c in configs),
            ratio_cell(row.speed_up(), "x"),
            ratio_cell(row.step_speed_up(), "x"),
            ratio_cell(row.oracle_cost("head"), "%"),
            ratio_cell(row.oracle_cost("base"), "%"),
            per_config(row, configs, lambda runs: spread([r.wall_seconds for r in runs],
                                                          lambda v: f"{v:.1f}")),
            per_config(row, configs, lambda runs: same_or_range([len(r.findings)
                                                                 for r in runs])),
            expected_cell(row, configs),
            per_config(row, configs, lambda runs: same_or_range([r.branches_covered
                                                                 for r in runs])),
        ])
    return lines


def markdown(lines: list[list[str]]) -> str:
    out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
    out += ["| " + " | ".join(line) + " |" for line in lines[1:]]
    return "\n".join(out)


def plain(lines: list[list[str]]) -> str:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                     for line in lines)


# --- the aims -------------------------------------------------------------------------------


def speed_up_aim(rows: list[Row], name: str, aim: float) -> str:
    row = next((r for r in rows if r.target.name == name), None)
    value = row.speed_up() if row is not None else None
    figure = f"{value:.2f}x" if value is not None else "not measured"
    return f"{name}: head/base {figure} (aim: at least {aim:g}x)"


def oracle_cost_aim(rows: list[Row]) -> str:
    lines = []
    for version in ("head", "base"):
        costs = [(cost, r.target.name) for r in rows
                 if (cost := r.oracle_cost(version)) is not None]
        if costs:
            cost, name = max(costs)
            lines.append(f"{version} {cost * 100:.0f} % on {name}")
        else:
            lines.append(f"{version} not measured")
    return (f"oracle cost, the largest of 1 - default/assert: {'; '.join(lines)} "
            f"(aim: head at most {AIM_ORACLE_COST * 100:.0f} % on each)")


def findings_aim(rows: list[Row]) -> str:
    """Targets where head found fewer than base, or missed the fixture's expected finding."""
    lost = []
    for row in rows:
        head, base = row.ran("head"), row.ran("base")
        if head and base:
            fewer = min(len(r.findings) for r in head)
            before = max(len(r.findings) for r in base)
            if fewer < before:
                lost.append(f"{row.target.name} (findings {fewer} < base {before})")
        if row.target.expected is not None and any(r.expected_found is False for r in head):
            base_too = " (base missed it too)" if base and not any(
                r.expected_found for r in base) else ""
            lost.append(f"{row.target.name} (expected finding missed{base_too})")
    return "findings lost by head: " + (", ".join(lost) if lost else "none")


# --- main -----------------------------------------------------------------------------------


def header(head: Version, base: Version, args: argparse.Namespace) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"secant speed: {platform.platform()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}; head {head.commit}, baseline {base.commit}; "
            f"{when}; seed {args.seed}, {args.runs} run(s) each")


def budget(target: Target, args: argparse.Namespace) -> int:
    if args.execs is not None:
        return int(args.execs)
    return max(1, round(target.execs * float(args.execs_scale)))


def add_baseline_options(parser: argparse.ArgumentParser) -> None:
    """``--baseline REV`` and ``--baseline-path DIR`` (``baseline_version``'s arguments)."""
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, metavar="REV",
                        help=f"the baseline commit (default {DEFAULT_BASELINE})")
    parser.add_argument("--baseline-path", type=Path, metavar="DIR",
                        help="an existing checkout to use as the baseline instead")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_baseline_options(parser)
    parser.add_argument("--only", action="append", default=[], metavar="TARGET",
                        help="time only this target (repeatable; see --list)")
    parser.add_argument("--configs", default=",".join(CONFIGS),
                        help=f"comma-separated, of {', '.join(CONFIGS)}")
    parser.add_argument("--execs", type=int, help="executions of every run (instead of "
                        "each target's default)")
    parser.add_argument("--execs-scale", type=float, default=1.0, metavar="F",
                        help="multiplies each target's default executions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1,
                        help="runs per configuration (the median rate, with min-max)")
    parser.add_argument("--out", type=Path, help="logs, outputs and results.json (default: "
                        "a temporary folder)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--no-warm-up", action="store_true",
                        help="no unrecorded first run per version and target")
    parser.add_argument("--list", action="store_true", help="print the targets and exit")
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=PATH[:CONTRACT]",
                        help="another target: a contract file or project outside the tree")
    args = parser.parse_args(argv)
    configs = [c for c in args.configs.split(",") if c]
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown or not configs:
        parser.error(f"--configs: unknown {', '.join(unknown) or 'nothing'}; "
                     f"known: {', '.join(CONFIGS)}")
    args.configs = [c for c in CONFIGS if c in configs]
    if args.runs < 1 or (args.execs is not None and args.execs < 1) or args.execs_scale <= 0:
        parser.error("--runs, --execs and --execs-scale must be positive")
    args.error = parser.error
    return args


def write_results(out: Path, info: dict[str, Any], rows: list[Row]) -> None:
    runs = [asdict(r) | {"rate": r.rate, "shell": r.shell()}
            for row in rows for config in row.runs.values() for r in config]
    (out / "results.json").write_text(json.dumps(info | {"runs": runs}, indent=1) + "\n",
                                      encoding="utf-8")


def progress(run: Run) -> None:
    if run.failed:
        text = f"failed: {run.failed} (see {run.log})"
    else:
        text = (f"{run.rate:,.0f} exec/s ({run.loop_execs} in {run.loop_seconds:.1f} s), "
                f"wall {run.wall_seconds:.1f} s, {len(run.findings)} finding(s), "
                f"{run.branches_covered}/{run.branches_total} branches")
    print(f"  {run.target} {run.config} #{run.index}: {text}", file=sys.stderr)


def target_args(target: Target, out: Path, folder: Path) -> list[str] | None:
    """The target's ``secant fuzz`` arguments, built when needed (None: building failed, the
    traceback is in ``folder/prepare.txt``)."""
    if target.prepare is None:
        return target.args
    try:
        return target.prepare(out / "inputs")
    except Exception:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "prepare.txt").write_text(traceback.format_exc(), encoding="utf-8")
        return None


def bench_target(row: Row, head: Version, base: Version, args: argparse.Namespace,
                 out: Path) -> None:
    """Every configuration of one target, ``--runs`` times, one run at a time."""
    target = row.target
    folder = out / target.name.replace(":", "-")
    args_of = target_args(target, out, folder)
    if args_of is None:
        for config in args.configs:
            run = Run(target.name, config, 0, row.execs, [], "", str(folder / "prepare.txt"),
                      "", failed="preparing the target failed")
            row.runs[config] = [run]
            progress(run)
        return
    if not args.no_warm_up:
        for version in versions_of(args.configs, head, base):
            warm = fuzz_args(target, args_of, "", WARM_UP_EXECS, args.seed,
                             folder / f"warm-up-{version.name}" / "out")
            execute(version, warm + ["--shrink-limit", "0"],
                    folder / f"warm-up-{version.name}" / "log.txt")
    for index in range(args.runs):
        for config in args.configs:
            where = folder / f"{config}-{index}"
            version = config_version(config, head, base)
            command = fuzz_args(target, args_of, config, row.execs, args.seed, where / "out")
            run = Run(target.name, config, index, row.execs,
                      driver_command(command),
                      str(version.tree), str(where / "log.txt"), str(where / "out"))
            measure(run, version, command, target.expected if not config.endswith("-assert")
                    else None)
            row.runs.setdefault(config, []).append(run)
            progress(run)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--driver"]:
        return driver(argv[2:] if argv[1:2] == ["--"] else argv[1:])
    args = parse(argv)
    targets = all_targets() + [extra_target(text, args.error) for text in args.extra]
    if args.list:
        for target in targets:
            print(f"{target.name}  ({target.execs} executions)")
        return 0
    names = [t.name for t in targets]
    unknown = [name for name in args.only if name not in names]
    if unknown:
        args.error(f"unknown target(s) {', '.join(unknown)}; see --list")
    chosen = [t for t in targets if not args.only or t.name in args.only]

    head = head_version()
    needs_base = any(c.startswith("base") for c in args.configs)
    base = (baseline_version(args.baseline, args.baseline_path) if needs_base
            else Version("base", ROOT, "(not run)"))
    out = (args.out.resolve() if args.out is not None
           else Path(tempfile.mkdtemp(prefix="secant-speed-")))
    out.mkdir(parents=True, exist_ok=True)
    title = header(head, base, args)
    print(title, file=sys.stderr)
    info: dict[str, Any] = {"header": title, "argv": argv, "head": asdict(head),
                            "base": asdict(base), "configs": args.configs}
    info = json.loads(json.dumps(info, default=str))
    rows = []
    for target in chosen:
        row = Row(target, budget(target, args))
        rows.append(row)
        bench_target(row, head, base, args, out)
        write_results(out, info, rows)

    lines = table_rows(rows, args.configs)
    defaults = [c for c in args.configs if not c.endswith("-assert")]
    legend = (f"exec/s: the fuzzing loop's executions per second; tx/s: its transactions "
              f"per second (cases of other lengths compare); -assert: --oracles "
              f"{ASSERT_ONLY} (vault: {SUITE_CHECKS}); oracle cost: 1 - default/assert; "
              f"wall s, findings, branches: {' / '.join(args.configs)}; expected found (the "
              f"fixture's oracle reported its contract): {' / '.join(defaults) or '-'}")
    body = legend + "\n\n" + (markdown(lines) if args.markdown else plain(lines))
    aims = [speed_up_aim(rows, "maze", AIM_MAZE), speed_up_aim(rows, "token", AIM_TOKEN),
            oracle_cost_aim(rows), findings_aim(rows)]
    print(title + "\n\n" + body + "\n\n" + "\n".join(aims))
    write_results(out, info | {"table": body, "aims": aims}, rows)
    print(f"\nlogs, outputs and results.json in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
