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

Format 2 (:data:`FORMAT`) adds what a learned policy needs (ILF's networks, §5.1):

* to the header, per function, ``fallback``, ``code_share``, ``reads`` and ``writes``
  (storage slots, hex strings) and ``constants`` (hex strings), all from
  ``secant.learn.view.ContractView``; at the top level the ordered address candidates
  (``addresses``, written as senders are) with their ``address_roles``, and where the
  contract came from (``package``, ``source``: set by ``secant learn dataset``, else
  empty);
* to each step, ``solved`` (which inputs a z3 model chose: ``sender``, ``value``,
  ``blocks``, ``time`` and one flag per top-level argument; false where the expert left
  its default), ``address_args`` (per top-level argument: the index of an address in the
  header's ``addresses``, -1 when it is none of them, a list for an array, null for other
  types), ``int_args`` (per top-level argument: an integer as a decimal string, a list
  for an array, null for other types), ``ended`` (how the chosen transaction ended,
  ``features.ended_as``) and ``new_instructions`` (the contract's instructions it covered
  first).

:func:`read_dataset` reads both formats; a reader of a format 1 file finds the format 2
keys absent.

A step's ``case`` holds the whole history, so a learner can re-execute any step; ILF's
sequence for a contract is the longest run of steps of one ``sequence``. Each line is
flushed as it is written: a campaign cut short leaves every step it chose.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from secant.engine.values import VType
from secant.learn.features import FEATURE_NAMES, OPCODE_NAMES, FunctionInfo
from secant.learn.view import ContractView
from secant.types import Tx, TxSeq, case_to_json, jsonable

FORMAT = 2
"""The dataset format's version (the header's ``format``)."""

DATASET_FILE = "dataset.jsonl"
"""Where ``secant expert`` records its choices in its output folder."""


@dataclass(frozen=True)
class DatasetHeader:
    """What the steps refer to: the contract, its functions and senders."""

    contract: str
    functions: tuple[FunctionInfo, ...]
    senders: tuple[int, ...]
    view: ContractView | None = None
    """The static view of the functions and the address candidates (format 2's additions;
    None: written as empty)."""
    package: str = ""
    source: str = ""

    def to_json(self, names: Mapping[str, int] | None = None) -> dict[str, Any]:
        """The header line."""
        view = self.view
        functions = []
        for number, info in enumerate(self.functions):
            line: dict[str, Any] = {
                "signature": info.signature,
                "to": None if info.to is None else _who(info.to, names),
                "arguments": info.arguments, "address_arguments": info.address_arguments,
                "payable": info.payable, "name_tokens": list(info.name_tokens),
                "param_tokens": [list(tokens) for tokens in info.param_tokens],
                "opcodes": dict(zip(OPCODE_NAMES, info.opcodes, strict=True)),
                "blocks": len(info.blocks), "instructions": info.instructions,
                "fallback": "(" not in info.signature, "code_share": 0.0,
                "reads": [], "writes": [], "constants": [],
            }
            if view is not None:
                line.update(fallback=view.fallback[number],
                            code_share=round(view.code_share[number], 6),
                            reads=[hex(slot) for slot in sorted(view.reads[number])],
                            writes=[hex(slot) for slot in sorted(view.writes[number])],
                            constants=[hex(value) for value in view.constants[number]])
            functions.append(line)
        return {
            "kind": "header", "format": FORMAT, "contract": self.contract,
            "package": self.package, "source": self.source,
            "feature_names": list(FEATURE_NAMES),
            "senders": [_who(sender, names) for sender in self.senders],
            "addresses": [_who(address, names) for address in
                          (view.addresses if view is not None else ())],
            "address_roles": list(view.address_roles) if view is not None else [],
            "functions": functions,
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
class SolvedInputs:
    """Which inputs of a chosen transaction a z3 model chose (the rest kept a default).

    The expert's rule (``secant.learn.expert``): an input is solved when a query's model
    assigned one of its variables that the query left free (``tx{i}_sender``,
    ``tx{i}_value``, ``tx{i}_time``, ``tx{i}_blocks``, or an argument word the ABI lets the
    solver change), in the query that produced the transaction or in one that produced a
    transaction it was derived from. A value equal to the default counts when a model chose
    it (a solver that needs 0 chooses 0).
    """

    sender: bool = False
    value: bool = False
    blocks: bool = False
    time: bool = False
    args: tuple[bool, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The step's ``solved`` object."""
        return {"sender": self.sender, "value": self.value, "blocks": self.blocks,
                "time": self.time, "args": list(self.args)}


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
    solved: SolvedInputs = field(default_factory=SolvedInputs)
    address_args: tuple[Any, ...] = ()
    """Per top-level argument: ``address_arguments``'s index, list or None."""
    int_args: tuple[Any, ...] = ()
    """Per top-level argument: ``integer_arguments``'s decimal string, list or None."""
    ended: str = ""
    new_instructions: int = 0

    def to_json(self, names: Mapping[str, int] | None = None) -> dict[str, Any]:
        """The step line."""
        return {"kind": "step", "sequence": self.sequence, "step": len(self.state),
                "case": case_to_json(self.state + (self.choice.tx,),
                                     dict(names) if names else None),
                "features": [[round(value, 6) for value in row] for row in self.features],
                "choice": self.choice.to_json(), "gain": self.gain,
                "candidates": self.candidates, "queries": self.queries,
                "solved": self.solved.to_json(), "address_args": list(self.address_args),
                "int_args": list(self.int_args), "ended": self.ended,
                "new_instructions": self.new_instructions}


def address_arguments(types: Sequence[VType], args: Sequence[Any],
                      addresses: Sequence[int]) -> tuple[Any, ...]:
    """Per top-level argument: where an address stands in ``addresses``.

    -1 when it is not a candidate; a list of indices for an array of addresses (nested for
    nested arrays); None for any other type.
    """
    index = {address: number for number, address in enumerate(addresses)}

    def one(vt: VType, value: Any) -> Any:
        if vt.kind == "address" and isinstance(value, int):
            return index.get(value, -1)
        if vt.kind == "array" and vt.elem is not None and _holds(vt.elem, "address") \
                and isinstance(value, (tuple, list)):
            return [one(vt.elem, item) for item in value]
        return None

    return tuple(one(vt, value) for vt, value in zip(types, args, strict=False))


def integer_arguments(types: Sequence[VType], args: Sequence[Any]) -> tuple[Any, ...]:
    """Per top-level argument: an integer (uint*/int*) as a decimal string.

    A list of them for an array of integers (nested for nested arrays); None for any other
    type.
    """
    def one(vt: VType, value: Any) -> Any:
        if vt.kind in ("uint", "int") and isinstance(value, int) \
                and not isinstance(value, bool):
            return str(value)
        if vt.kind == "array" and vt.elem is not None and _holds(vt.elem, "int") \
                and isinstance(value, (tuple, list)):
            return [one(vt.elem, item) for item in value]
        return None

    return tuple(one(vt, value) for vt, value in zip(types, args, strict=False))


def _holds(vt: VType, what: str) -> bool:
    """Whether ``vt`` is an address (``what`` "address"), an integer ("int"), or arrays of it."""
    if vt.kind == "array":
        return vt.elem is not None and _holds(vt.elem, what)
    return vt.kind == "address" if what == "address" else vt.kind in ("uint", "int")


DatasetRecord = DatasetHeader | DatasetStep
DatasetSink = Callable[[DatasetRecord], None]
"""Where the expert hands each record (``DatasetWriter`` is one)."""


class DatasetWriter:
    """Appends records to a JSON Lines file, one flushed line each (module docstring)."""

    def __init__(self, path: Path, names: Mapping[str, int] | None = None,
                 package: str = "", source: str = "") -> None:
        self.path = path
        self.names = dict(names or {})
        self.package = package
        self.source = source
        self.steps = 0
        self._file: IO[str] | None = None

    def __call__(self, record: DatasetRecord) -> None:
        """Write one record."""
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        if isinstance(record, DatasetStep):
            self.steps += 1
        line = record.to_json(self.names)
        if isinstance(record, DatasetHeader):
            # Where the contract came from is the writer's to say (``secant learn dataset``).
            line["package"] = record.package or self.package
            line["source"] = record.source or self.source
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file (a later record opens it again, appending)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def read_dataset(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the steps of a dataset file (the first header when there are more).

    Format 1 and 2 files are read alike: the keys format 2 added are absent from a format 1
    file's records (a reader treats a missing key as absent, not as an error).
    """
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
