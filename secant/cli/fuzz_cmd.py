"""``secant fuzz``: compile, deploy and fuzz a contract; live progress; summary.json."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from secant.chain.accounts import DEFAULT_BALANCE
from secant.cli.compile_cmd import (
    EvmVersionFlag,
    OptimizeFlag,
    OptimizerRunsFlag,
    RemapFlag,
    SolcVersionFlag,
    ViaIrFlag,
)
from secant.cli.options import (
    AllContractsFlag,
    ArgFlag,
    BalanceFlag,
    BlockNumberFlag,
    BlockTimeFlag,
    ConfigFlag,
    ContractFlag,
    DeployArgFlag,
    DeployerFlag,
    DeployFlag,
    ExcludeFunctionFlag,
    ForceFlag,
    ForkFlag,
    HarnessFlag,
    MatchContractFlag,
    MatchTestFlag,
    OnlyFunctionFlag,
    OraclesFlag,
    QuietFlag,
    SeedFlag,
    SenderFlag,
    ShrinkLimitFlag,
    TimeFlag,
    UnlimitedCodeSizeFlag,
    ValueFlag,
)
from secant.engine.config import DEFAULT_MEMORY_BUDGET_MB, DEFAULT_SYMBOLIC_SHARE
from secant.engine.events import FuzzListener
from secant.engine.shrink import DEFAULT_SHRINK_LIMIT
from secant.errors import SecantError, cli_errors
from secant.files import write_atomic
from secant.types import finding_label

if TYPE_CHECKING:
    from secant.campaign.campaign import Campaign
    from secant.campaign.launch import Planned
    from secant.campaign.options import CampaignOptions
    from secant.engine.failures import InternalError
    from secant.learn.dataset import DatasetWriter

EXIT_FINDINGS = 1
"""Exit code of ``secant fuzz --fail-on-findings`` when something was found."""

EXIT_CRASH = 3
"""Exit code when secant itself failed (a bug: the traceback is saved, see ``crash_exit``)."""

TRACEBACK_FILE = "traceback.txt"


def register(app: typer.Typer) -> None:
    """Add ``fuzz`` to the main app."""
    app.command("fuzz")(fuzz_command)


def crash_exit(error: Exception, folder: Path, name: str = TRACEBACK_FILE) -> NoReturn:
    """Secant itself failed: save the traceback as ``folder/name``, say so in one line, exit 3.

    What the campaign wrote (corpus, findings, the summary saying ``failed``) stays.
    """
    where = folder / name
    try:
        write_atomic(where, "".join(traceback.format_exception(error)))
        saved = f"the traceback is in {where}"
    except OSError:
        saved = "the traceback could not be saved"
    message = " ".join(f"{type(error).__name__}: {error}".split())
    print(f"error: secant failed ({message}); {saved}: please report it", file=sys.stderr)
    raise SystemExit(EXIT_CRASH)


_NOT_RESUMED = frozenset({"path", "out", "force", "resume", "quiet"})
"""Recorded options a resumed campaign takes from its own command line, never the record."""


def _resumed_options(folder: Path, path: Path | None) -> CampaignOptions | None:
    """The options recorded in ``folder`` (the ``--resume`` folder).

    None when it has no manifest but the input is given (a campaign killed before it
    wrote one: its corpus is still read); a one-line error when neither says what to fuzz.
    """
    from secant.rerun.resume import recorded_options

    if not folder.is_dir():
        raise SecantError(f"--resume {folder}: no such folder",
                          "pass the --out folder of an earlier secant fuzz run")
    recorded = recorded_options(folder)
    if recorded is None:
        if path is None:
            raise SecantError(f"--resume {folder}: it has no summary.json with a manifest "
                              "(the campaign stopped before it started, or is not secant's)",
                              f"give the contract too: secant fuzz PATH --resume {folder}")
        return None
    return recorded


@cli_errors
def fuzz_command(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(
        help="A Solidity/Vyper file, a Foundry or Hardhat project, or .bin + .abi "
             "(with --resume: the one the campaign recorded when left out)",
        show_default=False)] = None,
    contract: ContractFlag = None,
    arg: ArgFlag = None,
    value: ValueFlag = 0,
    deploy: DeployFlag = None,
    deploy_arg: DeployArgFlag = None,
    balance: BalanceFlag = DEFAULT_BALANCE,
    all_contracts: AllContractsFlag = False,
    sender: SenderFlag = None,
    deployer: DeployerFlag = None,
    block_number: BlockNumberFlag = None,
    block_time: BlockTimeFlag = None,
    match_contract: MatchContractFlag = None,
    match_test: MatchTestFlag = None,
    harness: HarnessFlag = "auto",
    only_function: OnlyFunctionFlag = None,
    exclude_function: ExcludeFunctionFlag = None,
    unlimited_code_size: UnlimitedCodeSizeFlag = False,
    time_budget: TimeFlag = None,
    execs: Annotated[int | None, typer.Option(
        "--execs", help="Execution budget (deterministic for a given seed).")] = None,
    calls: Annotated[int | None, typer.Option(
        "--calls", help="Transaction budget: stop once the cases have made this many "
        "calls in all (Echidna's and Medusa's testLimit; deterministic for a given "
        "seed).")] = None,
    seed: SeedFlag = 0,
    workers: Annotated[int | None, typer.Option(
        "--workers", "-w", help="Workers fuzzing at once, each in a process of its own, "
                                "sharing their corpora every epoch; the same seed, --execs "
                                "and --workers give the same campaign (default: "
                                "$SECANT_WORKERS, else the machine's cores).",
        show_default=False)] = None,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS", help="Run the workers as Ray actors on a Ray cluster: "
                                         "auto (the one `ray start` runs here), local (a "
                                         "private one), or HOST:PORT; without --workers, "
                                         "one worker per CPU of the cluster.")] = None,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output directory (corpus/, findings/, summary.json).")
    ] = Path("secant-out"),
    schedule: Annotated[str | None, typer.Option(
        "--schedule", help="Power schedule: uniform, afl, aflfast (default) or aflgo.")
    ] = None,
    target: Annotated[str | None, typer.Option(
        "--target", help="Directed fuzzing target FILE:LINE (or pc:N); implies aflgo.")
    ] = None,
    no_predict: Annotated[bool, typer.Option(
        "--no-predict", help="Turn off input prediction (Harvey's configuration A).")
    ] = False,
    predict_iterations: Annotated[int, typer.Option(
        "--predict-iterations", help="Secant iterations after the first prediction "
                                     "(0 is Harvey's configuration C).")] = 8,
    sequences: Annotated[str, typer.Option(
        "--sequences", help="Transaction sequences: demand (Harvey's demand-driven, default), "
                            "eager (Harvey's configuration D) or off (single transactions).")
    ] = "demand",
    aggressive_probability: Annotated[float, typer.Option(
        "--aggressive-probability", help="Probability of an aggressive-mode probe "
                                         "(storage reads as inputs) per mutation.")] = 0.125,
    no_adaptive: Annotated[bool, typer.Option(
        "--no-adaptive", help="Turn off sFuzz's adaptive seeds for just-missed branches.")
    ] = False,
    adaptive_share: Annotated[float | None, typer.Option(
        "--adaptive-share", help="Share of rounds given to adaptive seeds (default: sFuzz's, "
                                 "their number over all seeds).")] = None,
    symbolic_share: Annotated[float, typer.Option(
        "--symbolic-share", help="Share of the campaign's work (transactions run) charged "
                                 "to the concolic stage, which solves just-missed branches "
                                 "with z3 (0: off).")
    ] = DEFAULT_SYMBOLIC_SHARE,
    policy: Annotated[str, typer.Option(
        "--policy", help="Who proposes the transactions: harvey (Harvey's loop, default), "
                         "uniform (ILF's uniform baseline), learned (ILF's networks, "
                         "trained by imitation of the symbolic expert) or mix (learned, "
                         "the expert choosing a tenth of the time); the last three run "
                         "ILF's episodes from the deployed state.")] = "harvey",
    learned_share: Annotated[float, typer.Option(
        "--learned-share", help="Share of Harvey's executions given to learned episodes "
                                "whose transactions Harvey's mutation then works on "
                                "(0: none).")] = 0.0,
    model: Annotated[Path | None, typer.Option(
        "--model", metavar="FILE", help="The learned policy's weights (`secant learn "
                                        "train`; default: the model shipped with "
                                        "secant).")] = None,
    max_sequence_length: Annotated[int, typer.Option(
        "--max-sequence-length", help="Most transactions in a test case (and in an "
                                      "episode of ILF's policies).")] = 16,
    max_time_delay: Annotated[int | None, typer.Option(
        "--max-time-delay", help="Most seconds one transaction may move the clock on "
                                 "(Echidna's maxTimeDelay; default: a week for harnesses "
                                 "with properties, unbounded otherwise).")] = None,
    max_block_delay: Annotated[int | None, typer.Option(
        "--max-block-delay", help="Most blocks one transaction may move the chain on "
                                  "(Echidna's maxBlockDelay; default: 60480 for harnesses "
                                  "with properties, unbounded otherwise).")] = None,
    no_prefix_cache: Annotated[bool, typer.Option(
        "--no-prefix-cache", help="Replay every sequence in full (no prefix-state cache).")
    ] = False,
    corpus: Annotated[Path | None, typer.Option(
        "--corpus", metavar="DIR",
        help="A corpus folder kept across runs: its entries run first (adapted to the code "
             "as it is now), and every new corpus entry is written there too.")] = None,
    memory_budget: Annotated[int, typer.Option(
        "--memory-budget", metavar="MB",
        help="Memory per worker for what grows with the search: the corpus's cost vectors "
             "(dropped least recently fuzzed first, computed again when needed) and the "
             "prefix cache.")] = DEFAULT_MEMORY_BUDGET_MB,
    shrink_limit: ShrinkLimitFlag = DEFAULT_SHRINK_LIMIT,
    fork: ForkFlag = "cancun",
    solc_version: SolcVersionFlag = None,
    optimize: OptimizeFlag = None,
    optimizer_runs: OptimizerRunsFlag = None,
    via_ir: ViaIrFlag = None,
    evm_version: EvmVersionFlag = None,
    remap: RemapFlag = None,
    panic_codes: Annotated[str | None, typer.Option(
        "--panic-codes", help="Solidity panic codes to report, comma-separated (e.g. "
                              "0x01,0x11,0x12), or 'all' (default: 0x00,0x01,0x22,0x51; the "
                              "input checks 0.8 inserts are how such code refuses input).")] = None,
    property_prefix: Annotated[list[str] | None, typer.Option(
        "--property-prefix", help="A name prefix of boolean properties (repeat; default: "
                                  "echidna_, property_, invariant_, statefulFuzz_).")] = None,
    oracles: OraclesFlag = None,
    list_oracles: Annotated[bool, typer.Option(
        "--list-oracles", is_eager=True, callback=lambda value: _list_oracles(value),
        help="List the oracles with their SWC ids and exit.")] = False,
    quiet: QuietFlag = False,
    force: ForceFlag = False,
    resume: Annotated[Path | None, typer.Option(
        "--resume", metavar="OUT", help="Go on with the campaign whose output is in OUT: "
                                        "its corpus and findings are run again on the "
                                        "current code (adapted where functions changed), "
                                        "with the options it recorded unless given again; "
                                        "the output stays in OUT.")] = None,
    config: ConfigFlag = None,
    fail_on_findings: Annotated[bool, typer.Option(
        "--fail-on-findings", help="Exit with 1 when anything was found (for CI).")] = False,
) -> None:
    """Fuzz a contract, a harness or a Foundry test contract; write OUT/summary.json.

    A Foundry test contract (or a project folder, for each test contract in it) runs its
    invariants over the contracts setUp() created, and its fuzz tests. --time counts from
    the start of fuzzing (the code compiled and deployed) and covers shrinking the findings
    and writing the reports too: fuzzing stops early enough for them. It is the whole
    run's: with several campaigns each gets an equal part of what is left when it starts.
    Exit codes: 0 done (findings or not), 1 findings with --fail-on-findings, 2 bad input
    or options, 3 secant itself failed (the traceback is in OUT/traceback.txt).
    """
    from secant.campaign.options import CampaignOptions
    from secant.cli.settings import merged_options

    recorded = _resumed_options(resume, path) if resume is not None else None
    if path is None:
        if recorded is None:
            raise SecantError("no contract to fuzz", "give a .sol file, a project folder, or "
                                                     "--resume OUT")
        path = recorded.path
    values = merged_options(ctx, path, config, "fuzz")
    given = _given(ctx, values)
    values["path"] = path
    if recorded is not None and resume is not None:
        # The recorded options win over secant.toml; the command line wins over both.
        for name, value in recorded.to_record().items():
            source = ctx.get_parameter_source(name)
            if name in values and name not in _NOT_RESUMED and (
                    source is None or source.name in ("DEFAULT", "DEFAULT_MAP")):
                values[name] = value
        values["out"] = resume
    elif resume is not None:
        values["out"] = resume
    options = CampaignOptions.from_values(values, given)
    try:
        run_campaigns(options, quiet=values["quiet"], force=values["force"] and resume is None,
                      resume=resume is not None, fail_on_findings=values["fail_on_findings"])
    except (SecantError, typer.Exit):
        raise
    except Exception as exc:
        crash_exit(exc, options.out)


def _given(ctx: typer.Context, options: dict[str, Any]) -> frozenset[str]:
    """The options the user set: on the command line, or in a config file."""
    chosen = set()
    for name, value in options.items():
        source = ctx.get_parameter_source(name)
        if (source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
                or value != ctx.params.get(name)):
            chosen.add(name)
    return frozenset(chosen)


def run_campaigns(options: CampaignOptions, *, quiet: bool = False, force: bool = False,
                  resume: bool = False, fail_on_findings: bool = False) -> None:
    """Run the campaigns ``options`` describe, one after another, printing as they go.

    ``resume``: the output folder holds an earlier run whose corpus and findings are
    read first (``secant fuzz --resume``); ``force``: an earlier run's output there is
    replaced. ``--time`` is the whole run's: each campaign of several gets its part of
    what is left when it starts (``secant.campaign.campaign.run_share``), unless it keeps
    a budget of its own (a Foundry project's).
    """
    from secant.campaign.campaign import run_share
    from secant.campaign.launch import build_campaign, compile_inputs, plan_campaigns
    from secant.campaign.output import check_output, prepare_output

    check_output(options.out)
    if options.ray:
        from secant.campaign.ray_workers import connect

        connect(options.ray)  # an unreachable cluster is said before compiling
    compiled = compile_inputs(options)
    _notes(compiled.notes)
    planned = plan_campaigns(options, compiled)
    if not resume:
        prepare_output(options.out, force)
    if planned.deployment_finding is not None:
        # The constructor failed an assertion: that is the finding, and nothing to fuzz.
        from secant.campaign.launch import write_deployment_finding

        _notes(planned.notes)
        _print_summary(write_deployment_finding(planned), options.out)
        if fail_on_findings:
            raise typer.Exit(EXIT_FINDINGS)
        return
    plans = planned.plans
    if options.ray and len(plans) > 1:
        _run_on_ray(planned, options.ray, fail_on_findings)
        return
    max_time = options.max_time
    run_deadline = None if max_time is None else time.monotonic() + max_time
    failed = False
    for index, campaign_plan in enumerate(plans):
        seconds = None
        if run_deadline is not None and len(plans) > 1 and not campaign_plan.own_budget:
            seconds = run_share(run_deadline - time.monotonic(), len(plans) - index)
        built = build_campaign(planned, index, seconds)
        _notes(built.notes)
        where = planned.folder(index)
        if len(plans) > 1:
            typer.echo(f"== {campaign_plan.name}"
                       + (f" ({seconds:.0f} s of --time)" if seconds is not None else ""))
        summary = _run_built(built.campaign, where, resume, quiet, built.writer)
        failed = failed or bool(summary["findings"])
    if fail_on_findings and failed:
        raise typer.Exit(EXIT_FINDINGS)


def _run_on_ray(planned: Planned, address: str, fail_on_findings: bool) -> None:
    """The campaigns of a project as Ray tasks over the cluster; their output under --out."""
    from secant.campaign.ray_tasks import run_on_ray

    typer.echo(f"{len(planned.plans)} campaigns as Ray tasks on the cluster at {address}")
    failed = False
    for index, result in run_on_ray(planned, address):
        _notes(result.notes)
        typer.echo(f"== {planned.plans[index].name}")
        _print_summary(result.summary, planned.folder(index))
        failed = failed or bool(result.summary["findings"])
    if fail_on_findings and failed:
        raise typer.Exit(EXIT_FINDINGS)


def _notes(notes: list[str]) -> None:
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def _run_built(campaign: Campaign, where: Path, resume: bool, quiet: bool,
               writer: DatasetWriter | None) -> dict[str, Any]:
    """Run one built campaign (after reading the earlier run when resuming); print it."""
    # A part switched off after an internal error (from the replays of --resume on)
    # gets one line on stderr, above the live display, which redirects it.
    campaign.listen(Announce())
    if resume:
        from secant.rerun.resume import resume as resume_from

        for line in resume_from(campaign, where).lines():
            print(line, file=sys.stderr)
    if campaign.config.shared_corpus is not None:
        from secant.rerun.resume import import_corpus

        for line in import_corpus(campaign, campaign.config.shared_corpus):
            print(line, file=sys.stderr)
    try:
        summary = _run(campaign, quiet)
    finally:
        if writer is not None:
            writer.close()
    _print_summary(summary, where)
    if writer is not None:
        typer.echo(f"dataset: {writer.path} ({writer.steps} step"
                   f"{'s' if writer.steps != 1 else ''})")
    _print_frontier(campaign, where)
    return summary


def _run(campaign: Campaign, quiet: bool) -> dict[str, Any]:
    """Run; Ctrl-C and SIGTERM end the campaign cleanly (its summary and reports written)."""
    with terminate_as_interrupt():
        return _run_display(campaign, quiet)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, ``kill``) stops the campaign as Ctrl-C does.

    Only the main thread can set a signal handler: elsewhere SIGTERM keeps its own.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_display(campaign: Campaign, quiet: bool) -> dict[str, Any]:
    """Run with a live display (unless quiet); Ctrl-C ends the campaign cleanly."""
    if quiet or not sys.stdout.isatty():
        try:
            return campaign.run()
        except KeyboardInterrupt:
            return campaign.finish()
    from rich.live import Live

    from secant.campaign.progress import ProgressView

    view = ProgressView(campaign)
    with Live(view.render(), refresh_per_second=4, transient=False) as live:
        campaign.listen(_Refresh(lambda: live.update(view.render())))
        try:
            summary = campaign.run()
        except KeyboardInterrupt:
            summary = campaign.finish()
        live.update(view.render())
    return summary


class Announce(FuzzListener):
    """Prints one line on stderr when a part of a campaign is switched off after an error.

    ``then`` says what became of it (default: a campaign's, whose summary.json has the
    details).
    """

    def __init__(self, then: str | None = None) -> None:
        self.then = then

    def on_internal_error(self, error: InternalError) -> None:
        """Print the line."""
        line = error.line() if self.then is None else error.line(self.then)
        print(f"warning: {line}", file=sys.stderr)


class _Refresh(FuzzListener):
    """Redraws the live display at most four times a second."""

    def __init__(self, redraw: Callable[[], None]) -> None:
        self.redraw = redraw
        self.last = 0.0

    def on_progress(self) -> None:
        now = time.perf_counter()
        if now - self.last >= 0.25:
            self.last = now
            self.redraw()


def _list_oracles(value: bool) -> None:
    """``--list-oracles``: one line per oracle, then exit."""
    if not value:
        return
    from secant.oracles.registry import available

    for name, oracle in available().items():
        typer.echo(f"{name:16} {oracle.swc or '-':8} {oracle.description}")
    raise typer.Exit(0)


def _shrink_note(finding: dict[str, Any], shrinking: dict[str, Any] | None) -> str | None:
    """What shrinking did to a finding (of ``summary.json``), in words; None: nothing.

    ``shrinking`` is the summary's ``shrink`` section (None: shrinking did not run).
    """
    shrunk = finding.get("shrink")
    if shrunk is None:
        if shrinking is None or not finding["sequence"]:
            return None
        return "not shrunk: " + ("shrinking was interrupted" if shrinking.get("interrupted")
                                 else "the time budget ran out first")
    late = bool(shrunk.get("out_of_time"))
    if finding["sequence"] != finding["original_sequence"]:
        before = shrunk["tx_before"]
        return (f"shrunk from {before} transaction{'s' if before != 1 else ''} in "
                f"{shrunk['execs']} execs{', cut short by the time budget' if late else ''}; "
                "the case found is in the finding's file")
    if late:
        return f"not shrunk: the time budget ran out after {shrunk['execs']} execs"
    if not shrunk.get("reproduced", True):
        return "not shrunk: the case did not show the finding again alone"
    return None


def _print_frontier(campaign: Campaign, out: Path) -> None:
    """The top of the frontier, one line per branch side, and where the reports are."""
    from secant.report.frontier import top_lines

    if campaign.frontier is None:
        return  # no reports (or they failed: the summary's notes say why)
    lines = top_lines(campaign.frontier)
    if lines:
        typer.echo("frontier (just-missed branch sides, the most code behind them first):")
        for line in lines:
            typer.echo(f"  {line}")
    typer.echo(f"coverage: {out / 'coverage' / 'index.html'}, {out / 'coverage.lcov'}, "
               f"{out / 'frontier.json'}")


def _print_summary(summary: dict[str, Any], out: Path) -> None:
    findings = summary["findings"]
    typer.echo(f"{summary['execs']} executions in {summary['elapsed_s']:.1f} s, "
               f"{summary['paths']} paths, {summary['branches_covered']}/"
               f"{summary['branches_total']} branches, {len(findings)} finding(s)")
    for finding in findings:
        where = finding["source"] or f"pc {finding['pc']}"
        label = finding_label(finding["kind"], finding.get("severity"),
                              finding.get("confidence"))
        typer.echo(f"  {label} {finding['contract']}.{finding['function']} at "
                   f"{where}: {finding['detail']} (after {finding['execs_to_find']} execs)")
        typer.echo(f"      sequence: {json.dumps(finding['sequence'])}")
        note = _shrink_note(finding, summary.get("shrink"))
        if note:
            typer.echo(f"      ({note})")
    shrinking = summary.get("shrink")
    if findings and shrinking and (shrinking.get("out_of_time") or shrinking.get("interrupted")):
        why = "interrupted" if shrinking.get("interrupted") else "the time budget ran out"
        typer.echo(f"  shrinking stopped early ({why}): secant shrink {out} shrinks the "
                   "findings further")
    for prop in summary.get("properties", []):
        if prop["status"] == "optimized":
            typer.echo(f"  [optimize] {prop['contract']}.{prop['function']}: best {prop['best']}"
                       f" with {json.dumps(prop['sequence'])}")
        elif prop["status"] == "passed":
            typer.echo(f"  [passed] {prop['contract']}.{prop['function']}")
    typer.echo(f"summary: {out / 'summary.json'}")
