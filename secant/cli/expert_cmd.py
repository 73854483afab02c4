"""``secant expert``: ILF's symbolic expert as a campaign of its own, recording a dataset.

The expert (``secant.learn.expert``) chooses every transaction itself: from the state a
sequence reached, it explores the next transaction with z3 and runs the one that covers the
most new code, depth first, until no state it reached can add coverage or the budget is
spent. The campaign is otherwise ``secant fuzz``'s (oracles, corpus, findings, shrinking,
reports, summary.json), so the two compare directly on the same output files; its choices
go to ``OUT/dataset.jsonl`` for learning (``secant.learn.dataset``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
from secant.cli.fuzz_cmd import crash_exit, run_campaigns
from secant.cli.options import (
    AllContractsFlag,
    ArgFlag,
    BalanceFlag,
    BlockNumberFlag,
    BlockTimeFlag,
    ConfigFlag,
    ContractFlag,
    DeployArgFlag,
    DeployFlag,
    ForceFlag,
    ForkFlag,
    HarnessFlag,
    MatchContractFlag,
    MatchTestFlag,
    OraclesFlag,
    QuietFlag,
    SeedFlag,
    SenderFlag,
    ShrinkLimitFlag,
    TimeFlag,
    UnlimitedCodeSizeFlag,
    ValueFlag,
)
from secant.engine.shrink import DEFAULT_SHRINK_LIMIT
from secant.errors import SecantError, cli_errors


def register(app: typer.Typer) -> None:
    """Add ``expert`` to the main app."""
    app.command("expert")(expert_command)


@cli_errors
def expert_command(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(
        help="A Solidity/Vyper file, a Foundry or Hardhat project, or .bin + .abi",
        show_default=False)],
    contract: ContractFlag = None,
    arg: ArgFlag = None,
    value: ValueFlag = 0,
    deploy: DeployFlag = None,
    deploy_arg: DeployArgFlag = None,
    balance: BalanceFlag = DEFAULT_BALANCE,
    all_contracts: AllContractsFlag = False,
    sender: SenderFlag = None,
    block_number: BlockNumberFlag = None,
    block_time: BlockTimeFlag = None,
    match_contract: MatchContractFlag = None,
    match_test: MatchTestFlag = None,
    harness: HarnessFlag = "auto",
    unlimited_code_size: UnlimitedCodeSizeFlag = False,
    time_budget: TimeFlag = None,
    execs: Annotated[int | None, typer.Option(
        "--execs", help="Budget in transactions the expert chooses (deterministic for a "
                        "given seed: z3 is bounded by --rlimit, not by time).")] = None,
    seed: SeedFlag = 0,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output directory (corpus/, findings/, dataset.jsonl, "
                            "summary.json).")] = Path("secant-expert"),
    max_depth: Annotated[int, typer.Option(
        "--max-depth", help="Most transactions in a sequence the expert builds.")] = 16,
    rlimit: Annotated[int | None, typer.Option(
        "--rlimit", help="z3's resource limit per query (deterministic; default about three "
                         "seconds of one core).")] = None,
    queries: Annotated[int | None, typer.Option(
        "--queries", help="Queries at most while exploring one state's next transaction "
                          "(default 64).")] = None,
    no_dataset: Annotated[bool, typer.Option(
        "--no-dataset", help="Do not write OUT/dataset.jsonl.")] = False,
    shrink_limit: ShrinkLimitFlag = DEFAULT_SHRINK_LIMIT,
    fork: ForkFlag = "cancun",
    solc_version: SolcVersionFlag = None,
    optimize: OptimizeFlag = None,
    optimizer_runs: OptimizerRunsFlag = None,
    via_ir: ViaIrFlag = None,
    evm_version: EvmVersionFlag = None,
    remap: RemapFlag = None,
    oracles: OraclesFlag = None,
    quiet: QuietFlag = False,
    force: ForceFlag = False,
    config: ConfigFlag = None,
) -> None:
    """Run ILF's symbolic expert on a contract; write its choices to OUT/dataset.jsonl.

    Every transaction is chosen by z3 to cover the most new code from the state the
    sequence so far reached (one transaction ahead, depth first). Oracles, corpus,
    findings, reports and the --time budget (shrinking and reports included) are as in
    secant fuzz. Exit codes: 0 done, 2 bad input or options, 3 secant itself failed (the
    traceback is in OUT/traceback.txt).
    """
    from secant.campaign.options import CampaignOptions
    from secant.cli.settings import merged_options

    values = merged_options(ctx, path, config, "expert")
    if values["max_depth"] < 1:
        raise SecantError("--max-depth must be at least 1", "use 1 for single transactions")
    # The expert's own names for the options a fuzz campaign has under others.
    renamed = {"max_depth": "max_sequence_length", "rlimit": "expert_rlimit",
               "queries": "expert_queries"}
    chosen = {renamed.get(name, name): value for name, value in values.items()}
    chosen.update(path=path, policy="expert", dataset=not values["no_dataset"])
    options = CampaignOptions.from_values(chosen)
    try:
        run_campaigns(options, quiet=values["quiet"], force=values["force"])
    except (SecantError, typer.Exit):
        raise
    except Exception as exc:
        crash_exit(exc, options.out)
