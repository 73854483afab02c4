"""Oracle recall on public labelled sets: what ``secant fuzz``, as a user runs it, finds.

Usage::

    .venv/bin/python bench/oracles_public.py [--swc DIR] [--nssc DIR] [--seconds 30]
        [--seed 0] [--jobs 1] [--out oracles-public-out] [--only TEXT] [--json FILE]
        [--judge-only]

The sets are other people's and are never committed; give their folders:

``--swc DIR``
    the SWC registry's test cases (``SmartContractSecurity/SWC-registry``,
    ``test_cases/solidity``; the registry removed them from its tree later, they are in its
    history before the commit "Add code highlighting, clean up test cases"). Every case is a
    ``.sol`` file with a ``.yaml`` beside it that labels it with SWC ids, each with a count:
    a count above 0 is a labelled bug, a count of 0 marks a fixed (or safe) version.
``--nssc DIR``
    crytic's ``not-so-smart-contracts``, which has no label files: ``NSSC_CASES`` below
    labels its contracts by the folder each sits in (a contract named for a fixed version,
    such as ``SecureAuction``, is a fixed version).

Every file (every named contract) runs once: ``bin/secant fuzz FILE --time SECONDS --seed
SEED`` with the defaults otherwise (every oracle, the concolic stage), as a user runs it.
A labelled bug is **found** when a finding's SWC id (or oracle) is one that shows the
labelled bug's effect (``SHOWN_BY``: an unprotected function is shown by the ether it leaks or the
self-destruct it allows); a finding of the same kinds on a fixed version is a **false
positive** of the fix. A finding rated *possible* (a hint to look at, such as a
delegatecall target the deployer chose) counts neither way. Classes whose bug has no
effect a run can show (a floating pragma, an unused variable, a misleading source
character) are listed and not counted (``NOT_AT_RUNTIME``, each with the reason), as are
the few labelled files whose code gives no transaction a way to show the bug (``NO_EFFECT``).

Prints a markdown table per SWC class (labelled bugs found and missed, fixed versions and
false positives on them) and the recall over the classes counted; ``--json`` keeps every
run's findings. Figures only, nothing asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harnesses import first_line  # noqa: E402
from harnesses import run as execute  # noqa: E402

from secant.campaign.options import CampaignOptions  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SECANT = REPO / "bin" / "secant"

_TAKEOVER = "owner-takeover"  # an oracle without an SWC id: matched by its name

SHOWN_BY: dict[str, frozenset[str]] = {
    "SWC-100": frozenset({"SWC-105", "SWC-106", "SWC-124", "SWC-112", _TAKEOVER}),
    "SWC-101": frozenset({"SWC-101"}),
    "SWC-104": frozenset({"SWC-104"}),
    "SWC-105": frozenset({"SWC-105", _TAKEOVER}),
    "SWC-106": frozenset({"SWC-106"}),
    "SWC-107": frozenset({"SWC-107"}),
    # An uninitialised storage pointer writes slots the source does not name: shown by the
    # write itself or the role it takes over. Not by ether paid: the registry's fixed
    # roulette still pays whoever guesses its block-drawn number (a bug of SWC-120 the fix
    # of the pointer leaves, found there and in no way a false positive of that fix).
    "SWC-109": frozenset({"SWC-124", _TAKEOVER}),
    "SWC-110": frozenset({"SWC-110"}),
    "SWC-112": frozenset({"SWC-112", "SWC-105", "SWC-106", _TAKEOVER}),
    "SWC-113": frozenset({"SWC-113"}),
    "SWC-114": frozenset({"SWC-114"}),
    "SWC-115": frozenset({"SWC-115"}),
    "SWC-116": frozenset({"SWC-116", "SWC-120"}),
    "SWC-117": frozenset({"SWC-117"}),
    "SWC-118": frozenset({"SWC-105", "SWC-106", "SWC-124", _TAKEOVER}),
    "SWC-120": frozenset({"SWC-120", "SWC-116"}),
    "SWC-123": frozenset({"SWC-123"}),
    "SWC-124": frozenset({"SWC-124", _TAKEOVER}),
    "SWC-126": frozenset({"SWC-126"}),
    "SWC-127": frozenset({"SWC-127"}),
    "SWC-128": frozenset({"SWC-128"}),
    "SWC-132": frozenset({"SWC-132", "SWC-110"}),
    "SWC-133": frozenset({"SWC-105", "SWC-106", "SWC-124", _TAKEOVER}),
}
"""For each labelled class with an effect at runtime, the SWC ids (or, for an oracle
without one, the oracle's name) of findings that show it: the class's own, or the effect
it has (a wrong constructor name lets anyone take the owner's powers: the ether that leaks,
the self-destruct, the storage written, the owner's slot taken over; a withdrawal guarded by
a role anyone can take is shown by the role taken over, even when no ether is there to
withdraw in the run)."""

NOT_AT_RUNTIME: dict[str, str] = {
    "SWC-102": "an outdated compiler: a property of the build",
    "SWC-103": "a floating pragma: a property of the build",
    "SWC-108": "a state variable's default visibility: a property of the source",
    "SWC-111": "deprecated constructs: they behave as written",
    "SWC-119": "a shadowed state variable: a wrong reading of the source, no state broken",
    "SWC-125": "inheritance order: the code runs as linearised, no state broken",
    "SWC-129": "a typo (=+): a wrong computation only a specification can tell",
    "SWC-130": "a right-to-left override character: it misleads the reader, not the EVM",
    "SWC-131": "an unused variable",
    "SWC-134": "a hard-coded gas amount: a risk under future gas costs",
    "SWC-135": "code without effect: nothing to observe",
    "SWC-136": "private data on chain: readable by anyone, no transaction needed",
}
"""Labelled classes a run cannot show, with the reason; listed, not counted."""

NO_EFFECT: dict[tuple[str, str], str] = {
    ("swc", "random_number_generator"):
        "its one function is private and nothing calls it: no transaction runs the draw",
    ("swc", "send_loop"):
        "the refund list is two accounts without code fixed at deployment and no refund is "
        "ever set: every send of 0 wei succeeds, no transaction can make one fail",
    ("nssc", "theRun"):
        "only compilers from 0.4 accept the file (its modifier's `_;`), and there its fallback, "
        "the one way in, is not payable: no deposit is ever made, so no draw pays anyone",
    ("nssc", "list_dos:CrowdFundBad"):
        "no compiler accepts the file (it requires the result of `transfer`, which returns "
        "nothing), and nothing ever adds to its private refund list: the loop never runs",
    ("swc", "access_control"):
        "nothing makes an account an admin but an admin's own call or signature, and no "
        "account is one at deployment: the signature check never passes, for any input",
    ("swc", "modifier_reentrancy"):
        "the modifier's external call goes to a contract the constructor created, which "
        "calls nothing back: no transaction can re-enter",
}
"""Labelled bugs whose file, as written, gives no transaction a way to show them (the label
names a pattern the file only sketches), with the reason: listed under their class, not
counted. Each was read line by line; a case goes here only when no sequence of transactions
from any sender could show the labelled effect."""


@dataclass(frozen=True)
class Case:
    """One labelled contract: a bug of class ``label``, or a fixed version (``vulnerable``
    False) of one."""

    suite: str
    path: Path
    contract: str | None
    label: str
    vulnerable: bool

    @property
    def name(self) -> str:
        """How the tables name it: the file's stem, with the contract when one is named."""
        return self.path.stem + (f":{self.contract}" if self.contract else "")


NSSC_CASES: tuple[tuple[str, str | None, str, bool], ...] = (
    ("bad_randomness/theRun_source_code/theRun.sol", None, "SWC-120", True),
    ("denial_of_service/auction.sol", "DosAuction", "SWC-113", True),
    ("denial_of_service/auction.sol", "SecureAuction", "SWC-113", False),
    ("denial_of_service/list_dos.sol", "CrowdFundBad", "SWC-128", True),
    ("denial_of_service/list_dos.sol", "CrowdFundPull", "SWC-128", False),
    ("denial_of_service/list_dos.sol", "CrowdFundSafe", "SWC-128", False),
    ("forced_ether_reception/coin.sol", "MyAdvancedToken", "SWC-132", True),
    ("honeypots/PrivateBank/PrivateBank.sol", "Private_Bank", "SWC-107", True),
    ("integer_overflow/integer_overflow_1.sol", None, "SWC-101", True),
    ("race_condition/RaceCondition.sol", "RaceCondition", "SWC-114", True),
    ("reentrancy/Reentrancy.sol", None, "SWC-107", True),
    ("reentrancy/DAO_source_code/DAO.sol", "DAO", "SWC-107", True),
    ("reentrancy/SpankChain_source_code/SpankChain_Payment.sol", "LedgerChannel", "SWC-107",
     True),
    ("unchecked_external_call/KotET_source_code/KingOfTheEtherThrone.sol", None, "SWC-104",
     True),
    # Its README: a function not marked private lets anyone become the owner.
    ("unprotected_function/Unprotected.sol", None, "SWC-100", True),
    ("unprotected_function/WalletLibrary_source_code/WalletLibrary.sol", "WalletLibrary",
     "SWC-106", True),
    ("variable shadowing/inherited_state.sol", "C", "SWC-119", True),
    ("wrong_constructor_name/Rubixi_source_code/Rubixi.sol", None, "SWC-118", True),
    ("wrong_constructor_name/incorrect_constructor.sol", None, "SWC-118", True),
)
"""not-so-smart-contracts, labelled by folder: (file, contract or None for secant's
choice, class, vulnerable). Left out: the exploit contract beside the reentrancy example,
the honeypots whose catch lies in the deployment or in a reading of the source, not in
what the source does (the private bank's reentrancy is real in its source and counts), and
the incorrect interfaces (two contracts that disagree, nothing to deploy alone)."""

_ISSUE_RE = re.compile(r"id:\s*(SWC-\d+)\s+count:\s*(\d+)")


def swc_cases(root: Path) -> list[Case]:
    """The SWC registry's test cases: one per file and labelled id."""
    cases = []
    for label_file in sorted(root.rglob("*.yaml")):
        source = label_file.with_suffix(".sol")
        if not source.is_file():
            continue
        for swc, count in _ISSUE_RE.findall(label_file.read_text(encoding="utf-8")):
            cases.append(Case("swc", source, None, swc, int(count) > 0))
    return cases


def nssc_cases(root: Path) -> list[Case]:
    """not-so-smart-contracts' contracts as ``NSSC_CASES`` labels them (those present)."""
    return [Case("nssc", root / path, contract, label, vulnerable)
            for path, contract, label, vulnerable in NSSC_CASES if (root / path).is_file()]


@dataclass
class Run:
    """One ``secant fuzz`` run of a file (of a named contract)."""

    path: str
    contract: str | None
    command: list[str]
    tags: list[str] = field(default_factory=list)
    """The SWC ids and oracle names of its findings."""
    findings: list[dict[str, object]] = field(default_factory=list)
    execs: int = 0
    wall_s: float = 0.0
    error: str | None = None


def run_one(path: Path, contract: str | None, out: Path, seconds: int, seed: int,
            again: bool = True) -> Run:
    """Fuzz one file with the defaults for ``seconds``; read what it found.

    ``again`` False reads the summary an earlier run left in ``out`` instead (to judge
    earlier runs by today's rules).
    """
    options = CampaignOptions(path, contract=contract, time_budget=f"{seconds}s", seed=seed,
                              out=out)
    command = [str(SECANT), "fuzz", *options.command_line(), "--force", "--quiet"]
    run = Run(str(path), contract, command)
    code, err = 0, "no earlier run"
    if again:
        code, _, err, run.wall_s = execute(command, None, {}, timeout=4 * seconds + 600)
    summary_path = out / "summary.json"
    if code not in (0, 1) or not summary_path.is_file():
        run.error = first_line(err) or f"exit code {code}"
        return run
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    run.execs = int(summary.get("execs", 0))
    run.findings = [{"oracle": f.get("oracle"), "swc": f.get("swc"),
                     "confidence": f.get("confidence"), "function": f.get("function"),
                     "source": f.get("source")}
                    for f in summary.get("findings", [])]
    # A possible finding is a hint to look at, not a claim: it counts neither way.
    run.tags = sorted({str(f[key]) for f in run.findings for key in ("swc", "oracle")
                       if f.get(key) and f.get("confidence") != "possible"})
    return run


@dataclass
class Verdict:
    """A case judged by its run."""

    case: Case
    shown: bool
    """A finding shows the labelled bug (on a fixed version: a false positive)."""
    error: str | None


def judge(cases: Sequence[Case], runs: dict[tuple[str, str | None], Run]) -> list[Verdict]:
    """Each case against the findings of its file's run."""
    verdicts = []
    for case in cases:
        run = runs[(str(case.path), case.contract)]
        shown_by = SHOWN_BY.get(case.label, frozenset())
        verdicts.append(Verdict(case, bool(shown_by & set(run.tags)), run.error))
    return verdicts


def table(verdicts: Sequence[Verdict]) -> list[str]:
    """The markdown report: one row per class, then the totals."""
    lines = ["| class | labelled bugs | found | missed | fixed versions | false positives |",
             "|---|---|---|---|---|---|"]
    found_total = labelled_total = fixed_total = fp_total = 0
    for label in sorted({v.case.label for v in verdicts}, key=lambda s: int(s[4:])):
        mine = [v for v in verdicts if v.case.label == label]
        bugs = [v for v in mine if v.case.vulnerable]
        fixed = [v for v in mine if not v.case.vulnerable]
        if label in NOT_AT_RUNTIME:
            lines.append(f"| {label} | {len(bugs)} (not counted: {NOT_AT_RUNTIME[label]}) "
                         f"| | | {len(fixed)} | |")
            continue
        inert = [v for v in bugs if (v.case.suite, v.case.name) in NO_EFFECT]
        bugs = [v for v in bugs if v not in inert]
        found = [v for v in bugs if v.shown]
        missed = [_named(v) for v in bugs if not v.shown]
        missed += [f"({_named(v)}: not counted, "
                   f"{NO_EFFECT[(v.case.suite, v.case.name)]})" for v in inert]
        false = [_named(v) for v in fixed if v.shown]
        found_total += len(found)
        labelled_total += len(bugs)
        fixed_total += len(fixed)
        fp_total += len(false)
        lines.append(f"| {label} | {len(bugs)} | {len(found)} | {', '.join(missed) or '-'} "
                     f"| {len(fixed)} | {', '.join(false) or '-'} |")
    share = f"{100 * found_total / labelled_total:.0f} %" if labelled_total else "-"
    lines.append(f"| **all counted** | {labelled_total} | {found_total} ({share}) | | "
                 f"{fixed_total} | {fp_total} |")
    return lines


def _named(verdict: Verdict) -> str:
    return f"{verdict.case.suite}:{verdict.case.name}" + (" (error)" if verdict.error else "")


def distinct_runs(cases: Iterable[Case]) -> list[tuple[Path, str | None]]:
    """The (file, contract) pairs to run, each once, in order."""
    seen: dict[tuple[Path, str | None], None] = {}
    for case in cases:
        seen.setdefault((case.path, case.contract), None)
    return list(seen)


def main(argv: list[str] | None = None) -> int:
    """Run the sets given and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--swc", type=Path, help="the SWC registry's test_cases/solidity")
    parser.add_argument("--nssc", type=Path, help="crytic's not-so-smart-contracts checkout")
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1,
                        help="runs at once (each is one process; keep it at most the cores)")
    parser.add_argument("--out", type=Path, default=Path("oracles-public-out"))
    parser.add_argument("--only", action="append", default=[],
                        help="run only the cases whose path contains this text (repeat)")
    parser.add_argument("--json", type=Path, help="write every run's findings here")
    parser.add_argument("--judge-only", action="store_true",
                        help="run nothing: judge the summaries an earlier run left in --out")
    args = parser.parse_args(argv)
    if args.swc is None and args.nssc is None:
        parser.error("give --swc DIR, --nssc DIR or both (the sets are fetched outside the "
                     "repository)")
    cases = (swc_cases(args.swc) if args.swc else []) + (nssc_cases(args.nssc) if args.nssc
                                                          else [])
    if args.only:
        cases = [c for c in cases if any(text in str(c.path) for text in args.only)]
    if not cases:
        parser.error("no labelled case found under the folders given")
    pairs = distinct_runs(cases)

    def one(index: int) -> Run:
        path, contract = pairs[index]
        out = args.out / (f"{index:03d}-{path.stem}" + (f"-{contract}" if contract else ""))
        run = run_one(path, contract, out, args.seconds, args.seed, not args.judge_only)
        print(f"[{index + 1}/{len(pairs)}] {path.name}{':' + contract if contract else ''}: "
              f"{', '.join(run.tags) or run.error or 'nothing'} ({run.wall_s:.0f} s)",
              file=sys.stderr, flush=True)
        return run

    with ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        done = list(pool.map(one, range(len(pairs))))
    runs = {(run.path, run.contract): run for run in done}
    verdicts = judge(cases, runs)
    print(f"secant fuzz FILE --time {args.seconds}s --seed {args.seed} (defaults otherwise); "
          f"{len(pairs)} runs, {sum(1 for r in done if r.error)} failed")
    print()
    print("\n".join(table(verdicts)))
    failed = [r for r in done if r.error]
    if failed:
        print()
        for run in failed:
            print(f"- failed: {Path(run.path).name}"
                  f"{':' + run.contract if run.contract else ''}: {run.error}")
    if args.json:
        args.json.write_text(json.dumps({
            "command": "bench/oracles_public.py " + shlex.join(sys.argv[1:] if argv is None
                                                               else argv),
            "runs": [asdict(r) for r in done],
            "verdicts": [{"suite": v.case.suite, "case": v.case.name, "label": v.case.label,
                          "vulnerable": v.case.vulnerable, "shown": v.shown,
                          "error": v.error} for v in verdicts]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
