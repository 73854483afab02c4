"""Training ILF's networks by imitation of the symbolic expert (§4.2), in PyTorch.

torch is needed only here, and only inside functions: the rest of secant (fuzzing with a
trained model included, :mod:`secant.learn.network`) runs on numpy.

The networks (hidden size ``hidden``, ReLU FCNs as in ILF §6.1):

* **compressor**: an FCN over each function's row (scaled features, static columns, the mean
  of its name sub-tokens' learned embeddings), then a **GCN** of two layers over ILF's
  function graph (``relu([Â X, X] W + b)`` twice): the functions' embeddings ``e``;
* **GRU_fuzz** over the transactions so far: its input is the previously chosen function's
  embedding (for the current history) and a one-hot of how that transaction ended;
* **FCN_func** (5 layers) scores each function from ``[h_i, e_f]``, softmax over the
  contract's functions;
* **FCN_sender** and **FCN_amount** (3 layers) from ``[h_i, e_chosen]``: scores of sender
  positions up to ``SENDER_CAP`` and of the seed amounts;
* **GRU_int** and **FCN_int** (2 layers): over the chosen function's integer slots, the
  previous slot's class, the slot's type and the parameter's name embedding as input,
  classes seeds + {constant, other};
* the **constant pointer**: each of the chosen function's constants (its
  ``CONSTANT_COLUMNS``) embedded and scored against GRU_int's state at the slot by a dot
  product, constants that do not fit the slot's type masked;
* **GRU_addr** and an address head: each candidate (role, position, is the sender) embedded
  and scored against the GRU state by a dot product; the GRU's input has the slot's type and
  the parameter's name embedding too.

Departures. Each GCN layer sees a function's own row beside the graph's average of its
neighbours (``[Â X, X]``, a self connection): with ``Â X`` alone, two functions linked only
to each other (a setter and its getter) get the same embedding and no head can tell them
apart. ILF starts the argument GRUs from ``h_i``; here they start from
``tanh(W [h_i, e_chosen])``, so that the arguments depend on the chosen function (with
``h_i`` alone every function would share one distribution of arguments). The sender and
amount heads see the chosen function for the same reason.

Training: teacher forcing over the chains of each dataset file (:mod:`secant.learn.encode`),
masked cross-entropy summed over the heads (each head's mean over its unmasked labels), Adam,
batches of chains, every draw from ``seed`` (``torch.manual_seed``, a ``random.Random`` for
the order), deterministic algorithms, one thread by default.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from secant.learn.dataset import read_dataset
from secant.learn.encode import EncodedContract, EncodedStep, Encoder, Layout, build_layout
from secant.learn.network import MODEL_FORMAT, NetworkDims

if TYPE_CHECKING:
    import torch

__all__ = [
    "HEADS",
    "MODEL_FORMAT",
    "EpochRecord",
    "NetworkDims",
    "TrainReport",
    "build_network",
    "export_weights",
    "forward",
    "make_batch",
    "train_model",
]

HEADS: tuple[str, ...] = ("function", "sender", "amount", "int", "constant", "address")
"""The heads whose losses are summed, in report order."""

_MASKED = -1e9
"""The logit of an impossible choice (padding): softmax gives it 0 without NaNs."""


@dataclass
class EpochRecord:
    """One epoch's losses (per head, mean over unmasked labels) and held-out accuracy."""

    epoch: int
    train_loss: dict[str, float]
    held_out_loss: dict[str, float]
    held_out_accuracy: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        """As JSON."""
        return {"epoch": self.epoch, "train_loss": self.train_loss,
                "held_out_loss": self.held_out_loss,
                "held_out_accuracy": self.held_out_accuracy}


@dataclass
class TrainReport:
    """What :func:`train_model` did: the files written and the curves."""

    weights: Path
    report: Path
    layout: str
    dims: NetworkDims
    seed: int
    train: dict[str, int]
    """Contracts, chains and labelled steps of the training set."""
    held_out: dict[str, int]
    epochs: list[EpochRecord] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The JSON report written beside the weights."""
        return {"weights": self.weights.name, "layout": self.layout,
                "dims": self.dims.to_json(), "seed": self.seed, "train": self.train,
                "held_out": self.held_out, "seconds": round(self.seconds, 3),
                "epochs": [record.to_json() for record in self.epochs]}

    def plot(self, path: Path) -> Path:
        """Draw the loss curves (train solid, held-out dashed, one colour per head) as a PNG."""
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot as plt

        figure, axes = plt.subplots(figsize=(7, 4))
        epochs = [record.epoch for record in self.epochs]
        for index, head in enumerate(("total", *HEADS)):
            colour = f"C{index}"
            train = [record.train_loss.get(head, float("nan")) for record in self.epochs]
            axes.plot(epochs, train, color=colour, label=f"{head} (train)")
            if any(record.held_out_loss for record in self.epochs):
                held = [record.held_out_loss.get(head, float("nan")) for record in self.epochs]
                axes.plot(epochs, held, color=colour, linestyle="--",
                          label=f"{head} (held-out)")
        axes.set_xlabel("epoch")
        axes.set_ylabel("cross-entropy")
        axes.legend(fontsize="x-small", ncol=2)
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, format="png")
        plt.close(figure)
        return path


# --------------------------------------------------------------------------- the networks


def _mlp(torch_nn: Any, sizes: Sequence[int], last_relu: bool = False) -> Any:
    layers: list[Any] = []
    for index in range(len(sizes) - 1):
        layers.append(torch_nn.Linear(sizes[index], sizes[index + 1]))
        if index < len(sizes) - 2 or last_relu:
            layers.append(torch_nn.ReLU())
    return torch_nn.Sequential(*layers)


def build_network(layout: Layout, dims: NetworkDims) -> torch.nn.ModuleDict:
    """The networks (module docstring), freshly initialised from torch's current seed."""
    from torch import nn

    h = dims.hidden
    row = layout.numeric_width + layout.static_width + dims.embed
    return nn.ModuleDict({
        "embed": nn.Embedding(len(layout.vocabulary), dims.embed),
        "compress": _mlp(nn, [row] + [h] * dims.compress_layers, last_relu=True),
        "gcn1": nn.Linear(2 * h, h),
        "gcn2": nn.Linear(2 * h, h),
        "gru_fuzz": nn.GRU(h + len(layout.endings), h, batch_first=True),
        "func": _mlp(nn, [2 * h] + [h] * (dims.func_layers - 1) + [1]),
        "sender": _mlp(nn, [2 * h] + [h] * (dims.sender_layers - 1) + [layout.sender_cap]),
        "amount": _mlp(nn, [2 * h] + [h] * (dims.amount_layers - 1)
                       + [len(layout.seed_amounts)]),
        "int_init": nn.Linear(2 * h, h),
        "gru_int": nn.GRU(layout.int_input_width + dims.embed, h, batch_first=True),
        "int_head": _mlp(nn, [h] + [h] * (dims.int_layers - 1) + [layout.int_classes]),
        "const_query": nn.Linear(h, h),
        "const_key": nn.Linear(layout.constant_width, h),
        "addr_init": nn.Linear(2 * h, h),
        "gru_addr": nn.GRU(layout.address_input_width + dims.embed, h, batch_first=True),
        "addr_query": nn.Linear(h, h),
        "addr_key": nn.Linear(layout.candidate_width, h),
    })


Batch = dict[str, npt.NDArray[Any]]


def make_batch(encoder: Encoder, items: Sequence[tuple[EncodedContract, list[EncodedStep]]]
               ) -> Batch:
    """Padded numpy arrays of a batch of chains (each with its contract's arrays).

    Inputs that depend on labels (the argument GRUs' previous choices) are built with the
    encoder's own functions, as the numpy forward pass builds them while fuzzing.
    """
    layout = encoder.layout
    size = len(items)
    steps = max(len(chain) for _, chain in items)
    functions = max(contract.arrays.functions for contract, _ in items)
    candidates = max(max(contract.arrays.candidates.shape[0] for contract, _ in items), 1)
    ints = max([len(contract.arrays.int_slots[s.function]) for contract, chain in items
                for s in chain] + [0])
    addresses = max([len(contract.arrays.address_slots[s.function])
                     for contract, chain in items for s in chain] + [0])
    constants = max([len(contract.arrays.constant_values[s.function])
                     for contract, chain in items for s in chain] + [0])
    words = layout.max_param_tokens
    b: Batch = {
        "numeric": np.zeros((size, steps, functions, layout.numeric_width), np.float32),
        "static": np.zeros((size, functions, layout.static_width), np.float32),
        "tokens": np.zeros((size, functions, layout.max_name_tokens), np.int64),
        "token_weights": np.zeros((size, functions, layout.max_name_tokens), np.float32),
        "adjacency": np.zeros((size, functions, functions), np.float32),
        "function_mask": np.zeros((size, functions), np.bool_),
        "prev_function": np.zeros((size, steps), np.int64),
        "prev_valid": np.zeros((size, steps), np.float32),
        "prev_ended": np.zeros((size, steps, len(layout.endings)), np.float32),
        "chosen": np.zeros((size, steps), np.int64),
        "y_function": np.full((size, steps), -1, np.int64),
        "y_sender": np.full((size, steps), -1, np.int64),
        "sender_mask": np.zeros((size, layout.sender_cap), np.bool_),
        "y_amount": np.full((size, steps), -1, np.int64),
        "int_inputs": np.zeros((size, steps, ints, layout.int_input_width), np.float32),
        "int_tokens": np.zeros((size, steps, ints, words), np.int64),
        "int_token_weights": np.zeros((size, steps, ints, words), np.float32),
        "y_int": np.full((size, steps, ints), -1, np.int64),
        "constant_features": np.zeros((size, steps, constants, layout.constant_width),
                                      np.float32),
        "constant_mask": np.zeros((size, steps, ints, constants), np.bool_),
        "y_constant": np.full((size, steps, ints), -1, np.int64),
        "address_inputs": np.zeros((size, steps, addresses, layout.address_input_width),
                                   np.float32),
        "address_tokens": np.zeros((size, steps, addresses, words), np.int64),
        "address_token_weights": np.zeros((size, steps, addresses, words), np.float32),
        "y_address": np.full((size, steps, addresses), -1, np.int64),
        "candidates": np.zeros((size, steps, candidates, layout.candidate_width), np.float32),
        "candidate_mask": np.zeros((size, candidates), np.bool_),
    }
    for row, (contract, chain) in enumerate(items):
        arrays = contract.arrays
        count = arrays.functions
        n = arrays.candidates.shape[0]
        b["static"][row, :count] = arrays.static
        b["tokens"][row, :count] = arrays.tokens
        b["token_weights"][row, :count] = arrays.token_weights
        b["adjacency"][row, :count, :count] = arrays.adjacency
        b["function_mask"][row, :count] = True
        b["sender_mask"][row, :min(arrays.senders, layout.sender_cap)] = True
        b["candidate_mask"][row, :n] = True
        for t, step in enumerate(chain):
            b["numeric"][row, t, :count] = step.features
            if step.prev_function >= 0:
                b["prev_function"][row, t] = step.prev_function
                b["prev_valid"][row, t] = 1.0
            b["prev_ended"][row, t] = encoder.ended(step.prev_ended)
            b["chosen"][row, t] = step.function
            if step.active:
                b["y_function"][row, t] = step.function
                b["y_sender"][row, t] = step.sender
                b["y_amount"][row, t] = step.amount
            cands = encoder.candidates(arrays, step.actual_sender)
            b["candidates"][row, t, :n] = cands
            features = arrays.constant_features[step.function]
            b["constant_features"][row, t, :features.shape[0]] = features
            for j, slot in enumerate(arrays.int_slots[step.function]):
                previous = step.ints[j - 1] if j else -1
                b["int_inputs"][row, t, j] = encoder.int_input(previous, slot)
                b["int_tokens"][row, t, j], b["int_token_weights"][row, t, j] = \
                    encoder.name_weights(slot)
                fit = encoder.constant_fit(arrays, step.function, slot)
                b["constant_mask"][row, t, j, :fit.shape[0]] = fit
                if step.active:
                    b["y_int"][row, t, j] = step.ints[j]
                    pointer = step.constants[j] if j < len(step.constants) else -1
                    if 0 <= pointer < fit.shape[0] and fit[pointer]:
                        b["y_constant"][row, t, j] = pointer
            for j, slot in enumerate(arrays.address_slots[step.function]):
                previous = step.addresses[j - 1] if j else -1
                b["address_inputs"][row, t, j] = encoder.address_input(cands, previous, slot)
                b["address_tokens"][row, t, j], b["address_token_weights"][row, t, j] = \
                    encoder.name_weights(slot)
                if step.active:
                    b["y_address"][row, t, j] = step.addresses[j]
    return b


def forward(net: torch.nn.ModuleDict, batch: Mapping[str, torch.Tensor]
            ) -> dict[str, torch.Tensor]:
    """The logits of every head for a batch, with teacher forcing.

    Impossible choices get a large negative logit: ``function`` [B,T,F], ``sender``
    [B,T,S], ``amount`` [B,T,A], ``int`` [B,T,J,C], ``constant`` [B,T,J,K], ``address``
    [B,T,J2,N].
    """
    import torch

    relu = torch.relu
    size, steps, functions, _ = batch["numeric"].shape
    name = (net["embed"](batch["tokens"]) * batch["token_weights"].unsqueeze(-1)).sum(2)
    static = torch.cat([batch["static"], name], dim=-1)
    rows = torch.cat([batch["numeric"],
                      static.unsqueeze(1).expand(-1, steps, -1, -1)], dim=-1)
    x = net["compress"](rows)
    adjacency = batch["adjacency"]
    for layer in ("gcn1", "gcn2"):
        x = relu(net[layer](torch.cat([torch.einsum("bij,btjh->btih", adjacency, x), x],
                                      dim=-1)))
    e = x
    hidden = e.shape[-1]

    def pick(index: torch.Tensor) -> torch.Tensor:  # e[b, t, index[b, t]]
        where = index.view(size, steps, 1, 1).expand(-1, -1, 1, hidden)
        return torch.gather(e, 2, where).squeeze(2)

    previous = pick(batch["prev_function"]) * batch["prev_valid"].unsqueeze(-1)
    states, _ = net["gru_fuzz"](torch.cat([previous, batch["prev_ended"]], dim=-1))
    out: dict[str, torch.Tensor] = {}
    scores = net["func"](torch.cat([states.unsqueeze(2).expand(-1, -1, functions, -1), e],
                                   dim=-1)).squeeze(-1)
    out["function"] = scores.masked_fill(~batch["function_mask"].unsqueeze(1), _MASKED)
    chosen = torch.cat([states, pick(batch["chosen"])], dim=-1)
    out["sender"] = net["sender"](chosen).masked_fill(
        ~batch["sender_mask"].unsqueeze(1), _MASKED)
    out["amount"] = net["amount"](chosen)
    flat = chosen.reshape(size * steps, -1)

    def with_names(inputs: torch.Tensor, kind: str) -> torch.Tensor:
        names = (net["embed"](batch[f"{kind}_tokens"])
                 * batch[f"{kind}_token_weights"].unsqueeze(-1)).sum(-2)
        both = torch.cat([inputs, names], dim=-1)
        return both.reshape(size * steps, *both.shape[2:])

    int_inputs = batch["int_inputs"]
    if int_inputs.shape[2]:
        start = torch.tanh(net["int_init"](flat)).unsqueeze(0)
        slots, _ = net["gru_int"](with_names(int_inputs, "int"), start)
        out["int"] = net["int_head"](slots).reshape(size, steps, int_inputs.shape[2], -1)
        if batch["constant_features"].shape[2]:
            query = net["const_query"](slots).reshape(size, steps, int_inputs.shape[2], -1)
            keys = relu(net["const_key"](batch["constant_features"]))
            out["constant"] = torch.einsum("btjh,btkh->btjk", query, keys).masked_fill(
                ~batch["constant_mask"], _MASKED)
    address_inputs = batch["address_inputs"]
    if address_inputs.shape[2]:
        start = torch.tanh(net["addr_init"](flat)).unsqueeze(0)
        slots, _ = net["gru_addr"](with_names(address_inputs, "address"), start)
        query = net["addr_query"](slots).reshape(size, steps, address_inputs.shape[2], -1)
        keys = relu(net["addr_key"](batch["candidates"]))
        out["address"] = torch.einsum("btjh,btnh->btjn", query, keys).masked_fill(
            ~batch["candidate_mask"].view(size, 1, 1, -1), _MASKED)
    return out


_LABELS = {"function": "y_function", "sender": "y_sender", "amount": "y_amount",
           "int": "y_int", "constant": "y_constant", "address": "y_address"}


def _head_sums(logits: Mapping[str, torch.Tensor], batch: Mapping[str, torch.Tensor]
               ) -> dict[str, tuple[torch.Tensor, int, int]]:
    """Per head: summed cross-entropy, unmasked labels, top-1 hits."""
    import torch
    from torch.nn import functional

    out: dict[str, tuple[torch.Tensor, int, int]] = {}
    for head in HEADS:
        if head not in logits:
            continue
        scores = logits[head]
        labels = batch[_LABELS[head]].reshape(-1)
        scores = scores.reshape(labels.shape[0], -1)
        count = int((labels >= 0).sum())
        if not count:
            continue
        loss = functional.cross_entropy(scores, labels, ignore_index=-1, reduction="sum")
        with torch.no_grad():
            hits = int(((scores.argmax(-1) == labels) & (labels >= 0)).sum())
        out[head] = (loss, count, hits)
    return out


def _tensors(batch: Batch) -> dict[str, torch.Tensor]:
    import torch

    return {name: torch.from_numpy(array) for name, array in batch.items()}


def export_weights(net: torch.nn.ModuleDict) -> dict[str, npt.NDArray[np.float32]]:
    """The networks' parameters as float32 numpy arrays, by their torch names."""
    return {name: tensor.detach().cpu().numpy().astype(np.float32).copy()
            for name, tensor in net.state_dict().items()}


def _load_corpus(files: Sequence[Path]
                 ) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    out = []
    for path in files:
        header, steps = read_dataset(Path(path))
        out.append((str(path), header, steps))
    return out


def _metrics(sums: Mapping[str, list[float]]) -> tuple[dict[str, float], dict[str, float]]:
    losses = {head: loss / count for head, (loss, count, _) in sums.items() if count}
    accuracy = {head: hits / count for head, (_, count, hits) in sums.items() if count}
    if losses:
        losses["total"] = sum(losses.values())
    return losses, accuracy


def train_model(train_files: Sequence[Path], held_out_files: Sequence[Path], out_path: Path,
                *, epochs: int = 20, seed: int = 0, hidden: int = 100, embed: int = 32,
                batch_size: int = 16, learning_rate: float = 1e-3, seeds: int = 64,
                amounts: int = 16, min_count: int = 1, max_vocabulary: int = 4096,
                threads: int = 1, plot: Path | None = None,
                progress: Callable[[EpochRecord], None] | None = None) -> TrainReport:
    """Train the networks on dataset files and write the weights and a report.

    ``held_out_files`` are evaluated after every epoch; the weights go to ``out_path``
    (``.npz``), the report beside it (``.json``), and with ``plot`` the loss curves too.

    The layout (vocabulary, seed integers and amounts) comes from the training files only.
    The same files, options and ``seed`` give the same weights.
    """
    import torch

    started = time.monotonic()
    train_corpus = _load_corpus(train_files)
    held_corpus = _load_corpus(held_out_files)
    layout = build_layout(((h, s) for _, h, s in train_corpus), seeds=seeds, amounts=amounts,
                          min_count=min_count, max_vocabulary=max_vocabulary)
    encoder = Encoder(layout)
    train_set = [encoder.encode_dataset(h, s, name) for name, h, s in train_corpus]
    held_set = [encoder.encode_dataset(h, s, name) for name, h, s in held_corpus]
    train_items = [(c, chain) for c in train_set for chain in c.chains]
    held_items = [(c, chain) for c in held_set for chain in c.chains]
    if not train_items:
        raise ValueError("the training files hold no steps to learn from")
    dims = NetworkDims(hidden=hidden, embed=embed)
    out_path = Path(out_path)
    report = TrainReport(
        weights=out_path, report=out_path.with_suffix(".json"), layout=layout.digest,
        dims=dims, seed=seed,
        train={"contracts": len(train_set), "chains": len(train_items),
               "steps": sum(c.steps for c in train_set)},
        held_out={"contracts": len(held_set), "chains": len(held_items),
                  "steps": sum(c.steps for c in held_set)})

    threads_before = torch.get_num_threads()
    deterministic_before = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        torch.manual_seed(seed)
        order_rng = random.Random(seed)
        net = build_network(layout, dims)
        optimiser = torch.optim.Adam(net.parameters(), lr=learning_rate)
        held_batches = [_tensors(make_batch(encoder, held_items[i:i + batch_size]))
                        for i in range(0, len(held_items), batch_size)]
        for epoch in range(1, epochs + 1):
            net.train()
            order = list(range(len(train_items)))
            order_rng.shuffle(order)
            sums: dict[str, list[float]] = {}
            for start in range(0, len(order), batch_size):
                chosen = [train_items[i] for i in order[start:start + batch_size]]
                batch = _tensors(make_batch(encoder, chosen))
                heads = _head_sums(forward(net, batch), batch)
                if not heads:
                    continue
                loss = sum((total / count for total, count, _ in heads.values()),
                           torch.zeros(()))
                optimiser.zero_grad()
                loss.backward()  # type: ignore[no-untyped-call]
                optimiser.step()
                for head, (total, count, hits) in heads.items():
                    mine = sums.setdefault(head, [0.0, 0, 0])
                    mine[0] += float(total.detach())
                    mine[1] += count
                    mine[2] += hits
            train_loss, _ = _metrics(sums)
            held_loss, held_accuracy = _evaluate(net, held_batches)
            record = EpochRecord(epoch, _rounded(train_loss), _rounded(held_loss),
                                 _rounded(held_accuracy))
            report.epochs.append(record)
            if progress is not None:
                progress(record)
        weights = export_weights(net)
    finally:
        torch.set_num_threads(threads_before)
        torch.use_deterministic_algorithms(deterministic_before)

    last = report.epochs[-1] if report.epochs else None
    meta = {
        "format": MODEL_FORMAT, "layout": layout.digest, "encoder_version": layout.version,
        "layout_data": layout.to_json(), "dims": dims.to_json(),
        "training": {"epochs": epochs, "seed": seed, "batch_size": batch_size,
                     "learning_rate": learning_rate, "train": report.train,
                     "held_out": report.held_out,
                     "final": None if last is None else last.to_json()},
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    entries: dict[str, Any] = {"__meta__": np.array(json.dumps(meta, sort_keys=True))}
    entries.update(weights)
    with out_path.open("wb") as handle:
        np.savez(handle, **entries)
    report.seconds = time.monotonic() - started
    report.report.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    if plot is not None:
        report.plot(plot)
    return report


def _evaluate(net: torch.nn.ModuleDict, batches: Sequence[Mapping[str, torch.Tensor]]
              ) -> tuple[dict[str, float], dict[str, float]]:
    import torch

    net.eval()
    sums: dict[str, list[float]] = {}
    with torch.no_grad():
        for batch in batches:
            for head, (total, count, hits) in _head_sums(forward(net, batch), batch).items():
                mine = sums.setdefault(head, [0.0, 0, 0])
                mine[0] += float(total)
                mine[1] += count
                mine[2] += hits
    return _metrics(sums)


def _rounded(values: Mapping[str, float]) -> dict[str, float]:
    return {key: round(value, 6) for key, value in values.items()}
