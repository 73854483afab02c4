"""scfuzzbench's targets under ``secant fuzz`` and under forge, same machine, same budget.

Usage::

    .venv/bin/python bench/scfuzz.py --target drips=<checkout> [--target ID=PATH[:FILE]]... \\
        --known-bugs <scfuzzbench>/benchmarks/known_bugs.json [--seconds 600] [--seed 0] \\
        [--tools secant,forge] [--out scfuzz-out] [--secant-arg ARG]... [--markdown]

scfuzzbench (the public benchmark of real-world fuzzing: its ``benchmarks/targets.json``
names each target's repository and commit) is built from suites in Recon's Chimera layout:
``CryticTester`` is the entry point of Echidna and Medusa, ``CryticToFoundry`` the one of
forge. Each ``--target ID=PATH`` is a checkout of one target at its pinned commit with its
submodules, made by the user outside this repository (``ID`` as ``known_bugs.json`` names
it: ``drips``, ``aave-v4``, ``liquity-v2-governance``, ``origin-dollar``, ...). With
``:FILE`` (a path inside the checkout, e.g. ``test/recon/CryticTester.sol``) secant compiles
and fuzzes that file with the project's settings instead of the whole project: for a
checkout whose other sources cannot all be had.

Per target and tool, one campaign of ``--seconds``:

``secant``
    ``bin/secant fuzz PATH --match-contract ^CryticTester$ --time T --seed S
    --unlimited-code-size`` (``--secant-arg`` adds more): secant's defaults otherwise (every
    oracle, the symbolic stage, findings shrunk within the budget). A harness is compiled
    whole and deployed as Echidna deploys it; the code-size limit is lifted as Echidna and
    Medusa lift it by default (these harnesses exceed 24 KB). Before it, ``bin/secant compile
    PATH`` is timed: the compile time (secant caches compiled outputs, so a second run of the
    bench reads the cache; the column says which).
``forge``
    forge 1.7.1 (npm ``@foundry-rs/forge``, installed once into secant's cache) on
    ``CryticToFoundry``: ``forge test --offline --use <solc-js wrapper> --match-contract
    ^CryticToFoundry$ -j 1 --json`` with the target's ``foundry.toml`` and, through the
    environment, ``invariant.timeout`` T divided among the contract's invariant tests (forge
    runs each in a campaign of its own; with ``-j 1`` they take T together),
    ``invariant.runs`` out of reach and shrinking off. The times of failures are read from
    the failure events forge prints as JSON lines while it runs (else a failed test's
    duration: forge stops a test at its failure, or, with ``continuous_run``, once all of
    the contract's invariants are broken). A failed assertion in a handler fails whichever
    invariant forge checks next: it is counted by the handler, the counterexample's last
    call. forge's output is kept in ``OUT/forge-ID/forge-test.log``.

What counts as a bug, as scfuzzbench counts it: a broken property counts by its function
name (``invariant_canary``); a failed assertion by its handler, with the
``_ASSERTION_<NAME>`` suffix of scfuzzbench's naming rule stripped
(``assert_canary_ASSERTION_CANARY`` is ``assert_canary``). ``known_bugs.json`` maps those
names to the target's canaries and known bugs (``aliases``).

Prints per target and tool: compile time, executions per second (secant: executions over
its campaign's seconds; forge: calls over its tests' time), branches covered (secant's
summary), the canaries and known bugs found with the time to each, and the other broken
checks. Writes ``OUT/results.json`` (every run, its command and figures) and, with
``--markdown``, the table as markdown. A figure, never a pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harnesses import first_line, forge_json, forge_seconds  # noqa: E402
from harnesses import run as execute  # noqa: E402

from secant.campaign.options import CampaignOptions  # noqa: E402
from secant.report.forge import (  # noqa: E402
    FORGE_VERSION,
    ForgeUnavailable,
    install_forge,
    solc_wrapper,
)

REPO = Path(__file__).resolve().parents[1]
SECANT = REPO / "bin" / "secant"
TOOLS = ("secant", "forge")
FORGE_RUNS = 1_000_000_000
"""Runs no campaign reaches within the budget, so forge's timeout ends every campaign."""
ASSERTION_SUFFIX = re.compile(r"_ASSERTION_[A-Za-z0-9_]+$")
"""scfuzzbench's handler naming rule: ``target_ASSERTION_<CONSTANT>``, counted as ``target``."""


@dataclass
class Run:
    """One tool's campaign on one target: the command and what it found, when."""

    tool: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    wall_s: float = 0.0
    compile_s: float | None = None
    compile_cached: bool = False
    execs: int = 0
    fuzz_s: float = 0.0
    branches: str = ""
    found: dict[str, float | None] = field(default_factory=dict)
    error: str = ""

    @property
    def rate(self) -> float | None:
        """Executions (forge: calls) per second of fuzzing."""
        return self.execs / self.fuzz_s if self.fuzz_s > 0 else None


def canonical(name: str) -> str:
    """A failing check's name as scfuzzbench counts it."""
    return ASSERTION_SUFFIX.sub("", name.split("(", 1)[0])


def solc_version(root: Path) -> str | None:
    """The solc version the target's foundry.toml pins (``solc`` or ``solc_version``)."""
    text = (root / "foundry.toml").read_text(encoding="utf-8")
    match = re.search(r"^\s*solc(?:_version)?\s*=\s*[\"']([0-9.]+)[\"']", text, re.M)
    return match.group(1) if match else None


# --- secant ---------------------------------------------------------------------------------


def run_secant(root: Path, entry: str, out: Path, seconds: int, seed: int,
               extra: list[str]) -> Run:
    """Compile (timed), then one ``secant fuzz`` campaign on CryticTester.

    ``entry`` is a file of the checkout to fuzz instead of the whole project ("" for that).
    """
    path = root / entry if entry else root
    compile_command = [str(SECANT), "compile", str(path)]
    code, _, err, compile_s = execute(compile_command, None, {}, timeout=3600)
    # The campaign as a user describes it, turned into the command line that gives it.
    options = CampaignOptions(path, out=out, time_budget=f"{seconds}s", seed=seed,
                              unlimited_code_size=True,
                              contract="CryticTester" if entry else None,
                              match_contract=None if entry else "^CryticTester$")
    command = [str(SECANT), "fuzz", *options.command_line(), "--force", "--quiet", *extra]
    run = Run("secant", command)
    run.compile_s = compile_s
    run.compile_cached = "cached" in err.lower()
    if code != 0:
        run.error = f"compile: {first_line(err)}"
        return run
    code, _, err, run.wall_s = execute(command, None, {}, timeout=3 * seconds + 1800)
    summary_path = out / "summary.json"
    if code not in (0, 1) or not summary_path.is_file():
        run.error = first_line(err)
        return run
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    run.execs = int(summary.get("execs", 0))
    run.fuzz_s = float(summary.get("elapsed_s") or 0.0)
    run.branches = f"{summary.get('branches_covered', 0)}/{summary.get('branches_total', 0)}"
    for finding in summary.get("findings", []):
        name = canonical(str(finding.get("function", "")))
        when = finding.get("time_to_find_s")
        if name and (name not in run.found or (when or 0) < (run.found[name] or 0)):
            run.found[name] = float(when) if when is not None else None
    return run


# --- forge ----------------------------------------------------------------------------------


def forge_events(stdout: str, start: float) -> dict[str, float]:
    """The failures forge announced while it ran, with their time from ``start``."""
    found: dict[str, float] = {}
    for line in stdout.splitlines():
        if not line.startswith("{") or '"event"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("event") != "failure":
            continue
        name = str(event.get("invariant") or event.get("handler") or "")
        when = float(event.get("timestamp", start)) - start
        if name and canonical(name) not in found:
            found[canonical(name)] = max(when, 0.0)
    return found


def invariant_count(root: Path) -> int:
    """How many ``invariant_*`` functions CryticToFoundry's sources define (at least 1)."""
    names: set[str] = set()
    for path in root.rglob("*.sol"):
        if "lib" in path.relative_to(root).parts[:1]:
            continue
        names.update(re.findall(r"function\s+(invariant_\w+)\s*\(",
                                path.read_text(encoding="utf-8", errors="replace")))
    return max(len(names), 1)


def run_forge(root: Path, work: Path, seconds: int, seed: int, forge: Path) -> Run:
    """forge's invariant campaigns of CryticToFoundry on a copy of the target."""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(root, work, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "out", "cache", "corpus",
                                                  "secant-out"))
    version = solc_version(work)
    if version is None:
        return Run("forge", [], error="no solc version in foundry.toml")
    solc = solc_wrapper(Path.home() / ".cache" / "secant" / "forge", version)
    per_test = max(seconds // invariant_count(work), 1)
    env = {"FOUNDRY_INVARIANT_RUNS": str(FORGE_RUNS),
           "FOUNDRY_INVARIANT_TIMEOUT": str(per_test),
           "FOUNDRY_INVARIANT_SHRINK_RUN_LIMIT": "0",
           "FOUNDRY_DISABLE_NIGHTLY_WARNING": "1"}
    build = [str(forge), "build", "--offline", "--use", str(solc)]
    code, out, err, compile_s = execute(build, work, env, timeout=3600)
    run = Run("forge", [str(forge), "test", "--offline", "--use", str(solc),
                        "--match-contract", "^CryticToFoundry$", "--fuzz-seed", str(seed),
                        "-j", "1", "--json"], env=env)
    run.compile_s = compile_s
    if code != 0:
        run.error = f"build: {first_line(err or out)}"
        return run
    start = time.time()
    code, out, err, run.wall_s = execute(run.command, work, env, timeout=3 * seconds + 1800)
    (work / "forge-test.log").write_text(err + "\n" + out, encoding="utf-8")
    results = forge_json(out)
    if results is None:
        run.error = first_line(err or out)
        return run
    # forge prints its failure events on stderr as it goes, its results on stdout.
    events = forge_events(err + "\n" + out, start)
    for suite in results.values():
        for name, test in suite.get("test_results", {}).items():
            kind = (test.get("kind") or {}).get("Invariant") or {}
            metrics = kind.get("metrics") or {}
            run.execs += int(kind.get("calls", 0) or 0) or sum(
                int(m.get("calls", 0) or 0) for m in metrics.values() if isinstance(m, dict))
            seconds = _forge_seconds(test.get("duration"))
            run.fuzz_s += seconds
            if test.get("status") == "Failure":
                # forge stops a test at its failure: the test's time is the time to it.
                failed = failing_check(name, str(test.get("reason") or ""),
                                       test.get("counterexample"))
                run.found.setdefault(failed, events.get(canonical(name), seconds))
    return run


def failing_check(test: str, reason: str, counterexample: Any) -> str:
    """What a failed forge invariant test found, by scfuzzbench's name.

    A failed assertion in a handler (a panic, a ``vm.assert*``: the reason says
    ``assert``) is the handler's, the last call of the counterexample; anything else is
    the invariant's.
    """
    calls: list[Any] = []
    sequence = counterexample.get("Sequence") if isinstance(counterexample, dict) else None
    for item in sequence or []:
        calls.extend(item if isinstance(item, list) else [item])
    if "assert" in reason.lower() and calls and isinstance(calls[-1], dict):
        return canonical(str(calls[-1].get("func_name") or test))
    return canonical(test)


def _forge_seconds(value: Any) -> float:
    """Seconds in forge's duration (``{"secs": S, "nanos": N}`` or ``9s 500ms``)."""
    if isinstance(value, dict):
        return float(value.get("secs", 0)) + float(value.get("nanos", 0)) / 1e9
    return forge_seconds(str(value or ""))


# --- the table ------------------------------------------------------------------------------


def expected(known: dict[str, Any], target: str) -> tuple[dict[str, str], dict[str, str]]:
    """The target's canaries and known bugs: check name -> the entry's id."""
    canaries: dict[str, str] = {}
    bugs: dict[str, str] = {}
    for entry in known.get("targets", []):
        if entry.get("target_id") != target:
            continue
        for kind, into in (("canaries", canaries), ("known_bugs", bugs)):
            for item in entry.get(kind, []):
                for alias in item.get("aliases", []):
                    into[canonical(str(alias.get("event", "")))] = str(item.get("id"))
    return canaries, bugs


def when(found: dict[str, float | None], name: str) -> str:
    """``12 s``, ``yes`` (found, time unknown) or ``-``."""
    if name not in found:
        return "-"
    value = found[name]
    return "yes" if value is None else f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def table(rows: list[tuple[str, Run]], known: dict[str, Any]) -> str:
    """The markdown table: a row per target and tool."""
    lines = ["| target | tool | compile | exec/s | branches | canaries | known bugs | "
             "other broken checks |", "|---|---|---|---|---|---|---|---|"]
    for target, run in rows:
        canaries, bugs = expected(known, target)
        if run.error:
            lines.append(f"| {target} | {run.tool} | "
                         f"{'' if run.compile_s is None else f'{run.compile_s:.0f} s'} | "
                         f"error: {run.error} | | | | |")
            continue
        compiled = "" if run.compile_s is None else (
            f"{run.compile_s:.1f} s" + (" (cached)" if run.compile_cached else ""))
        rate = "" if run.rate is None else f"{run.rate:,.0f}"
        canary = ", ".join(f"{name} {when(run.found, name)}" for name in sorted(canaries))
        bug = ", ".join(f"{name} {when(run.found, name)}" for name in sorted(bugs)) or "none listed"
        others = sorted(set(run.found) - set(canaries) - set(bugs))
        lines.append(f"| {target} | {run.tool} | {compiled} | {rate} | {run.branches} | "
                     f"{canary} | {bug} | {len(others)}: {', '.join(others[:6])}"
                     f"{' ...' if len(others) > 6 else ''} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the bench (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", default=[], metavar="ID=PATH[:FILE]",
                        help="a target's checkout (repeatable)")
    parser.add_argument("--known-bugs", type=Path, required=True,
                        help="scfuzzbench's benchmarks/known_bugs.json")
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--out", type=Path, default=Path("scfuzz-out"))
    parser.add_argument("--secant-arg", action="append", default=[])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(tools) - set(TOOLS)
    if unknown or not args.target:
        parser.error(f"give --target ID=PATH and --tools from {', '.join(TOOLS)}")
    known = json.loads(args.known_bugs.read_text(encoding="utf-8"))
    args.out.mkdir(parents=True, exist_ok=True)
    forge: Path | None = None
    if "forge" in tools:
        try:
            forge = install_forge(Path.home() / ".cache" / "secant" / "forge", FORGE_VERSION)
        except ForgeUnavailable as exc:
            print(f"forge: {exc.message}", file=sys.stderr)
    rows: list[tuple[str, Run]] = []
    for spec in args.target:
        target, _, raw = spec.partition("=")
        folder, _, entry = raw.partition(":")
        root = Path(folder).resolve()
        if not (root / "foundry.toml").is_file():
            parser.error(f"--target {spec}: no foundry.toml in {root}")
        for tool in tools:
            print(f"{target}: {tool} for {args.seconds} s ...", file=sys.stderr, flush=True)
            if tool == "secant":
                run = run_secant(root, entry, args.out / f"secant-{target}", args.seconds,
                                 args.seed, args.secant_arg)
            elif forge is None:
                run = Run("forge", [], error="forge is not installed")
            else:
                run = run_forge(root, args.out / f"forge-{target}", args.seconds, args.seed,
                                forge)
            rows.append((target, run))
            (args.out / "results.json").write_text(json.dumps(
                {"machine": f"{os.cpu_count()} cores", "seconds": args.seconds,
                 "seed": args.seed, "runs": [{"target": t, **asdict(r)} for t, r in rows]},
                indent=1), encoding="utf-8")
    text = table(rows, known)
    print(text)
    if args.markdown:
        (args.out / "results.md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
