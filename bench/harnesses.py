"""Public fuzzing-harness suites under ``secant fuzz`` and under forge, same machine, same budget.

Usage::

    S=<folder of the checkouts>
    .venv/bin/python bench/harnesses.py \\
        --suite echidna-exercises=$S/building-secure-contracts/program-analysis/echidna/exercises \\
        --suite echidna-tests=$S/echidna/tests/solidity \\
        --suite medusa-tests=$S/medusa/fuzzing/testdata/contracts \\
        --suite weth-invariants=$S/weth-invariant-testing \\
        --suite uniswap-v3-echidna=$S/v3-core \\
        [--lib forge-std=$S/forge-std] [--time 60] [--suites a,b] [--only REGEX] \\
        [--seeds 0,1,2] [--no-forge] [--report FILE] [--json FILE]

The suites are other people's harnesses, checked out by the user (``bench/harness_suites.py``
says from where, which harnesses are run and what their repositories expect). Each harness
is run by ``bin/secant fuzz --workers 1`` for ``--time`` seconds (one core) and, when it is a
Foundry test contract, by ``forge test`` (forge 1.7.1 from npm, installed into the cache on
first use) with the same budget, once per seed of ``--seeds`` (default 0): secant with
``--seed S``, forge with ``--fuzz-seed S``, each run from fresh copies of the project (forge's
recorded failures removed) into its own output folder. forge fuzzes each invariant or fuzz
test in its own campaign, so with ``-j 1`` each of a harness's N tests gets ``--time / N`` seconds
(``invariant.timeout``, ``fuzz.timeout``; runs set out of reach so the timeout ends them) and
the harness takes the same wall time on one core as under secant. Invariant shrinking is off
in forge so that a test's duration is its time to the failure.

forge compiles with solc-js through a small node script the bench writes into its cache (it
answers ``--version`` and ``--standard-json`` as solc does; ``secant/report/forge.py``
installs forge and writes the script, for the reproducer tests too); secant is given the same
``--solc-version`` for those harnesses, so both fuzz the same bytecode. Projects and patched
variants are copied into the cache (one copy per tool) and never modified in place;
``--lib NAME=PATH`` puts a library at ``lib/NAME`` of the copies, in place of the
checkout's own (the WETH project pins a 2023 forge-std that needs its own ds-test
submodule; docs/harness-bench.md was run with forge-std v1.16.1).

Prints a markdown table, one row per property / assertion function / optimization target /
invariant / fuzz test: what the suite's repository expects, then secant's and forge's result:
``found in T s`` (time from the start of the campaign, compilation excluded), ``holds``
(no failure, as expected or nothing expected), ``missed`` (the repository expects a failure),
``best V`` (optimization), ``error: <first line>``, or ``n/a`` (forge runs only Foundry
invariant and fuzz tests). A figure, never a pass/fail. With several seeds a check found on
every seed reads ``found in M s (median of N seeds: t1, t2, ...)``, each seed's time in
the order of ``--seeds``; found on some only, ``found in K of N (median of those found M s:
t1, missed, ...)``, the other seeds' own result in their place; found on none, the one
result they share, or each seed's (``seed S: ...; ...``) when they differ.

``--json`` writes one entry per harness: ``suite``, ``harness``, ``runs`` (one per seed, in
the order of ``--seeds``: ``seed``, ``secant`` and ``forge``, each a run's command, wall
time and what the tool reported, ``forge`` null when forge did not run) and, as before
``--seeds`` existed, ``secant`` and ``forge``: the first seed's runs again.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import Any

from harness_suites import (
    ASSERTION,
    FAILS,
    FORGE_KINDS,
    FUZZ,
    HOLDS,
    INVARIANT,
    OPTIMIZATION,
    PROPERTY,
    SUITES,
    Check,
    Harness,
    Suite,
)

from secant.report.forge import FORGE_VERSION, ForgeUnavailable, install_forge, solc_wrapper

REPO = Path(__file__).resolve().parents[1]
SECANT = REPO / "bin" / "secant"
FORGE_RUNS = 1_000_000_000
"""Runs no campaign reaches within the budget, so forge's timeout ends every campaign."""

COPY_IGNORE = shutil.ignore_patterns(".git", "out", "cache", "broadcast", "secant-out")


# --- tool runs ------------------------------------------------------------------------------


@dataclass
class ToolRun:
    """One tool's run of one harness: its command, wall time and what it reported."""

    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    wall_s: float = 0.0
    error: str = ""
    findings: list[dict[str, Any]] = field(default_factory=list)
    properties: list[dict[str, Any]] = field(default_factory=list)
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    execs: int = 0

    def shell(self) -> str:
        """The command as one shell line, with its environment and folder."""
        prefix = " ".join(f"{k}={v}" for k, v in self.env.items())
        line = (prefix + " " if prefix else "") + shlex.join(self.command)
        return f"(cd {shlex.quote(self.cwd)} && {line})" if self.cwd else line


def first_line(text: str) -> str:
    """The first meaningful line of a tool's error output, without an ``error:`` prefix."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.match(r"(error|Error)\b", ln):
            return re.sub(r"^(error|Error)(\[\w+\])?:\s*", "", ln)[:200]
    return lines[-1][:200] if lines else "no output"


def run(command: list[str], cwd: Path | None, env: dict[str, str],
        timeout: float, drop: tuple[str, ...] = ()) -> tuple[int, str, str, float]:
    """Run a command; return its exit code, stdout, stderr and wall seconds.

    ``env`` is added to this process's environment, less the variables named in ``drop``.
    """
    full = {k: v for k, v in os.environ.items() if k not in drop}
    full.update(env)
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, cwd=cwd, env=full, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return -1, out, f"error: no answer within {timeout:.0f} s", time.perf_counter() - start
    return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start


def run_secant(harness: Harness, target: Path, budget: int, out: Path, seed: int) -> ToolRun:
    """``bin/secant fuzz`` on one harness; reads every ``summary.json`` under ``out``."""
    command = [str(SECANT), "fuzz", str(target), "--workers", "1"]  # one core, as forge's
    if harness.project:
        command += ["--match-contract", f"^{harness.contract}$"]
    else:
        command += ["--contract", harness.contract]
    # Shrinking off, as forge's is below: a harness's wall time is then its campaign's.
    command += ["--time", str(budget), "--seed", str(seed), "--out", str(out), "--quiet",
                "--force", "--shrink-limit", "0"]
    if harness.forge and harness.solc:
        command += ["--solc-version", harness.solc]
    command += list(harness.secant_args)
    result = ToolRun(command)
    if out.exists():
        shutil.rmtree(out)
    code, _, err, result.wall_s = run(command, None, {}, timeout=4 * budget + 900)
    summaries = sorted(out.rglob("summary.json")) if out.is_dir() else []
    if code not in (0, 1) or not summaries:
        result.error = first_line(err)
        return result
    for path in summaries:
        summary = json.loads(path.read_text(encoding="utf-8"))
        result.findings += summary.get("findings", [])
        result.properties += summary.get("properties", [])
        result.execs += int(summary.get("execs", 0))
    return result


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(h|ms|µs|us|ns|m|s)\b")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}


def forge_seconds(text: str) -> float:
    """Seconds in a forge duration such as ``9s 500ms 289µs 753ns``."""
    return sum(float(n) * _UNIT[u] for n, u in _DURATION.findall(text or ""))


def forge_json(stdout: str) -> dict[str, Any] | None:
    """The test-results object ``forge test --json`` printed, or None."""
    try:
        value = json.loads(stdout)
        return value if isinstance(value, dict) else None
    except ValueError:
        pass
    for line in stdout.splitlines():
        if line.startswith("{") and '"test_results"' in line:
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def run_forge(harness: Harness, project: Path, budget: int, forge: Path,
              solc: Path, seed: int) -> ToolRun:
    """``forge test`` on one test contract with the budget split over its tests."""
    tests = [c for c in harness.checks if c.kind in FORGE_KINDS]
    each = max(1, budget // max(1, len(tests)))
    env = {
        "FOUNDRY_INVARIANT_RUNS": str(FORGE_RUNS),
        "FOUNDRY_INVARIANT_TIMEOUT": str(each),
        "FOUNDRY_INVARIANT_SHRINK_RUN_LIMIT": "0",
        "FOUNDRY_FUZZ_RUNS": str(FORGE_RUNS),
        "FOUNDRY_FUZZ_TIMEOUT": str(each),
    }
    command = [str(forge), "test", "--offline", "--use", str(solc),
               "--match-contract", f"^{harness.contract}$", "--fuzz-seed", str(seed),
               "-j", "1", "--json"]
    result = ToolRun(command, env, str(project))
    for persisted in ("invariant", "fuzz"):  # failures forge recorded in an earlier run
        shutil.rmtree(project / "cache" / persisted, ignore_errors=True)
    code, out, err, result.wall_s = run(command, project, env, timeout=3 * budget + 900)
    report = forge_json(out)
    if report is None:
        result.error = first_line(err or out)
        return result
    for suite in report.values():
        for name, test in suite.get("test_results", {}).items():
            kind = test.get("kind") or {}
            runs = next(iter(kind.values()), {}).get("runs", 0) if kind else 0
            result.execs += int(runs or 0)
            result.tests[name.split("(")[0]] = {
                "status": test.get("status"),
                "reason": test.get("reason") or "",
                "counterexample": test.get("counterexample") is not None,
                "seconds": forge_seconds(test.get("duration", "")),
            }
    if not result.tests and code != 0:
        result.error = first_line(err or out)
    return result


# --- preparing inputs -----------------------------------------------------------------------


def copy_project(suite: Suite, root: Path, harness: Harness, dest: Path,
                 libs: dict[str, Path]) -> None:
    """Copy a Foundry project to ``dest``, fill its missing libraries, apply the patch."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(root, dest, ignore=COPY_IGNORE, symlinks=True)
    for name in suite.libs:
        target = dest / "lib" / name
        if name in libs:
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(libs[name], target, ignore=COPY_IGNORE, symlinks=True)
        elif not (target.is_dir() and any(target.iterdir())):
            raise RuntimeError(f"lib/{name} is missing from {root}: clone with "
                               f"--recurse-submodules or pass --lib {name}=PATH")
    if harness.patch:
        proc = subprocess.run(["patch", "-p1", "-s", "-i", str(root / harness.patch)],
                              cwd=dest, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"patch {harness.patch} failed: {first_line(proc.stdout)}")


def forge_file_project(root: Path, harness: Harness, dest: Path) -> None:
    """A scratch Foundry project holding one single-file test contract under ``test/``."""
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "test").mkdir(parents=True)
    (dest / "src").mkdir()
    shutil.copy2(root / harness.path, dest / "test" / Path(harness.path).name)
    (dest / "foundry.toml").write_text(
        '[profile.default]\nsrc = "src"\ntest = "test"\nlibs = []\n', encoding="utf-8")


# --- the table ------------------------------------------------------------------------------


def seconds(value: float) -> str:
    """A time to find, short."""
    if value < 0.005:
        return "< 0.01 s"
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def expected_cell(check: Check) -> str:
    """What the suite's repository expects, in words."""
    if check.expect.startswith("best>="):
        return f"best ≥ {check.expect.removeprefix('best>=')}"
    if check.expect.startswith("best="):
        return f"best {check.expect.removeprefix('best=')}"
    return check.expect or "?"


def matches(harness: Harness, check: Check, finding: dict[str, Any]) -> bool:
    """Whether a secant finding is on this check: its failing site is in the check's
    function, or its last transaction called the check's function (Echidna's and Medusa's
    attribution of an assertion to the function called, wherever the failing code is)."""
    contract = check.contract or harness.contract
    if finding.get("function") == check.name and finding.get("contract") == contract:
        return True
    sequence = finding.get("sequence") or []
    if not sequence or finding.get("kind") not in ("assertion", "panic", "fuzz-test"):
        return False
    last = sequence[-1]
    return (str(last.get("function", "")).split("(")[0] == check.name
            and last.get("to", harness.contract) == contract)


def secant_found_s(harness: Harness, check: Check, result: ToolRun | None) -> float | None:
    """Seconds to secant's first failure of a check in one run; None when it found none."""
    if result is None or result.error or check.kind == OPTIMIZATION:
        return None
    times = [f.get("time_to_find_s", 0.0) for f in result.findings
             if matches(harness, check, f)]
    return min(times) if times else None


def secant_cell(harness: Harness, check: Check, result: ToolRun | None) -> str:
    """secant's result on one check."""
    if result is None:
        return "not run"
    if result.error:
        return f"error: {result.error}"
    if check.kind == OPTIMIZATION:
        best = [p.get("best") for p in result.properties if p.get("function") == check.name]
        return f"best {best[0]}" if best and best[0] is not None else "not checked"
    found = secant_found_s(harness, check, result)
    if found is not None:
        return f"found in {seconds(found)}"
    if check.kind in (PROPERTY, INVARIANT) and not any(
            p.get("function") == check.name for p in result.properties):
        return "not checked"
    return "missed" if check.expect == FAILS else "holds"


def forge_found_s(harness: Harness, check: Check, result: ToolRun | None) -> float | None:
    """Seconds to forge's failure of a check (its test's duration, shrinking being off) in
    one run; None when it found none."""
    if not harness.forge or check.kind not in FORGE_KINDS or result is None or result.error:
        return None
    test = result.tests.get(check.name)
    if test is None or test["status"] != "Failure" or not test["counterexample"]:
        return None
    return float(test["seconds"])


def forge_cell(harness: Harness, check: Check, result: ToolRun | None) -> str:
    """forge's result on one check."""
    if not harness.forge or check.kind not in FORGE_KINDS:
        return "n/a"
    if result is None:
        return "not run"
    if result.error:
        return f"error: {result.error}"
    test = result.tests.get(check.name)
    if test is None:
        return "not run"
    found = forge_found_s(harness, check, result)
    if found is not None:
        return f"found in {seconds(found)}"
    if test["status"] == "Failure":  # a failure without a counterexample: setUp or a revert
        return f"error: {test['reason'][:120]}"
    if test["status"] == "Success":
        return "missed" if check.expect == FAILS else "holds"
    return str(test["status"]).lower()


_KIND_OF_FINDING = {"property": PROPERTY, "assertion": ASSERTION, "fuzz-test": FUZZ}


@dataclass
class SeedRuns:
    """One seed's runs of one harness; ``forge`` is None when forge did not run."""

    seed: int
    secant: ToolRun
    forge: ToolRun | None = None


@dataclass
class Outcome:
    """One harness's runs, one ``SeedRuns`` per seed in the order of ``--seeds``."""

    suite: Suite
    harness: Harness
    runs: list[SeedRuns] = field(default_factory=list)


def per_seed(outcome: Outcome, tool: str, check: Check) -> list[tuple[int, str, float | None]]:
    """One tool's result on one check in each seed's run: the seed, the cell, and the seconds
    to find (None when not found)."""
    harness = outcome.harness
    if tool == "secant":
        return [(r.seed, secant_cell(harness, check, r.secant),
                 secant_found_s(harness, check, r.secant)) for r in outcome.runs]
    return [(r.seed, forge_cell(harness, check, r.forge),
             forge_found_s(harness, check, r.forge)) for r in outcome.runs]


def over_seeds(results: list[tuple[int, str, float | None]]) -> str:
    """One cell for a check's results over the seeds (``per_seed``); one seed's cell as is."""
    if len(results) == 1:
        return results[0][1]
    found = [t for _, _, t in results if t is not None]
    each = ", ".join(seconds(t) if t is not None else cell for _, cell, t in results)
    if len(found) == len(results):
        return f"found in {seconds(median(found))} (median of {len(results)} seeds: {each})"
    if found:
        return (f"found in {len(found)} of {len(results)} (median of those found "
                f"{seconds(median(found))}: {each})")
    cells = {cell for _, cell, _ in results}
    if len(cells) == 1:
        return cells.pop()
    return "; ".join(f"seed {seed}: {cell}" for seed, cell, _ in results)


def unlisted_findings(harness: Harness, result: ToolRun) -> dict[tuple[str, str], dict[str, Any]]:
    """The first finding in one secant run on each (contract, function) no check covers."""
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for finding in [] if result.error else result.findings:
        if any(matches(harness, c, finding) for c in harness.checks):
            continue
        key = (finding.get("contract", ""), finding.get("function", ""))
        if key not in first or finding["time_to_find_s"] < first[key]["time_to_find_s"]:
            first[key] = finding
    return first


def rows(outcome: Outcome, notes: list[str]) -> list[list[str]]:
    """The table rows of one harness (its checks, then findings on functions not listed)."""
    harness = outcome.harness
    out = []
    for check in harness.checks:
        expected = expected_cell(check)
        if check.why:
            if check.why not in notes:
                notes.append(check.why)
            expected += f"[^{notes.index(check.why) + 1}]"
        name = f"{check.contract}.{check.name}" if check.contract else check.name
        out.append([outcome.suite.name, harness.name, f"`{name}`", check.kind, expected,
                    over_seeds(per_seed(outcome, "secant", check)),
                    over_seeds(per_seed(outcome, "forge", check))])
    unlisted = [unlisted_findings(harness, r.secant) for r in outcome.runs]
    for contract, function in sorted({key for run in unlisted for key in run}):
        found = [run.get((contract, function)) for run in unlisted]
        finding = min((f for f in found if f is not None), key=lambda f: f["time_to_find_s"])
        kind = _KIND_OF_FINDING.get(finding.get("kind", ""), finding.get("kind", ""))
        if kind == PROPERTY and harness.project and function.startswith("invariant"):
            kind = INVARIANT
        detail = finding.get("detail", "").split(". ")[0]
        sequence = finding.get("sequence") or [{}]
        called = str(sequence[-1].get("function", "")).split("(")[0]
        via = f" (called: {called})" if called and called != function else ""
        # A seed's run that erred is said so; its error is in the listed checks' cells.
        results = [(r.seed,
                    f"found in {seconds(f['time_to_find_s'])}" if f is not None
                    else "error" if r.secant.error else "not found",
                    f["time_to_find_s"] if f is not None else None)
                   for r, f in zip(outcome.runs, found)]
        out.append([outcome.suite.name, harness.name,
                    f"`{contract}.{function}`{via}, not listed", kind, "?",
                    f"{over_seeds(results)}: {detail[:90]}",
                    "n/a" if not harness.forge else "—"])
    return out


def escape(cell: str) -> str:
    """A table cell: pipes escaped, on one line."""
    return cell.replace("|", "\\|").replace("\n", " ")


def table(outcomes: list[Outcome]) -> tuple[str, list[str]]:
    """The markdown table and its footnotes."""
    notes: list[str] = []
    lines = ["| suite | harness | property / test | kind | expected | secant | forge 1.7.1 |",
             "|---|---|---|---|---|---|---|"]
    for outcome in outcomes:
        for row in rows(outcome, notes):
            lines.append("| " + " | ".join(escape(c) for c in row) + " |")
    footnotes = [f"[^{i + 1}]: {text}" for i, text in enumerate(notes)]
    return "\n".join(lines), footnotes


def tally(outcomes: list[Outcome]) -> list[str]:
    """Counts per tool: expected failures found, false alarms, errors. With several seeds a
    check counts as found, failing or erring when it did on any seed."""
    lines = []
    ran_forge = any(r.forge is not None for outcome in outcomes for r in outcome.runs)
    seeds = max((len(outcome.runs) for outcome in outcomes), default=1)
    for tool in ("secant", "forge") if ran_forge else ("secant",):
        found = found_runs = expected = alarms = errors = ran = 0
        for outcome in outcomes:
            for check in outcome.harness.checks:
                if tool == "forge" and (not outcome.harness.forge or check.kind not in FORGE_KINDS):
                    continue
                cells = [cell for _, cell, _ in per_seed(outcome, tool, check)]
                ran += 1
                errors += any(cell.startswith("error") for cell in cells)
                if check.expect == FAILS:
                    expected += 1
                    found += any(cell.startswith("found") for cell in cells)
                    found_runs += sum(cell.startswith("found") for cell in cells)
                if check.expect == HOLDS and any(cell.startswith("found") for cell in cells):
                    alarms += 1
        runs = (f" (in {found_runs} of {expected * seeds} runs)" if seeds > 1 else "")
        lines.append(f"- {tool}: {ran} checks; {found} of the {expected} expected failures "
                     f"found{runs}; {alarms} reported failing where the repository expects "
                     f"the check to hold; {errors} errors")
    return lines


def machine() -> str:
    """CPU model, cores and memory of this machine."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB memory"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores, {model}{memory}, {platform.system()} {platform.release()}"


def version_of(command: list[str]) -> str:
    """The first line a tool prints for its version, or 'unavailable'."""
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return "unavailable"
    return (proc.stdout.strip() or proc.stderr.strip() or "unavailable").splitlines()[0]


# --- main -----------------------------------------------------------------------------------


def parse_pairs(values: list[str], flag: str) -> dict[str, Path]:
    """``NAME=PATH`` options into a dict of absolute paths."""
    pairs = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            sys.exit(f"{flag} takes NAME=PATH, not {value!r}")
        pairs[name] = Path(path).expanduser().resolve()
    return pairs


def parse_seeds(value: str) -> list[int]:
    """``--seeds``: comma-separated distinct integers (each seed's run has its own folder)."""
    try:
        seeds = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of integers: {value!r}") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"give one or more distinct seeds, not {value!r}")
    return seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", action="append", default=[], metavar="NAME=PATH",
                        help=f"a suite's checkout (names: {', '.join(SUITES)})")
    parser.add_argument("--suites", default="", help="comma-separated suites to run "
                        "(default: every suite given with --suite)")
    parser.add_argument("--only", default="", metavar="REGEX",
                        help="only harnesses whose SUITE/HARNESS matches")
    parser.add_argument("--time", type=int, default=60, help="seconds per harness per tool")
    parser.add_argument("--lib", action="append", default=[], metavar="NAME=PATH",
                        help="a library to place at lib/NAME of a Foundry project's copies, "
                             "instead of the checkout's own (e.g. forge-std)")
    parser.add_argument("--seeds", type=parse_seeds, default=[0], metavar="LIST",
                        help="comma-separated seeds; each harness is run once per seed by "
                             "each tool (default: 0)")
    parser.add_argument("--no-forge", action="store_true", help="run secant only")
    parser.add_argument("--cache", type=Path, default=None,
                        help="forge, the solc wrappers and the working copies "
                             "(default: <secant cache>/harness-bench)")
    parser.add_argument("--report", type=Path, help="write the markdown report here")
    parser.add_argument("--json", type=Path, help="write every run's raw results here")
    args = parser.parse_args()

    paths = parse_pairs(args.suite, "--suite")
    libs = parse_pairs(args.lib, "--lib")
    unknown = sorted(set(paths) - set(SUITES))
    if unknown:
        sys.exit(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITES)}")
    chosen = [s for s in args.suites.split(",") if s] or list(paths)
    for name in chosen:
        if name not in paths:
            sys.exit(f"suite {name} has no checkout: pass --suite {name}=PATH")
    only = re.compile(args.only) if args.only else None
    plan = [(SUITES[name], paths[name], h) for name in chosen for h in SUITES[name].harnesses
            if only is None or only.search(f"{name}/{h.name}")]
    if not plan:
        sys.exit("no harness selected")

    from secant.compile.cache import cache_root

    cache = (args.cache or cache_root() / "harness-bench").resolve()
    work = cache / "work"
    seeds: list[int] = args.seeds
    secant_runs = len(plan) * len(seeds)
    forge_runs = 0 if args.no_forge else sum(h.forge for _, _, h in plan) * len(seeds)
    print(f"{len(plan)} harnesses: {secant_runs} secant runs and {forge_runs} forge runs of "
          f"{args.time} s, about {(secant_runs + forge_runs) * args.time / 60:.0f} min "
          "plus compilation", file=sys.stderr)
    forge = solc = None
    if forge_runs:
        try:
            forge = install_forge(cache, FORGE_VERSION)
        except ForgeUnavailable as exc:
            sys.exit(str(exc))

    start_state = secant_state()
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    for index, (suite, root, harness) in enumerate(plan, 1):
        outcome = Outcome(suite, harness)
        slug = re.sub(r"[^A-Za-z0-9_.+-]+", "_", f"{suite.name}-{harness.name}")
        for seed in seeds:
            # Fresh copies of the projects and an output folder of its own for every seed's
            # run, so that no run starts from another's state.
            out = work / "secant-out" / slug
            if len(seeds) > 1:
                out /= f"seed-{seed}"
            secant_run: ToolRun | None = None
            forge_run: ToolRun | None = None
            try:
                target = root / harness.path
                if not target.exists():
                    raise RuntimeError(f"{target} does not exist")
                if harness.project:
                    copy_project(suite, root, harness, work / "secant-src" / slug, libs)
                    target = work / "secant-src" / slug
                secant_run = run_secant(harness, target, args.time, out, seed)
                if harness.forge and forge is not None:
                    project = work / "forge-src" / slug
                    if harness.project:
                        copy_project(suite, root, harness, project, libs)
                    else:
                        forge_file_project(root, harness, project)
                    solc = solc_wrapper(cache, harness.solc or "0.8.26")
                    forge_run = run_forge(harness, project, args.time, forge, solc, seed)
            except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
                message = first_line(str(exc))
                if secant_run is None:
                    secant_run = ToolRun([], error=message)
                if harness.forge and forge_run is None:
                    forge_run = ToolRun([], error=message)
            outcome.runs.append(SeedRuns(seed, secant_run, forge_run))
            walls = ", ".join(f"{tool} {run.wall_s:.0f} s"
                              for tool, run in (("secant", secant_run), ("forge", forge_run))
                              if run is not None)
            seed_label = f" seed {seed}" if len(seeds) > 1 else ""
            print(f"[{index}/{len(plan)}] {suite.name}/{harness.name}{seed_label}: {walls}",
                  file=sys.stderr)
        outcomes.append(outcome)
    total = time.perf_counter() - started

    body, footnotes = table(outcomes)
    print(body)
    print()
    print("\n".join(footnotes))
    summary = tally(outcomes)
    print()
    print("\n".join(summary))
    print(f"\ntotal wall time {total / 60:.1f} min", file=sys.stderr)

    if args.report:
        redact = Redactor([paths[name] for name in chosen], cache)
        write_report(args, outcomes, body, footnotes, summary, total, forge, redact,
                     start_state, suite_commits({n: paths[n] for n in chosen}))
    if args.json:
        args.json.write_text(json.dumps([{
            "suite": o.suite.name, "harness": o.harness.name,
            "runs": [{"seed": r.seed, "secant": r.secant.__dict__,
                      "forge": r.forge.__dict__ if r.forge else None} for r in o.runs],
            # The first seed's runs under the keys the file had before --seeds.
            "secant": o.runs[0].secant.__dict__,
            "forge": o.runs[0].forge.__dict__ if o.runs[0].forge else None,
        } for o in outcomes], indent=1, default=str), encoding="utf-8")


class Redactor:
    """Writes this machine's folders as names: the suites' common folder as ``$SUITES``,
    the cache as ``$CACHE``, the repository as ``.``, the home folder as ``~``."""

    def __init__(self, suites: list[Path], cache: Path) -> None:
        common = Path(os.path.commonpath([str(p) for p in suites])) if suites else None
        if common is not None and len(suites) == 1:
            common = common.parent
        pairs = [(cache, "$CACHE"), (REPO, "."), (Path.home(), "~")]
        if common is not None and common != Path(common.anchor):
            pairs.insert(0, (common, "$SUITES"))
        self.pairs = sorted(((str(p), name) for p, name in pairs), key=lambda x: -len(x[0]))

    def __call__(self, text: str) -> str:
        for path, name in self.pairs:
            text = text.replace(path + "/", name + "/").replace(path, name)
        return text.replace("./bin/secant", "bin/secant")


def secant_state() -> str:
    """The repository's commit, and whether secant/ has uncommitted changes."""
    commit = version_of(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    dirty = version_of(["git", "-C", str(REPO), "status", "--porcelain", "--", "secant"])
    return f"commit {commit}" + (" with uncommitted changes under secant/"
                                 if dirty != "unavailable" else "")


def suite_commits(paths: dict[str, Path]) -> list[str]:
    """The commit of each suite's checkout, when it is a git checkout."""
    lines = []
    for name, path in paths.items():
        commit = version_of(["git", "-C", str(path), "rev-parse", "--short", "HEAD"])
        if re.fullmatch(r"[0-9a-f]{7,40}", commit):
            lines.append(f"{name} at {commit}")
    return lines


def write_report(args: argparse.Namespace, outcomes: list[Outcome], body: str,
                 footnotes: list[str], summary: list[str], total: float,
                 forge: Path | None, redact: Redactor, start_state: str,
                 commits: list[str]) -> None:
    """The markdown report: when, where, with what, the table, and every command."""
    secant_version = version_of([str(SECANT), "version"])
    at_end = secant_state()
    secant_version += (f" at {start_state}" if at_end == start_state
                       else f" at {start_state} when the run began, {at_end} when it ended")
    forge_version = (version_of([str(forge), "--version"]).replace("Version: ", "")
                     if forge else "forge not run")
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    argv = ["bench/harnesses.py"]
    for arg in sys.argv[1:]:  # the report's and the raw results' own files, by name only
        argv.append(Path(arg).name if argv[-1] in ("--report", "--json") else arg)
    lines = [
        f"Run on {when}: {machine()}; secant {secant_version}, {forge_version}, "
        f"node {version_of(['node', '--version'])}.",
        "",
        "```sh",
        redact(".venv/bin/python " + shlex.join(argv)),
        "```",
        "",
        f"Budget {args.time} s per harness per tool"
        + (f" and seed (seeds {', '.join(map(str, args.seeds))})" if len(args.seeds) > 1 else "")
        + f"; total wall time {total / 60:.1f} min."
        + (" Suites: " + ", ".join(commits) + "." if commits else ""),
        "",
        body,
        "",
        *summary,
        "",
        *footnotes,
        "",
        "<details><summary>Every command, as run</summary>",
        "",
        "```sh",
    ]
    for outcome in outcomes:
        for runs in outcome.runs:
            for result in (runs.secant, runs.forge):
                if result is not None and result.command:
                    lines.append(redact(result.shell()))
    lines += ["```", "", "</details>", ""]
    args.report.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
