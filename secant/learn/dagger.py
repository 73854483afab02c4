"""DAgger for ILF's learned policy: the expert labels the states the learned policy reaches.

ILF (§4.2) trains its policy by imitation only: every state of its dataset is one the
*expert* reached, so the networks never learn what to do in the states their own mistakes
lead to. DAgger (Ross, Gordon and Bagnell, AISTATS 2011) closes that gap: run the learned
policy, let the expert say what it would have done in each state the learned policy
reached, add those labelled states to the dataset and train again; repeat.

**A round** (:func:`run_dagger`), for each training contract of a ``secant learn dataset``
corpus (split ``train``, status ``done``):

* a campaign runs ILF's learned episodes (:class:`secant.learn.ilf.EpisodeRunner` under a
  :class:`~secant.learn.ilf.LearnedChooser`, exactly the episodes of ``secant fuzz --policy
  learned``) for at most ``transactions`` transactions and ``seconds`` seconds;
* before each transaction, the symbolic expert labels the episode's state
  (:meth:`secant.learn.expert.ExpertPolicy.label`): it explores the state's next
  transaction as its depth-first search would (once per state, candidates re-ranked against
  the campaign's coverage of the moment) and names the candidate it would choose: function,
  sender, ether, clock moves and arguments, with the inputs its solver chose
  (``Candidate.solved``). The label is recorded as a dataset step (format 2, the expert's
  header: :class:`DaggerPolicy`), and the learned policy's own choice runs. A state where
  no candidate adds coverage or reaches a new state (the expert's ⊥) gets no step: the
  dataset cannot say "nothing";
* with ``beta`` > 0, the expert's label runs instead of the learned choice with that
  probability (Ross et al.'s mixture π_i = β π* + (1 - β) π̂); the default, 0, runs the
  learned policy alone, as the issue asks.

**Files.** Round ``R`` writes ``CORPUS/dagger-R/``:

* ``labels/<package>/<Contract>-<hash8>.jsonl``: the round's labelled steps (a header and
  steps, format 2);
* ``data/…`` and ``manifest.json``: an ordinary corpus, the *union* of the expert's steps
  (``CORPUS/data``) and the labels of rounds 1 to R, so that ``secant learn train
  CORPUS/dagger-R`` reads it unchanged (the held-out files are copied as they are);
* ``model.npz`` (with its ``.json`` report and ``.png`` curves): the networks trained on
  that union (``secant.learn.train.train_model``); round R+1's learned policy is this one.

The last round's model is copied to ``--out``. A second call resumes: contracts whose
labels are written and rounds whose model is trained are not run again; a round folder
written with other settings (another input model, seed, budget) is refused.

**What a labelled step records.** Its ``case`` is the episode's case (the transactions
that succeeded, as the expert's steps record theirs) followed by the label; ``features``
are the learned chooser's rows for the episode's history (failed transactions included)
and the campaign's coverage; ``gain`` and ``new_instructions`` are what the label would
add to that coverage (from its symbolic run: it is not run concretely), ``ended`` how its
symbolic run ended. ``sequence`` is the episode's number.

**Teacher forcing.** Training rebuilds chains from the steps' cases (a step follows the
step whose case is its state, ``secant.learn.encode``). A label's state was reached by the
learned policy's transactions, not by earlier labels, so a labelled step usually starts a
chain of its own: its GRU input is "no previous transaction", and the history reaches the
networks through the feature rows only. Where the learned policy's transaction equals a
step's label (or the label ran, with ``beta``), the chain goes through it as in the
expert's data.

**Determinism.** The episodes draw from the campaign seed and the expert's queries are
bounded by z3's deterministic resource limit: a contract whose run ends by its
transaction bound gives the same labels for the same seed and model; one cut by
``seconds`` may label fewer states on a slower or busier machine.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from secant.engine.policy import LoopState, Novelty, PolicyContext, Proposal
from secant.errors import SecantError
from secant.learn.dataset import (
    DatasetChoice,
    DatasetHeader,
    DatasetSink,
    DatasetStep,
    SolvedInputs,
    address_arguments,
    integer_arguments,
)
from secant.learn.features import Step, feature_matrix
from secant.learn.ilf import CoveredBlocks, EpisodePolicy, LearnedChooser
from secant.types import RunResult, Tx, TxSeq

if TYPE_CHECKING:
    from secant.learn.expert import Candidate, ExpertPolicy
    from secant.learn.network import LearnedModel

__all__ = ["DEFAULT_BETA", "DEFAULT_DAGGER_SECONDS", "DEFAULT_DAGGER_TRANSACTIONS",
           "ROUND_PREFIX", "DaggerPolicy", "DaggerStats", "LabelContract", "round_folder",
           "run_dagger"]

DEFAULT_DAGGER_SECONDS = 2.0
"""Seconds of labelling per contract and round: the expert's search of each new state
dominates (the contract's functions run symbolically, then up to 64 queries), and it ends
about two fifths of the corpus's contracts before their transactions do. With the
corpus's 192 training contracts, a round's labelling took about 4 minutes on one job here,
its training (5 epochs on about 6,600 steps) about 2.5 (docs/learned.md)."""

DEFAULT_DAGGER_TRANSACTIONS = 48
"""Learned transactions at most per contract and round: three episodes of 16."""

DEFAULT_BETA = 0.0
"""The probability that the expert's label runs instead of the learned choice."""

ROUND_PREFIX = "dagger-"
"""Round ``R``'s folder inside the corpus: ``dagger-R``."""

_FINAL = ("done", "no-steps", "skipped", "mismatch")
"""Label statuses a resumed round keeps (``failed`` is tried again)."""


@dataclass
class DaggerStats:
    """What the labelling did in one campaign."""

    labelled: int = 0
    """Steps recorded: states the expert labelled."""
    bottom: int = 0
    """States where the expert had nothing to choose (⊥): no step."""
    cut: int = 0
    """Labels dropped because the budget ran out during the state's search."""
    expert_steps: int = 0
    """Transactions where the label ran instead of the learned choice (``beta``)."""

    def to_json(self) -> dict[str, int]:
        """The counters as JSON."""
        return {"labelled": self.labelled, "bottom": self.bottom, "cut": self.cut,
                "expert_steps": self.expert_steps}


class DaggerPolicy(EpisodePolicy):
    """Learned episodes whose every state the expert labels (module docstring)."""

    def __init__(self, chooser: LearnedChooser, expert: ExpertPolicy, sink: DatasetSink,
                 header: DatasetHeader, beta: float = DEFAULT_BETA,
                 length: int | None = None, covered: CoveredBlocks | None = None) -> None:
        super().__init__(chooser, length)
        self.name = "dagger"
        self.learned = chooser
        self.labeller = expert
        self.sink = sink
        self.header = header
        self.beta = beta
        self.stats = DaggerStats()
        self._covered = covered
        self._header_written = False
        # The state each successful case left (RunResult.state_hash): the expert's "new
        # state" test needs the states the campaign reached.
        self._hashes: dict[TxSeq, int] = {}
        self._block_sizes = {info.code_hash: info.code_blocks for info in chooser.infos
                             if info.code_hash}

    def bind(self, fuzzer: LoopState) -> None:
        """Attach the episodes and the expert to the fuzzer."""
        if self._covered is not None:
            self._covered.fuzzer = fuzzer
        super().bind(fuzzer)
        self.labeller.bind(fuzzer)

    def propose(self) -> Proposal | None:
        """Label the episode's state, then run the learned choice (or, with ``beta``, the label)."""
        fuzzer = self.fuzzer
        if fuzzer.exhausted():
            return None
        runner = self.runner
        runner.begin()
        label = self._label(runner.case, tuple(runner.history))
        if fuzzer.exhausted():
            return None
        # The draw happens only with a mixture, so that beta 0 runs the very episodes of
        # ``--policy learned`` with the same seed.
        if label is not None and self.beta > 0 and fuzzer.rng.random() < self.beta:
            self.stats.expert_steps += 1
            return Proposal(runner.take(label), self.name)
        return Proposal(runner.next_case(fuzzer.rng), self.name)

    def observe(self, proposal: Proposal, result: RunResult, novelty: Novelty) -> None:
        """The episode moves on; the state a successful transaction left is remembered."""
        super().observe(proposal, result, novelty)
        if proposal.origin == self.name and self.runner.case is proposal.case:
            self._hashes[proposal.case] = result.state_hash

    def summary(self) -> dict[str, Any]:
        """The episodes' and the labelling's counters; a header even without steps."""
        self._write_header()
        out = super().summary()
        out["dagger"] = self.stats.to_json()
        out.update(self.labeller.summary())
        return out

    def _write_header(self) -> None:
        if not self._header_written:
            self._header_written = True
            self.sink(self.header)

    def _label(self, case: TxSeq, history: tuple[Step, ...]) -> Tx | None:
        """Ask the expert for its choice from the episode's state; record it as a step."""
        found = self.labeller.label(case, history, self._hashes.get(case, 0))
        if found is None:
            if not self.fuzzer.exhausted():
                self.stats.bottom += 1
            return None
        if self.fuzzer.exhausted():
            # The budget ran out inside the state's search: a label from part of the
            # candidates is not the expert's choice.
            self.stats.cut += 1
            return None
        candidate, explored, queries = found
        self._write_header()
        self.sink(self._step(case, history, candidate, explored, queries))
        self.stats.labelled += 1
        return candidate.tx

    def _step(self, case: TxSeq, history: Sequence[Step], candidate: Candidate,
              explored: int, queries: int) -> DatasetStep:
        """The labelled step, as the expert's ``_record`` writes its own steps."""
        chooser = self.learned
        space = chooser.space
        coverage = self.fuzzer.coverage
        tx = candidate.tx
        function = next((i for i, spec in enumerate(space.functions)
                         if spec.signature == tx.function and spec.to == tx.to), -1)
        senders = list(space.senders)
        choice = DatasetChoice(function, tx,
                               senders.index(tx.sender) if tx.sender in senders else -1)
        types = space.functions[function].types if function >= 0 else ()
        solved = candidate.solved
        mask = SolvedInputs("sender" in solved, "value" in solved, "blocks" in solved,
                            "time" in solved,
                            tuple(f"arg{i}" in solved for i in range(len(tx.args))))
        view = self.header.view
        addresses = view.addresses if view is not None else tuple(senders)
        new = sum(self._block_sizes.get(code_hash, {}).get(pc, 0)
                  for code_hash, pc in candidate.blocks
                  if (code_hash, pc) not in coverage.blocks)
        features = feature_matrix(chooser.infos, history, coverage.blocks, chooser.sizes)
        return DatasetStep(self.runner.episodes, case, choice, features,
                           candidate.gain(coverage.edges, coverage.blocks), explored, queries,
                           mask, address_arguments(types, tx.args, addresses),
                           integer_arguments(types, tx.args), candidate.ended, new)


def dagger_policy(context: PolicyContext, model: LearnedModel, sink: DatasetSink, *,
                  beta: float = DEFAULT_BETA, package: str = "", source: str = ""
                  ) -> DaggerPolicy:
    """The DAgger policy for a campaign's context: the learned chooser and the expert."""
    from secant.learn.expert import ExpertPolicy
    from secant.learn.ilf import learned_chooser

    covered = CoveredBlocks()
    chooser = learned_chooser(context, model, covered)
    expert = ExpertPolicy.from_context(context)
    header = DatasetHeader(context.contract, tuple(chooser.infos),
                           tuple(context.space.senders), chooser.view, package, source)
    return DaggerPolicy(chooser, expert, sink, header, beta, covered=covered)


# ---------------------------------------------------------------------- the rounds
def round_folder(corpus: Path, number: int) -> Path:
    """Round ``number``'s folder inside ``corpus`` (``dagger-<number>``)."""
    return corpus / f"{ROUND_PREFIX}{number}"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _contract_file(entry: Mapping[str, Any], source: Path | None,
                   installed: dict[tuple[str, str], Path]) -> Path:
    """The Solidity file of a manifest entry: ``--source``'s folder, else its pinned package."""
    from secant.learn.corpus import install_package, pin_of

    package, version = str(entry.get("package", "")), str(entry.get("version", ""))
    if source is not None and package == source.resolve().name:
        return source / str(entry.get("source", ""))
    key = (package, version)
    if key not in installed:
        pins = pin_of(f"{package}@{version}") if version else []
        if not pins:
            raise SecantError(f"{package} is not a pinned package",
                              "give its folder with --source")
        installed[key] = install_package(pins[0])
    return installed[key] / str(entry.get("source", ""))


def _union_lines(base: Path, labels: Path) -> list[str] | None:
    """A labels file's step lines, written against the corpus file's header; None: cannot.

    The union keeps the corpus's header, so a label's indices must mean the same there.
    Functions and senders must be the same lists. The address candidates may come in
    another order (a corpus written by an earlier secant ordered the deployed targets
    otherwise): a label's address indices are mapped to the corpus's by name (-1 where
    the corpus does not list it). Labels of another contract view are refused (None).
    """
    from secant.learn.dataset import read_dataset

    one, _ = read_dataset(base)
    two, steps = read_dataset(labels)

    def functions(header: Mapping[str, Any]) -> Any:
        return [(f.get("signature"), f.get("to")) for f in header.get("functions", [])]

    if functions(one) != functions(two) or one.get("senders") != two.get("senders"):
        return None
    theirs = list(two.get("addresses") or [])
    ours = {name: index for index, name in enumerate(one.get("addresses") or [])}
    moved = {index: ours.get(name, -1) for index, name in enumerate(theirs)}

    def remap(value: Any) -> Any:
        if isinstance(value, list):
            return [remap(item) for item in value]
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return moved.get(value, -1)
        return value

    lines = []
    for step in steps:
        if theirs != list(one.get("addresses") or []):
            step = {**step, "address_args": remap(step.get("address_args") or [])}
        lines.append(json.dumps(step, separators=(",", ":")) + "\n")
    return lines


LabelContract = Callable[[str, str, str, str, str, str, float, int, int, float],
                         tuple[str, str, int, float]]
"""One contract's labelling campaign: (source file, contract, model file, labels file,
package, source, seconds, transactions, seed, beta) -> (status, reason, labels, seconds).
A campaign is above this layer: ``secant learn dagger`` gives one (``label_contract`` of
``secant.cli.learn_cmd``), run in a process of its own when ``jobs`` > 1, so it must be a
module-level function."""


def run_dagger(corpus: Path, model: Path, label_contract: LabelContract, *, rounds: int,
               out: Path, seconds: float = DEFAULT_DAGGER_SECONDS,
               transactions: int = DEFAULT_DAGGER_TRANSACTIONS, seed: int = 0, jobs: int = 1,
               beta: float = DEFAULT_BETA, epochs: int = 5, hidden: int = 100,
               threads: int = 1, source: Path | None = None, preload: Sequence[str] = (),
               say: Callable[[str], None] = lambda line: None) -> str:
    """Run ``rounds`` rounds of DAgger on ``corpus`` from ``model``; write ``out``.

    Each contract's labelling runs in a process of its own (``campaign_pool``, with
    ``preload`` imported by the server they are forked from).

    Returns the closing summary line. Raises :class:`SecantError` for a corpus without a
    manifest or training data, a model that does not load, or a round folder written with
    other settings.
    """
    import importlib.util

    from secant.files import write_atomic
    from secant.learn.corpus import MANIFEST_FILE, CorpusContract, campaign_pool, read_manifest
    from secant.learn.network import LearnedModel

    manifest_path = corpus / MANIFEST_FILE
    if not manifest_path.is_file():
        raise SecantError(f"{corpus} holds no {MANIFEST_FILE}",
                          "give a folder `secant learn dataset` wrote")
    if importlib.util.find_spec("torch") is None:
        raise SecantError("secant learn dagger trains with PyTorch",
                          "install it with pip install torch==2.13.0 (the `learn` extra)")
    LearnedModel.load(model)  # a missing or stale model is a one-line error, before any work
    entries = [dict(entry) for entry in read_manifest(manifest_path).get("contracts", [])]
    base_files: dict[int, Path] = {}
    for number, entry in enumerate(entries):
        data = corpus / "data" / (CorpusContract.from_json(entry).key + ".jsonl")
        if entry.get("status") == "done" and data.is_file():
            base_files[number] = data
    trainees = [n for n in base_files if entries[n].get("split") == "train"]
    if not trainees:
        raise SecantError(f"{corpus} has no training data",
                          "run `secant learn dataset` on it first (or let it finish)")
    started = time.perf_counter()
    installed: dict[tuple[str, str], Path] = {}
    current = model
    labelled_total = 0
    for number in range(1, rounds + 1):
        folder = round_folder(corpus, number)
        settings = {"round": number, "model": _digest(current), "seed": seed,
                    "seconds": seconds, "transactions": transactions, "beta": beta}
        previous = read_manifest(folder / MANIFEST_FILE)
        if previous and previous.get("dagger") != settings:
            before = previous.get("dagger") or {}
            differ = ", ".join(name for name in settings if before.get(name) != settings[name])
            raise SecantError(f"{folder} was written with another {differ or 'format'}",
                              "remove it (and later rounds) or give the same options")
        old = {str(entry.get("key")): entry for entry in previous.get("contracts", [])}
        rows = []
        for index, entry in enumerate(entries):
            key = CorpusContract.from_json(entry).key
            row = {**entry, "key": key}
            before = old.get(key, {})
            labels = folder / "labels" / (key + ".jsonl")
            if index in trainees:
                status = str(before.get("dagger_status", ""))
                if status in _FINAL and (status != "done" or labels.is_file()):
                    row.update({name: before[name] for name in
                                ("dagger_status", "dagger_reason", "dagger_labels",
                                 "dagger_seconds") if name in before})
                else:
                    row["dagger_status"] = "todo"
            rows.append(row)

        def save(trained: dict[str, Any] | None = None, rows: list[dict[str, Any]] = rows,
                 folder: Path = folder, settings: dict[str, Any] = settings) -> None:
            write_atomic(folder / MANIFEST_FILE, json.dumps({
                "format": 1, "dagger": settings, "trained": trained,
                "contracts": rows}, indent=1) + "\n")

        folder.mkdir(parents=True, exist_ok=True)
        save()
        todo = [n for n in trainees if rows[n]["dagger_status"] == "todo"]
        say(f"round {number}: labelling {len(todo)} contracts "
            f"({len(trainees) - len(todo)} done before) with {current}")
        tasks: list[tuple[int, tuple[Any, ...]]] = []
        for n in todo:
            row = rows[n]
            try:
                path = _contract_file(row, source, installed)
            except SecantError as error:
                _finish(row, ("failed", error.message, 0, 0.0), say)
                continue
            labels = folder / "labels" / (row["key"] + ".jsonl")
            labels.parent.mkdir(parents=True, exist_ok=True)
            tasks.append((n, (str(path), row["contract"], str(current), str(labels),
                              row["package"], row["source"], seconds, transactions, seed,
                              beta)))
        with campaign_pool(jobs, preload) as pool:
            futures = [(n, pool.submit(label_contract, *task)) for n, task in tasks]
            for n, future in futures:
                _finish(rows[n], future.result(), say)
                save()
        # The union: the corpus's steps, then every round's labels so far.
        splits: dict[str, list[Path]] = {"train": [], "held-out": []}
        labelled = 0
        for n, base in base_files.items():
            row = rows[n]
            union = folder / "data" / (row["key"] + ".jsonl")
            text = base.read_text(encoding="utf-8")
            if not text.endswith("\n"):
                text += "\n"
            steps = int(row.get("steps", 0))
            for earlier in range(1, number + 1):
                labels = round_folder(corpus, earlier) / "labels" / (row["key"] + ".jsonl")
                if not labels.is_file():
                    continue
                lines = _union_lines(base, labels)
                if lines is None:
                    if earlier == number:
                        row["dagger_status"] = "mismatch"
                        row["dagger_reason"] = "its functions or senders differ from the " \
                                               "corpus's"
                    continue
                if earlier == number and row.get("dagger_status") == "mismatch":
                    row["dagger_status"], row["dagger_reason"] = "done", ""  # now merged
                text += "".join(lines)
                steps += len(lines)
                if earlier == number:
                    labelled += len(lines)
            if not union.is_file() or union.read_text(encoding="utf-8") != text:
                write_atomic(union, text)  # a resumed round leaves an unchanged file alone
            row["steps"] = steps
            if row.get("split") in splits:
                splits[str(row["split"])].append(union)
        labelled_total += labelled
        weights = folder / "model.npz"
        wanted = {"epochs": epochs, "hidden": hidden, "seed": seed}
        if previous.get("trained") == wanted and weights.is_file() and not todo:
            say(f"round {number}: {labelled} labels; model trained before: {weights}")
        else:
            save()
            say(f"round {number}: {labelled} labels; training on "
                f"{sum(int(rows[n].get('steps', 0)) for n in trainees)} steps")
            from secant.learn.train import train_model

            train_model(splits["train"], splits["held-out"], weights, epochs=epochs,
                        seed=seed, hidden=hidden, threads=threads,
                        plot=weights.with_suffix(".png"))
        save(wanted)
        current = weights
    out.parent.mkdir(parents=True, exist_ok=True)
    if current.resolve() != out.resolve():
        shutil.copyfile(current, out)
        report = current.with_suffix(".json")
        if report.is_file():
            shutil.copyfile(report, out.with_suffix(".json"))
    return (f"dagger: {rounds} round{'s' if rounds != 1 else ''}, {labelled_total} "
            f"labelled steps over {len(trainees)} training contracts; "
            f"{time.perf_counter() - started:.0f} s; weights: {out}")


def _finish(row: dict[str, Any], result: tuple[str, str, int, float],
            say: Callable[[str], None]) -> None:
    status, reason, steps, seconds = result
    row.update({"dagger_status": status, "dagger_reason": reason, "dagger_labels": steps,
                "dagger_seconds": round(seconds, 3)})
    say(f"{row['key']}: {status} ({steps} labels, {seconds:.1f} s)"
        + (f": {reason}" if reason else ""))
