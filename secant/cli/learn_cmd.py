"""``secant learn``: the learned policy's data and training (ILF, issue 29).

``secant learn dataset OUT`` builds the corpus (``secant.learn.corpus``: pinned npm
packages, every concrete contract deployed, duplicates removed, a split by package) and
runs the symbolic expert (``secant.learn.expert``) on each kept contract, writing one
dataset file per contract (``secant.learn.dataset``, format 2) and ``OUT/manifest.json``.
``secant learn train OUT`` trains ILF's networks on the training split of such a folder
(``secant.learn.train``, PyTorch) and writes the weights that ``secant fuzz --policy
learned`` runs in numpy (``secant.learn.network``). ``secant learn dagger OUT --model M``
goes beyond imitation (``secant.learn.dagger``): the expert labels the states the learned
policy reaches, the labels join the dataset, and the networks are trained again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from secant.errors import SecantError, cli_errors

if TYPE_CHECKING:
    from secant.engine.policy import Policy, PolicyContext
    from secant.learn.dataset import DatasetWriter

LEARN_HELP = ("The learned policy (ILF): build its dataset from a pinned corpus, train its "
              "networks.")

DEFAULT_SECONDS: float | None = None
"""No wall-time cap on the expert per contract: its budget is ``--transactions`` (and each
query's deterministic resource limit), so the dataset, and the model trained on it, are the
same on any machine. A cap (``--seconds``) cuts the slow contracts where a slower or busier
machine is, and their steps then differ from run to run."""

CAMPAIGN_MODULES = (__name__, "secant.campaign.campaign", "secant.campaign.plan",
                    "secant.compile", "secant.learn.dataset", "secant.learn.expert",
                    "secant.learn.ilf", "secant.learn.dagger")
"""What a corpus campaign's process needs, imported once by the server its processes are
forked from (``secant.learn.corpus.campaign_pool``)."""

DEFAULT_TRANSACTIONS = 150
"""Transactions the expert chooses at most per contract (it often stops earlier)."""


def register(app: typer.Typer) -> None:
    """Add the ``learn`` group (``dataset``, ``train``, ``dagger``) to the main app."""
    learn_app = typer.Typer(no_args_is_help=True, help=LEARN_HELP)
    learn_app.command("dataset")(dataset_command)
    learn_app.command("train")(train_command)
    learn_app.command("dagger")(dagger_command)
    app.add_typer(learn_app, name="learn")


@cli_errors
def dataset_command(
    out: Annotated[Path, typer.Argument(help="Output folder (data/, manifest.json).",
                                        show_default=False)],
    packages: Annotated[str | None, typer.Option(
        "--packages", help="Only these pinned packages (comma-separated names, "
                           "name@version for one version).")] = None,
    source: Annotated[Path | None, typer.Option(
        "--source", help="A local folder of .sol files, taken as one package instead of "
                         "the pinned corpus.")] = None,
    limit: Annotated[int | None, typer.Option(
        "--limit", help="At most N kept contracts per package (a quick run).")] = None,
    seconds: Annotated[float | None, typer.Option(
        "--seconds", help="Cap the expert's wall time per contract (default: none, so "
                          "the dataset does not depend on the machine's speed).",
        show_default=False)] = DEFAULT_SECONDS,
    transactions: Annotated[int, typer.Option(
        "--transactions", help="Transactions the expert chooses at most per contract."
    )] = DEFAULT_TRANSACTIONS,
    seed: Annotated[int, typer.Option("--seed", help="The campaigns' seed.")] = 0,
    jobs: Annotated[int, typer.Option("--jobs", help="Contracts run at once.")] = 1,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Build the corpus and run the symbolic expert on each contract; write OUT/data/.

    Each kept contract's choices go to OUT/data/<package>/<Contract>-<hash8>.jsonl (dataset
    format 2) and every contract met to OUT/manifest.json, with its split, status and
    reason. A second run skips the contracts already done. Exit codes: 0 done, 2 bad input
    or options.
    """
    if limit is not None and limit < 1:
        raise SecantError("--limit must be at least 1", "leave it out for the whole corpus")
    if seconds is not None and seconds <= 0:
        raise SecantError("--seconds must be more than 0",
                          "leave it out for no cap on the expert's time")
    if transactions < 1:
        raise SecantError("--transactions must be at least 1", "use 1 or more")
    if jobs < 1:
        raise SecantError("--jobs must be at least 1", "use 1 for one contract at a time")
    if source is not None and not source.is_dir():
        raise SecantError(f"--source {source} is not a folder", "give a folder of .sol files")
    if source is not None and packages is not None:
        raise SecantError("--source and --packages exclude each other", "give one of them")
    if out.exists() and not out.is_dir():
        raise SecantError(f"{out} is not a folder", "choose an output folder")
    say = (lambda line: None) if quiet else (lambda line: typer.echo(line, err=True))
    summary = build_dataset(out, packages=packages, source=source, limit=limit,
                            seconds=seconds, transactions=transactions, seed=seed, jobs=jobs,
                            say=say)
    typer.echo(summary)


def build_dataset(out: Path, *, packages: str | None, source: Path | None, limit: int | None,
                  seconds: float | None, transactions: int, seed: int, jobs: int,
                  say: Any) -> str:
    """Enumerate, deduplicate, run the expert; return the closing summary line."""
    from secant.files import write_atomic
    from secant.learn.corpus import (
        MANIFEST_FILE,
        PINS,
        CorpusContract,
        CorpusError,
        campaign_pool,
        corpus_solc,
        enumerate_package,
        install_package,
        pin_of,
        read_manifest,
        source_files,
    )

    manifest_path = out / MANIFEST_FILE
    previous = read_manifest(manifest_path)
    done = {entry.get("package", "") + "/" + entry.get("contract", "") + "-"
            + entry.get("code_hash", "")[:8]: entry
            for entry in previous.get("contracts", [])
            if entry.get("status") in ("done", "no-steps", "skipped")}
    groups: list[tuple[str, str, Path | None, list[Path], str]] = []
    package_notes: dict[str, dict[str, Any]] = {}
    if source is not None:
        name = source.resolve().name
        groups.append((name, "", source, source_files(source), ""))
    else:
        pins = list(PINS)
        if packages is not None:
            pins.clear()
            for wanted in (part.strip() for part in packages.split(",") if part.strip()):
                found = pin_of(wanted)
                if not found:
                    known = ", ".join(sorted({pin.name for pin in PINS}))
                    raise SecantError(f"--packages: {wanted!r} is not a pinned package",
                                      f"choose among {known}")
                pins.extend(pin for pin in found if pin not in pins)
        for pin in pins:
            say(f"installing {pin.spec}")
            try:
                installed = install_package(pin)
            except CorpusError as error:
                package_notes[pin.spec] = {"status": "not-installed", "reason": error.message}
                groups.append((pin.name, pin.version, None, [], error.message))
                continue
            package_notes[pin.spec] = {"status": "installed"}
            groups.append((pin.name, pin.version, installed,
                           source_files(installed, pin.folders, pin.exclude), ""))
    entries: list[CorpusContract] = []
    seen: dict[str, str] = {}
    started = time.perf_counter()
    with corpus_solc() as manager:
        for name, version, root, files, _ in groups:
            if root is None:
                continue
            met = enumerate_package(name, version, root, files, seen=seen, manager=manager,
                                      limit=limit)
            entries.extend(met)
            say(f"{name}{'@' + version if version else ''}: {len(files)} files, "
                + _counts(met))
    for entry in entries:
        data = out / "data" / (entry.key + ".jsonl")
        if entry.status == "kept" and entry.key in done and (
                done[entry.key]["status"] != "done" or data.is_file()):
            old = done[entry.key]
            entry.status, entry.steps = old["status"], int(old.get("steps", 0))
            entry.seconds, entry.reason = float(old.get("seconds", 0.0)), old.get("reason", "")

    def save() -> None:
        write_atomic(manifest_path, json.dumps({
            "format": 1, "seed": seed, "seconds": seconds, "transactions": transactions,
            "packages": package_notes,
            "contracts": [entry.to_json() for entry in entries]}, indent=1) + "\n")

    out.mkdir(parents=True, exist_ok=True)
    save()
    todo = [entry for entry in entries if entry.status == "kept"]
    tasks = [(entry.path, entry.contract, str(out / "data" / (entry.key + ".jsonl")),
              entry.package, entry.source, seconds, transactions, seed) for entry in todo]
    with campaign_pool(jobs, CAMPAIGN_MODULES) as pool:
        futures = [pool.submit(run_expert, *task) for task in tasks]
        for entry, future in zip(todo, futures, strict=True):
            _finish(entry, future.result(), say)
            save()
    steps = sum(entry.steps for entry in entries if entry.status == "done")
    ran = sum(1 for entry in entries if entry.status in ("done", "no-steps"))
    return (f"dataset: {ran} contracts, {steps} steps, {_counts(entries)}; "
            f"{time.perf_counter() - started:.0f} s; manifest: {manifest_path}")


def _counts(entries: list[Any]) -> str:
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.status] = counts.get(entry.status, 0) + 1
    return ", ".join(f"{count} {status}" for status, count in sorted(counts.items())) or \
        "no contracts"


def _finish(entry: Any, result: tuple[str, str, int, float], say: Any) -> None:
    entry.status, entry.reason, entry.steps, entry.seconds = result
    say(f"{entry.key}: {entry.status} ({entry.steps} steps, {entry.seconds:.1f} s)"
        + (f": {entry.reason}" if entry.reason else ""))


def run_expert(path: str, contract: str, data_file: str, package: str, source: str,
               seconds: float | None, transactions: int, seed: int
               ) -> tuple[str, str, int, float]:
    """Run the expert on one contract; write its dataset file (status, reason, steps, s).

    ``seconds``: a cap on its wall time (None: none, the dataset then depends on no clock).
    """
    from secant.learn.expert import ExpertPolicy

    return _dataset_campaign(
        path, contract, data_file, package, source, seconds, transactions, seed,
        lambda context, writer: ExpertPolicy.from_context(context, None, writer),
        "the expert chose no transaction")


def label_contract(path: str, contract: str, model_file: str, labels_file: str,
                   package: str, source: str, seconds: float, transactions: int, seed: int,
                   beta: float) -> tuple[str, str, int, float]:
    """One contract's DAgger labelling campaign (``secant.learn.dagger.LabelContract``).

    The learned policy's episodes run, and the expert labels each state they reach.
    """
    from secant.learn.dagger import dagger_policy
    from secant.learn.network import LearnedModel

    try:
        model = LearnedModel.load(Path(model_file))
    except SecantError as error:
        return "skipped", error.message[:300], 0, 0.0
    return _dataset_campaign(
        path, contract, labels_file, package, source, seconds, transactions, seed,
        lambda context, writer: dagger_policy(context, model, writer, beta=beta,
                                              package=package, source=source),
        "the expert labelled no state")


def _dataset_campaign(path: str, contract: str, data_file: str, package: str, source: str,
                      seconds: float | None, transactions: int, seed: int,
                      policy: Callable[[PolicyContext, DatasetWriter], Policy],
                      nothing: str) -> tuple[str, str, int, float]:
    """One corpus contract's campaign under ``policy``, which writes dataset steps.

    Returns (status, reason, steps, seconds). The file is written under a temporary name
    and renamed when the campaign ends, so an interrupted run leaves no half file that a
    resumed run would take for done; a contract that cannot be fuzzed is ``skipped``, an
    internal error ``failed`` (recorded, the corpus run goes on), no step ``no-steps``
    (``nothing`` says why).
    """
    from secant.campaign.campaign import Campaign
    from secant.campaign.config import CampaignConfig
    from secant.campaign.plan import Selection, plan
    from secant.compile import CompileOptions, load
    from secant.engine.config import FuzzConfig
    from secant.learn.corpus import CORPUS_CHAIN, corpus_solc
    from secant.learn.dataset import DatasetWriter

    started = time.perf_counter()
    final = Path(data_file)
    partial = final.with_name(final.name + ".partial")
    partial.unlink(missing_ok=True)
    try:
        with corpus_solc() as manager:  # the compiler the corpus chose for this file
            compilations = load([Path(path)], CompileOptions(), manager=manager)
        config = CampaignConfig(FuzzConfig(seed=seed, max_execs=transactions,
                                           max_time=seconds), out=None, shrink_limit=0)
        [chosen] = plan(compilations, Selection(contract=contract, harness="echidna"),
                        CORPUS_CHAIN, config, project=False)
        chain = chosen.make_chain()
        writer = DatasetWriter(partial, chain.names(), package=package, source=source)
        try:
            Campaign(chain, chosen.config, oracles=[], functions=chosen.functions,
                     senders=chosen.senders, block_steps=chosen.block_steps,
                     policy=lambda context: policy(context, writer)).run()
        finally:
            writer.close()
    except SecantError as error:  # nothing to fuzz, a constructor that reverts, ...
        partial.unlink(missing_ok=True)
        return "skipped", error.message[:300], 0, time.perf_counter() - started
    except Exception as error:  # noqa: BLE001 - one contract's failure is recorded, not fatal
        partial.unlink(missing_ok=True)
        text = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
        return "failed", f"{type(error).__name__}: {text}", 0, time.perf_counter() - started
    elapsed = time.perf_counter() - started
    if writer.steps == 0:
        partial.unlink(missing_ok=True)
        return "no-steps", nothing, 0, elapsed
    partial.replace(final)
    return "done", "", writer.steps, elapsed


def _check_training(epochs: int, hidden: int, out: Path) -> None:
    """The training options ``learn train`` and ``learn dagger`` share, checked."""
    if epochs < 1:
        raise SecantError("--epochs must be at least 1", "use 1 or more")
    if hidden < 4:
        raise SecantError("--hidden must be at least 4", "use the default, 100")
    if out.suffix != ".npz":
        raise SecantError(f"--out {out} does not end in .npz", "name the weights file *.npz")


DEFAULT_EPOCHS = 5
"""Passes over the training split: on the pinned corpus the held-out loss is lowest after
three to five epochs and rises after (docs/learned.md)."""


@cli_errors
def train_command(
    dataset: Annotated[Path, typer.Argument(
        help="A `secant learn dataset` folder (manifest.json, data/).", show_default=False)],
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="The weights file to write (.npz); its report goes beside it "
                            "(.json) with the loss curves (.png).")] = Path("ilf.npz"),
    epochs: Annotated[int, typer.Option("--epochs", help="Passes over the training split.")
                      ] = DEFAULT_EPOCHS,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the weights and batches.")] = 0,
    hidden: Annotated[int, typer.Option("--hidden", help="Width of the GRU states.")] = 100,
    threads: Annotated[int, typer.Option("--threads", help="CPU threads for PyTorch.")] = 1,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """Train the learned policy's networks on a dataset folder; write the weights file.

    The training split of DATASET's manifest trains, its held-out split is evaluated after
    every epoch (loss and accuracy per head, in the report). The same folder, options and
    seed give the same weights. Needs PyTorch (torch==2.13.0, the `learn` extra). Exit
    codes: 0 done, 2 bad input or options.
    """
    from secant.learn.corpus import MANIFEST_FILE, CorpusContract, read_manifest

    _check_training(epochs, hidden, out)
    if threads < 1:
        raise SecantError("--threads must be at least 1", "use 1 or more")
    manifest_path = dataset / MANIFEST_FILE
    if not manifest_path.is_file():
        raise SecantError(f"{dataset} holds no {MANIFEST_FILE}",
                          "give a folder `secant learn dataset` wrote")
    splits: dict[str, list[Path]] = {"train": [], "held-out": []}
    for entry in read_manifest(manifest_path).get("contracts", []):
        if entry.get("status") != "done":
            continue
        data = dataset / "data" / (CorpusContract.from_json(entry).key + ".jsonl")
        if data.is_file() and entry.get("split") in splits:
            splits[str(entry["split"])].append(data)
    if not splits["train"]:
        raise SecantError(f"{dataset} has no training data",
                          "run `secant learn dataset` on it first (or let it finish)")
    try:
        from secant.learn.train import train_model
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
        raise SecantError("secant learn train needs PyTorch",
                          "install it with pip install torch==2.13.0 (the `learn` "
                          "extra)") from None

    def progress(record: Any) -> None:
        if not quiet:
            typer.echo(f"epoch {record.epoch}: train loss {record.train_loss['total']:.3f}, "
                       f"held-out loss {record.held_out_loss.get('total', float('nan')):.3f}, "
                       f"function accuracy "
                       f"{record.held_out_accuracy.get('function', float('nan')):.2f}",
                       err=True)

    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    report = train_model(splits["train"], splits["held-out"], out, epochs=epochs, seed=seed,
                         hidden=hidden, threads=threads, plot=out.with_suffix(".png"),
                         progress=progress)
    last = report.epochs[-1]
    typer.echo(f"trained on {len(splits['train'])} contracts, held out "
               f"{len(splits['held-out'])}, {epochs} epochs in "
               f"{time.perf_counter() - started:.0f} s; held-out accuracy "
               + ", ".join(f"{head} {value:.2f}"
                           for head, value in sorted(last.held_out_accuracy.items()))
               + f"; weights: {out}")


@cli_errors
def dagger_command(
    dataset: Annotated[Path, typer.Argument(
        help="A `secant learn dataset` folder (manifest.json, data/); each round writes "
             "DATASET/dagger-R/.", show_default=False)],
    model: Annotated[Path, typer.Option(
        "--model", "-m", help="The learned policy of the first round (.npz).",
        show_default=False)],
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="The weights file to write (.npz): the last round's model, "
                            "its report beside it (.json).")] = Path("ilf-dagger.npz"),
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds of labelling and "
                                                         "training.")] = 1,
    seconds: Annotated[float | None, typer.Option(
        "--seconds", help="Labelling time per contract and round "
                          "[default: 2.0].", show_default=False)] = None,
    transactions: Annotated[int | None, typer.Option(
        "--transactions", help="Learned transactions at most per contract and round "
                               "[default: 48].", show_default=False)] = None,
    beta: Annotated[float, typer.Option(
        "--beta", help="Probability that the expert's label runs instead of the learned "
                       "choice (DAgger's mixture; 0: the learned policy alone).")] = 0.0,
    epochs: Annotated[int, typer.Option("--epochs", help="Passes over the training split "
                                                         "per round.")] = DEFAULT_EPOCHS,
    hidden: Annotated[int, typer.Option("--hidden", help="Width of the GRU states.")] = 100,
    source: Annotated[Path | None, typer.Option(
        "--source", help="The folder of a corpus built with `learn dataset --source`.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="The campaigns' and the training's "
                                                     "seed.")] = 0,
    jobs: Annotated[int, typer.Option("--jobs", help="Contracts labelled at once.")] = 1,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
) -> None:
    """DAgger: the expert labels the states the learned policy reaches; train on the union.

    Each round runs the learned policy's episodes on every training contract of DATASET,
    lets the symbolic expert label each state they reach (its choice there, with the inputs
    its solver chose), writes the labels to DATASET/dagger-R/labels/, the union of the
    expert's steps and every round's labels to DATASET/dagger-R/ as an ordinary dataset
    folder (`secant learn train DATASET/dagger-R` reads it), and trains the next model on
    it. The last round's model goes to --out. A second run resumes. Needs PyTorch. Exit
    codes: 0 done, 2 bad input or options.
    """
    from secant.learn.dagger import (
        DEFAULT_DAGGER_SECONDS,
        DEFAULT_DAGGER_TRANSACTIONS,
        run_dagger,
    )

    seconds = DEFAULT_DAGGER_SECONDS if seconds is None else seconds
    transactions = DEFAULT_DAGGER_TRANSACTIONS if transactions is None else transactions
    if rounds < 1:
        raise SecantError("--rounds must be at least 1", "use 1 or more")
    if seconds <= 0:
        raise SecantError("--seconds must be more than 0", "give the labelling time")
    if transactions < 1:
        raise SecantError("--transactions must be at least 1", "use 1 or more")
    if not 0.0 <= beta <= 1.0:
        raise SecantError("--beta must be between 0 and 1", "use 0 for the learned policy "
                                                            "alone")
    _check_training(epochs, hidden, out)
    if jobs < 1:
        raise SecantError("--jobs must be at least 1", "use 1 for one contract at a time")
    if source is not None and not source.is_dir():
        raise SecantError(f"--source {source} is not a folder", "give a folder of .sol files")
    if not dataset.is_dir():
        raise SecantError(f"{dataset} is not a folder",
                          "give a folder `secant learn dataset` wrote")
    say = (lambda line: None) if quiet else (lambda line: typer.echo(line, err=True))
    typer.echo(run_dagger(dataset, model, label_contract, rounds=rounds, out=out,
                          seconds=seconds, transactions=transactions, seed=seed, jobs=jobs,
                          beta=beta, epochs=epochs, hidden=hidden, source=source,
                          preload=CAMPAIGN_MODULES, say=say))
