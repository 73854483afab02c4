"""The expert's dataset for imitation learning: its records and their JSON Lines file.

ILF (§4.2, §5.2) trains its policy on sequences ``[(α_s(F, t_i), t_i)]``: at each step the
feature matrix of the functions for the history so far, and the transaction the expert
chose. ``secant expert`` writes one JSON object per line to ``OUT/dataset.jsonl``:

* first a ``header``: the contract, the functions in the order of every feature matrix and
  choice (signature, address, argument counts, payable, name sub-tokens, counts of
  ``features.OPCODE_NAMES``, region size), the senders, and ``feature_names``;
* then a ``step`` per chosen transaction: ``sequence`` (the depth-first run it belongs to,
  from 1), ``step`` (transactions before it), ``case`` (the transactions before it, then
  the chosen one, as corpus files write them), ``features`` (one row per function, for the
  history before the choice), ``choice`` (function index, sender index, ether, block and
  time deltas, arguments), ``gain`` (edges plus blocks it was expected to add), and how
  many candidates and queries the state's search made.

A step's ``case`` holds the whole history, so a learner can re-execute any step; ILF's
sequence for a contract is the longest run of steps of one ``sequence``. Each line is
flushed as it is written: a campaign cut short leaves every step it chose.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from secant.learn.features import FEATURE_NAMES, OPCODE_NAMES, FunctionInfo
from secant.types import Tx, TxSeq, case_to_json, jsonable

FORMAT = 1
"""The dataset format's version (the header's ``format``)."""

DATASET_FILE = "dataset.jsonl"
"""Where ``secant expert`` records its choices in its output folder."""


@dataclass(frozen=True)
class DatasetHeader:
    """What the steps refer to: the contract, its functions and senders."""

    contract: str
    functions: tuple[FunctionInfo, ...]
    senders: tuple[int, ...]

    def to_json(self, names: Mapping[str, int] | None = None) -> dict[str, Any]:
        """The header line."""
        return {
            "kind": "header", "format": FORMAT, "contract": self.contract,
            "feature_names": list(FEATURE_NAMES),
            "senders": [_who(sender, names) for sender in self.senders],
            "functions": [{
                "signature": info.signature,
                "to": None if info.to is None else _who(info.to, names),
                "arguments": info.arguments, "address_arguments": info.address_arguments,
                "payable": info.payable, "name_tokens": list(info.name_tokens),
                "opcodes": dict(zip(OPCODE_NAMES, info.opcodes, strict=True)),
                "blocks": len(info.blocks), "instructions": info.instructions,
            } for info in self.functions],
        }


@dataclass(frozen=True)
class DatasetChoice:
    """The transaction the expert chose: which function and sender (by index) and the rest."""

    function: int
    tx: Tx
    sender: int

    def to_json(self) -> dict[str, Any]:
        """The choice as JSON (arguments as corpus files write them)."""
        tx = self.tx
        return {"function": self.function, "signature": tx.function, "sender": self.sender,
                "value": tx.value, "blocks": tx.blocks, "time": tx.time,
                "args": jsonable(tx.args)}


@dataclass(frozen=True)
class DatasetStep:
    """One choice of the expert with the state's features (module docstring)."""

    sequence: int
    state: TxSeq
    choice: DatasetChoice
    features: Sequence[Sequence[float]]
    gain: int
    candidates: int
    queries: int

    def to_json(self, names: Mapping[str, int] | None = None) -> dict[str, Any]:
        """The step line."""
        return {"kind": "step", "sequence": self.sequence, "step": len(self.state),
                "case": case_to_json(self.state + (self.choice.tx,),
                                     dict(names) if names else None),
                "features": [[round(value, 6) for value in row] for row in self.features],
                "choice": self.choice.to_json(), "gain": self.gain,
                "candidates": self.candidates, "queries": self.queries}


DatasetRecord = DatasetHeader | DatasetStep
DatasetSink = Callable[[DatasetRecord], None]
"""Where the expert hands each record (``DatasetWriter`` is one)."""


class DatasetWriter:
    """Appends records to a JSON Lines file, one flushed line each (module docstring)."""

    def __init__(self, path: Path, names: Mapping[str, int] | None = None) -> None:
        self.path = path
        self.names = dict(names or {})
        self.steps = 0
        self._file: IO[str] | None = None

    def __call__(self, record: DatasetRecord) -> None:
        """Write one record."""
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        if isinstance(record, DatasetStep):
            self.steps += 1
        self._file.write(json.dumps(record.to_json(self.names), separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file (a later record opens it again, appending)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def read_dataset(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the steps of a dataset file (the first header when there are more)."""
    header: dict[str, Any] | None = None
    steps: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("kind") == "header":
                header = header or record
            elif record.get("kind") == "step":
                steps.append(record)
    if header is None:
        raise ValueError(f"{path} has no header line: not a secant expert dataset")
    return header, steps


def _who(address: int, names: Mapping[str, int] | None) -> str:
    for name, known in (names or {}).items():
        if known == address:
            return name
    return f"0x{address:040x}"
