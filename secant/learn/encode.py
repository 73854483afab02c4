"""The learned policy's inputs and labels: one encoder for training and for fuzzing.

ILF's networks (§4.2, §5.1) read, per function of the contract, a row of features for the
history so far, and a graph of the functions; they are trained to give the expert's
choices. This module turns both a dataset file (header and steps, format 2 or 1:
:mod:`secant.learn.dataset`) and a live :class:`~secant.learn.view.ContractView` into the
same arrays, through one path: both become :class:`ContractFacts` (plain data), and
:class:`Encoder` turns facts and feature rows into arrays. Training and fuzzing therefore
cannot disagree on a column.

What a function's input row holds (the networks add the name embedding):

* the :data:`~secant.learn.features.FEATURE_NAMES` columns of the step, counts (argument and
  opcode counts) scaled with ``log1p`` so that a function with 300 SLOADs does not drown the
  0..1 columns;
* :data:`STATIC_COLUMNS`: fallback, share of the code, payable, arguments and address
  arguments (``log1p``), instructions of the region (``log1p``);
* the name's sub-tokens as indices into a vocabulary built from the training corpus
  (``<unk>`` for the rest) with averaging weights: ILF averaged word2vec vectors, which
  cannot be fetched here, so the networks learn the embeddings.

The graph is ILF's GCN adjacency: an edge between two functions when one writes a storage
slot the other reads or writes, self loops, symmetric normalisation ``D^-1/2 A D^-1/2``.

Labels (every one may be masked, -1, when the expert did not choose it):

* the function index (never masked);
* the sender index, masked when the solver left the default sender or past :data:`SENDER_CAP`;
* the amount's class among the seed amounts, masked when not solved, not payable, or not a
  seed;
* per integer *slot* (an ``int``/``uint`` parameter, or an element of a one-dimensional
  array of them, up to :data:`ARRAY_CAP` elements) its class: ``constant`` when the value
  is one of the function's PUSH constants, else its index among the seed integers, else
  ``other``; a dynamic array
  shorter than the cap ends with an ``other`` (where the policy stops drawing);
* per integer slot of class ``constant``, *which* constant: its index among the function's
  constants (sorted), the label of the constant pointer;
* per address slot the index of the candidate, masked when unsolved or not a candidate.

Beyond ILF, the argument networks see each slot's parameter: :data:`SLOT_COLUMNS` (the
integer's width and sign, whether the slot is an array element) and the parameter's name
sub-tokens (``deadline``, ``amount``, ``to``; the same vocabulary as function names), and
``constant`` is not a uniform draw but a pointer over the function's constants, each
described by :data:`CONSTANT_COLUMNS` (its width, whether it looks like a timestamp, a power
of ten or two, a round number, where it ranks) and masked where it does not fit the slot's
type. ILF's own ProjectKudos example is missed for want of this: the value an argument must
take is a constant of the code, and which constant depends on what the argument is.

Seeds are ILF's SI and SA (§5.2): the most frequent *solved* integer arguments (top K) and
ether values (0 always among them) of the training set.

A dataset ``sequence`` is a depth-first run of the expert, which may try several
transactions at one state: it is a tree, not a chain. :func:`encode_dataset` rebuilds the
chains from the steps' cases (a step's history is the case of the step before it), one per
leaf, and counts each step's labels once (:attr:`EncodedStep.active`).

Everything that fixes the layout of the inputs (feature names, static columns, vocabulary,
seeds, caps, :data:`ENCODER_VERSION`) goes into :attr:`Layout.digest`; a weights file
records it, and loading checks it against what this code computes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from secant.learn.features import ENDINGS, FEATURE_NAMES

if TYPE_CHECKING:
    from secant.engine.mutators import FunctionSpec
    from secant.learn.view import ContractView

__all__ = [
    "ADDRESS_POSITIONS",
    "ARRAY_CAP",
    "CONSTANT_COLUMNS",
    "ENCODER_VERSION",
    "MAX_PARAM_TOKENS",
    "PARAM_CAP",
    "ROLES",
    "SENDER_CAP",
    "SLOT_COLUMNS",
    "STATIC_COLUMNS",
    "ContractArrays",
    "ContractFacts",
    "EncodedContract",
    "EncodedStep",
    "Encoder",
    "FunctionFacts",
    "Layout",
    "Slot",
    "build_layout",
    "facts_from_header",
    "facts_from_view",
    "parameter_kind",
    "parameter_types",
]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

ENCODER_VERSION = 2
"""Bumped whenever this module changes what an input row or a label means."""

STATIC_COLUMNS: tuple[str, ...] = (
    "fallback", "code_share", "payable", "arguments", "address_arguments", "instructions",
)
"""The columns of a function's row that do not depend on the history."""

SLOT_COLUMNS: tuple[str, ...] = (
    "bits_8", "bits_16", "bits_32", "bits_64", "bits_128", "bits_256", "signed", "element",
    "dynamic",
)
"""What an argument slot's type says: its width (the smallest bucket that holds it), sign, and
whether it is an element of a (dynamic) array. An address slot has no width columns."""

_WIDTH_BUCKETS = (8, 16, 32, 64, 128, 256)

CONSTANT_COLUMNS: tuple[str, ...] = (
    "const_bits_8", "const_bits_16", "const_bits_32", "const_bits_64", "const_bits_128",
    "const_bits_160", "const_bits_256", "timestamp", "power_of_ten", "power_of_two",
    "round", "wei_unit", "rank",
)
"""What a constant of a function looks like to the constant pointer.

Its width bucket; ``timestamp``: between 10**9 and 2**32 (a Unix time from 2001 to 2106);
``power_of_ten`` (10**k, k >= 1: decimals); ``power_of_two`` (2**k, k >= 2); ``round``: a
multiple of 1,000 that is not a power of ten; ``wei_unit``: a multiple of 10**15 (amounts in
ether); ``rank``: its position among the function's constants, 0 for the smallest, 1 for the
largest."""

_CONSTANT_BUCKETS = (8, 16, 32, 64, 128, 160, 256)

MAX_PARAM_TOKENS = 4
"""Name sub-tokens kept per parameter."""

ROLES: tuple[str, ...] = ("sender", "target", "attacker", "zero")
"""The roles of address candidates (``ContractView.address_roles``)."""

SENDER_CAP = 8
"""The sender head scores sender positions 0..SENDER_CAP-1 (senders vary per contract)."""

ARRAY_CAP = 4
"""Elements of an array of integers or addresses the networks choose."""

PARAM_CAP = 8
"""Parameter positions told apart in the argument GRUs' inputs (later ones share the last)."""

ADDRESS_POSITIONS = 16
"""Candidate positions told apart in an address candidate's features."""

MAX_NAME_TOKENS = 8
"""Name sub-tokens kept per function (the rest are dropped)."""

UNKNOWN = "<unk>"
"""The vocabulary's entry 0: every token the training corpus did not have."""

_COUNT_COLUMNS = frozenset({"arguments", "address_arguments"})
_INT_TYPE = re.compile(r"u?int[0-9]*")
_ARRAY_TYPE = re.compile(r"(u?int[0-9]*|address)\[([0-9]*)\]")
_INT_WIDTH = re.compile(r"(u?)int([0-9]*)(\[[0-9]*\])?$")


def _log1p(value: float) -> float:
    return math.log1p(max(value, 0.0))


def _count_mask(names: Sequence[str]) -> npt.NDArray[np.bool_]:
    return np.array([name in _COUNT_COLUMNS or name.startswith("op_") for name in names],
                    dtype=np.bool_)


# --------------------------------------------------------------------------- the layout


@dataclass(frozen=True)
class Layout:
    """What fixes the networks' inputs and outputs: vocabulary, seeds, names and caps."""

    vocabulary: tuple[str, ...]
    """Name sub-tokens; entry 0 is :data:`UNKNOWN`."""
    seed_ints: tuple[int, ...]
    """ILF's SI: the integer classes, most frequent first."""
    seed_amounts: tuple[int, ...]
    """ILF's SA: the amount classes in wei, 0 first."""
    feature_names: tuple[str, ...] = FEATURE_NAMES
    static_columns: tuple[str, ...] = STATIC_COLUMNS
    roles: tuple[str, ...] = ROLES
    endings: tuple[str, ...] = ENDINGS
    sender_cap: int = SENDER_CAP
    array_cap: int = ARRAY_CAP
    param_cap: int = PARAM_CAP
    address_positions: int = ADDRESS_POSITIONS
    max_name_tokens: int = MAX_NAME_TOKENS
    slot_columns: tuple[str, ...] = SLOT_COLUMNS
    constant_columns: tuple[str, ...] = CONSTANT_COLUMNS
    max_param_tokens: int = MAX_PARAM_TOKENS
    version: int = ENCODER_VERSION

    @property
    def int_classes(self) -> int:
        """Seed integers, then ``constant``, then ``other``."""
        return len(self.seed_ints) + 2

    @property
    def constant_class(self) -> int:
        """The class of "one of the function's constants"."""
        return len(self.seed_ints)

    @property
    def other_class(self) -> int:
        """The class of "any other value" (the policy draws it by type)."""
        return len(self.seed_ints) + 1

    @property
    def numeric_width(self) -> int:
        """Columns of the history-dependent part of a row."""
        return len(self.feature_names)

    @property
    def static_width(self) -> int:
        """Columns of the static part of a row (without the name embedding)."""
        return len(self.static_columns)

    @property
    def candidate_width(self) -> int:
        """Columns of an address candidate: role, position, is the transaction's sender."""
        return len(self.roles) + self.address_positions + 1

    @property
    def slot_width(self) -> int:
        """Columns of a slot's type (:data:`SLOT_COLUMNS`)."""
        return len(self.slot_columns)

    @property
    def constant_width(self) -> int:
        """Columns of a constant for the constant pointer (:data:`CONSTANT_COLUMNS`)."""
        return len(self.constant_columns)

    @property
    def int_input_width(self) -> int:
        """Columns of GRU_int's input without the parameter's name embedding.

        The previous class, the parameter position, the slot's type.
        """
        return self.int_classes + self.param_cap + self.slot_width

    @property
    def address_input_width(self) -> int:
        """Columns of GRU_addr's input without the parameter's name embedding.

        The previous candidate, the parameter position, the slot's type.
        """
        return self.candidate_width + self.param_cap + self.slot_width

    def to_json(self) -> dict[str, Any]:
        """Everything as JSON (integers as decimal strings: seeds can exceed 2**53)."""
        return {
            "version": self.version, "feature_names": list(self.feature_names),
            "static_columns": list(self.static_columns), "roles": list(self.roles),
            "endings": list(self.endings), "vocabulary": list(self.vocabulary),
            "seed_ints": [str(v) for v in self.seed_ints],
            "seed_amounts": [str(v) for v in self.seed_amounts],
            "slot_columns": list(self.slot_columns),
            "constant_columns": list(self.constant_columns),
            "dims": {"sender_cap": self.sender_cap, "array_cap": self.array_cap,
                     "param_cap": self.param_cap, "address_positions": self.address_positions,
                     "max_name_tokens": self.max_name_tokens,
                     "max_param_tokens": self.max_param_tokens},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Layout:
        """A layout as :meth:`to_json` wrote it (KeyError/ValueError/TypeError when malformed)."""
        dims = data["dims"]
        return cls(
            vocabulary=tuple(str(t) for t in data["vocabulary"]),
            seed_ints=tuple(int(v) for v in data["seed_ints"]),
            seed_amounts=tuple(int(v) for v in data["seed_amounts"]),
            feature_names=tuple(str(n) for n in data["feature_names"]),
            static_columns=tuple(str(n) for n in data["static_columns"]),
            roles=tuple(str(n) for n in data["roles"]),
            endings=tuple(str(n) for n in data["endings"]),
            sender_cap=int(dims["sender_cap"]), array_cap=int(dims["array_cap"]),
            param_cap=int(dims["param_cap"]), address_positions=int(dims["address_positions"]),
            max_name_tokens=int(dims["max_name_tokens"]),
            # A version 1 layout has neither; its digest then differs from the current one.
            slot_columns=tuple(str(n) for n in data.get("slot_columns", ())),
            constant_columns=tuple(str(n) for n in data.get("constant_columns", ())),
            max_param_tokens=int(dims.get("max_param_tokens", 0)),
            version=int(data["version"]),
        )

    @property
    def digest(self) -> str:
        """sha256 (hex) of :meth:`to_json`: equal digests mean the same input layout."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def current(self) -> Layout:
        """The same vocabulary and seeds with what the code fixes as it is now.

        The code fixes the feature names, static columns, caps and encoder version.

        A weights file's layout and its ``current()`` have the same digest exactly when the
        running secant encodes inputs the way the weights were trained for.
        """
        return Layout(self.vocabulary, self.seed_ints, self.seed_amounts)


def build_layout(corpus: Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]], *,
                 seeds: int = 64, amounts: int = 16, min_count: int = 1,
                 max_vocabulary: int = 4096) -> Layout:
    """The layout learned from a training corpus of (header, steps) pairs.

    The vocabulary holds the name sub-tokens seen at least ``min_count`` times (most frequent
    first, at most ``max_vocabulary`` with ``<unk>``); the seed integers are the ``seeds``
    most frequent solved integer arguments (array elements included), the seed amounts 0 and
    the ``amounts - 1`` most frequent solved nonzero ether values. Ties go to the smaller
    token or value, so the layout depends on the corpus only.
    """
    tokens: Counter[str] = Counter()
    ints: Counter[int] = Counter()
    ethers: Counter[int] = Counter()
    for header, steps in corpus:
        for function in header.get("functions", ()):
            tokens.update(str(t) for t in function.get("name_tokens", ())[:MAX_NAME_TOKENS])
            for param in function.get("param_tokens", ()):
                tokens.update(str(t) for t in param[:MAX_PARAM_TOKENS])
        for step in steps:
            solved = step.get("solved") or {}
            solved_args = solved.get("args") or []
            for index, value in enumerate(step.get("int_args") or []):
                if value is None or index >= len(solved_args) or not solved_args[index]:
                    continue
                ints.update(_flat_ints(value))
            if solved.get("value"):
                ether = int(step.get("choice", {}).get("value", 0))
                if ether:
                    ethers[ether] += 1
    words = sorted((t for t, n in tokens.items() if n >= min_count and t != UNKNOWN),
                   key=lambda t: (-tokens[t], t))[:max(max_vocabulary - 1, 0)]
    top_ints = sorted(ints, key=lambda v: (-ints[v], v))[:seeds]
    top_ethers = sorted(ethers, key=lambda v: (-ethers[v], v))[:max(amounts - 1, 0)]
    return Layout((UNKNOWN, *words), tuple(top_ints), (0, *top_ethers))


def _flat_ints(value: Any) -> list[int]:
    """An ``int_args`` entry as integers: a decimal string, a number, or a list of them."""
    if isinstance(value, list):
        return [v for item in value for v in _flat_ints(item)]
    if isinstance(value, bool) or value is None:
        return []
    return [int(value)]


# --------------------------------------------------------------------------- facts


def parameter_types(signature: str) -> tuple[str, ...]:
    """The top-level parameter types of a signature, as ABI text.

    ``f(uint256,(bool,address))`` gives ``("uint256", "(bool,address)")``; a fallback or
    receive function has none.
    """
    start = signature.find("(")
    if start < 0 or not signature.endswith(")"):
        return ()
    inner = signature[start + 1:-1]
    if not inner:
        return ()
    out: list[str] = []
    depth = 0
    begin = 0
    for index, char in enumerate(inner):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            out.append(inner[begin:index])
            begin = index + 1
    out.append(inner[begin:])
    return tuple(out)


def parameter_kind(type_text: str) -> tuple[str, int | None]:
    """What the networks choose for a parameter of this type, and a fixed array's length.

    ``("int", None)`` for an integer, ``("address", None)``, ``("ints", n)`` or
    ``("addresses", n)`` for a one-dimensional array of them (``n`` None when dynamic), and
    ``("other", None)`` for the rest (the policy draws those by type, as ILF does).
    """
    if _INT_TYPE.fullmatch(type_text):
        return "int", None
    if type_text == "address":
        return "address", None
    match = _ARRAY_TYPE.fullmatch(type_text)
    if match is not None:
        length = int(match.group(2)) if match.group(2) else None
        return ("addresses" if match.group(1) == "address" else "ints"), length
    return "other", None


@dataclass(frozen=True)
class FunctionFacts:
    """What the encoder needs of one function, as plain data."""

    signature: str
    name_tokens: tuple[str, ...]
    parameters: tuple[str, ...]
    """Top-level parameter types as ABI text."""
    address_arguments: int
    payable: bool
    instructions: int
    fallback: bool
    code_share: float
    reads: frozenset[int]
    writes: frozenset[int]
    constants: tuple[int, ...]
    param_tokens: tuple[tuple[str, ...], ...] = ()
    """Per parameter, its name's sub-tokens (empty: unnamed or unknown)."""


@dataclass(frozen=True)
class ContractFacts:
    """What the encoder needs of a contract: its functions, senders and address candidates."""

    functions: tuple[FunctionFacts, ...]
    senders: int
    """How many senders (candidates 0..senders-1 are the senders, in order)."""
    roles: tuple[str, ...]
    """Per address candidate, its role (:data:`ROLES`)."""


def _slots(values: Iterable[Any]) -> frozenset[int]:
    return frozenset(int(str(v), 0) for v in values)


def facts_from_header(header: Mapping[str, Any]) -> ContractFacts:
    """The facts of a dataset header (format 2; format 1's missing keys read as absent)."""
    functions = []
    for function in header.get("functions", ()):
        signature = str(function["signature"])
        functions.append(FunctionFacts(
            signature=signature,
            name_tokens=tuple(str(t) for t in function.get("name_tokens", ())),
            parameters=parameter_types(signature),
            address_arguments=int(function.get("address_arguments", 0)),
            payable=bool(function.get("payable", False)),
            instructions=int(function.get("instructions", 0)),
            fallback=bool(function.get("fallback", "(" not in signature)),
            code_share=float(function.get("code_share", 0.0)),
            reads=_slots(function.get("reads", ())),
            writes=_slots(function.get("writes", ())),
            constants=tuple(sorted(_slots(function.get("constants", ())))),
            param_tokens=tuple(tuple(str(t) for t in param)
                               for param in function.get("param_tokens", ())),
        ))
    senders = len(header.get("senders", ()))
    addresses = header.get("addresses")
    roles = header.get("address_roles")
    if not roles:  # format 1, or a format 2 header written without a view
        count = len(addresses) if addresses else senders
        roles = ["sender" if i < senders else "target" for i in range(count)]
    return ContractFacts(tuple(functions), senders, tuple(str(r) for r in roles))


def facts_from_view(view: ContractView, specs: Sequence[FunctionSpec]) -> ContractFacts:
    """The facts of a campaign's :class:`~secant.learn.view.ContractView`.

    The parameter types come from ``specs`` (the ABI types the campaign calls with, as
    text), so that what the networks choose lines up with what the policy encodes.
    """
    if len(specs) != len(view.functions):
        raise ValueError(f"the view has {len(view.functions)} functions, the input space "
                         f"{len(specs)}")
    functions = tuple(
        FunctionFacts(
            signature=info.signature, name_tokens=tuple(info.name_tokens),
            parameters=tuple(str(vt) for vt in spec.types),
            address_arguments=info.address_arguments, payable=info.payable,
            instructions=info.instructions, fallback=bool(view.fallback[index]),
            code_share=float(view.code_share[index]), reads=frozenset(view.reads[index]),
            writes=frozenset(view.writes[index]), constants=tuple(view.constants[index]),
            param_tokens=info.param_tokens,
        )
        for index, (info, spec) in enumerate(zip(view.functions, specs, strict=True)))
    return ContractFacts(functions, len(view.senders), tuple(view.address_roles))


# --------------------------------------------------------------------------- arrays


@dataclass(frozen=True)
class Slot:
    """One integer or address the networks choose.

    Parameter ``param``, element ``element`` of it (None for a scalar parameter);
    ``dynamic`` when the parameter is a dynamic array (its elements end at the first
    ``other``).
    """

    param: int
    element: int | None
    dynamic: bool = False
    bits: int = 0
    """The integer's width (0: an address slot)."""
    signed: bool = False
    tokens: tuple[int, ...] = ()
    """The parameter name's sub-tokens as vocabulary indices (empty: no name)."""

    def fits(self, value: int) -> bool:
        """Whether a 256-bit word can be this integer slot's argument.

        Unsigned: below ``2**bits``; signed: in range as a two's complement word.
        """
        if self.signed:
            half = 1 << (self.bits - 1)
            return value < half or value >= (1 << 256) - half
        return value < (1 << self.bits)


@dataclass(frozen=True)
class ContractArrays:
    """A contract's static inputs: per-function rows and name tokens, the graph, the slots."""

    static: F32
    """[F, static_width] :data:`STATIC_COLUMNS`."""
    tokens: I64
    """[F, max_name_tokens] vocabulary indices (0 where padded)."""
    token_weights: F32
    """[F, max_name_tokens] averaging weights (0 where padded; a row sums to 1 or 0)."""
    adjacency: F32
    """[F, F] the normalised GCN adjacency."""
    payable: tuple[bool, ...]
    kinds: tuple[tuple[str, ...], ...]
    """Per function, per parameter: :func:`parameter_kind`'s kind."""
    int_slots: tuple[tuple[Slot, ...], ...]
    address_slots: tuple[tuple[Slot, ...], ...]
    constants: tuple[frozenset[int], ...]
    constant_values: tuple[tuple[int, ...], ...]
    """Per function, its constants sorted: what the constant pointer's index means."""
    constant_features: tuple[F32, ...]
    """Per function, [K, constant_width] :data:`CONSTANT_COLUMNS` of each constant."""
    candidates: F32
    """[N, candidate_width] per address candidate (the sender flag left 0)."""
    senders: int

    @property
    def functions(self) -> int:
        """F."""
        return int(self.static.shape[0])


def adjacency(reads: Sequence[frozenset[int]], writes: Sequence[frozenset[int]]) -> F32:
    """ILF's function graph, normalised: ``D^-1/2 (A + I) D^-1/2``.

    ``A[i, j]`` is 1 when ``i`` writes a slot ``j`` reads or writes, or the other way round
    (a dependency either way: the graph is undirected).
    """
    count = len(reads)
    a = np.eye(count, dtype=np.float64)
    touches = [reads[i] | writes[i] for i in range(count)]
    for i in range(count):
        if not writes[i]:
            continue
        for j in range(count):
            if i != j and writes[i] & touches[j]:
                a[i, j] = a[j, i] = 1.0
    scale = 1.0 / np.sqrt(a.sum(axis=1))
    out: F32 = (a * scale[:, None] * scale[None, :]).astype(np.float32)
    return out


@dataclass
class EncodedStep:
    """One step of a chain: its inputs and labels (-1: masked)."""

    features: F32
    """[F, numeric_width] the scaled feature rows."""
    prev_function: int
    """The function chosen at the step before in the chain (-1: none)."""
    prev_ended: str | None
    """How that transaction ended (None: unknown or none)."""
    function: int
    sender: int
    """The sender label (-1 unless solved)."""
    actual_sender: int
    """The sender the transaction had (for the address candidates' sender flag)."""
    amount: int
    ints: tuple[int, ...]
    """Per integer slot of the chosen function."""
    addresses: tuple[int, ...]
    """Per address slot of the chosen function."""
    constants: tuple[int, ...] = ()
    """Per integer slot, the index of its constant (-1 unless the class is ``constant``)."""
    active: bool = True
    """Whether the labels count (a step shared by several chains counts in the first)."""


@dataclass
class EncodedContract:
    """A dataset file encoded: the contract's arrays and its chains of steps."""

    name: str
    arrays: ContractArrays
    chains: list[list[EncodedStep]] = field(default_factory=list)

    @property
    def steps(self) -> int:
        """Labelled steps (each step once)."""
        return sum(1 for chain in self.chains for step in chain if step.active)


class Encoder:
    """Turns facts and feature rows into arrays for one :class:`Layout`."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._vocabulary = {token: index for index, token in enumerate(layout.vocabulary)}
        self._seeds = {value: index for index, value in enumerate(layout.seed_ints)}
        self._amounts = {value: index for index, value in enumerate(layout.seed_amounts)}
        self._counts = _count_mask(layout.feature_names)

    # ---------------------------------------------------------------- inputs

    def features(self, rows: Sequence[Sequence[float]] | npt.NDArray[Any]) -> F32:
        """[F, numeric_width] feature rows scaled (count columns through ``log1p``)."""
        width = self.layout.numeric_width
        matrix = np.array(rows, dtype=np.float64)
        if matrix.size == 0:
            return np.zeros((0, width), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != width:
            raise ValueError(f"feature rows of shape {matrix.shape}; this secant computes "
                             f"{width} columns per function")
        matrix[:, self._counts] = np.log1p(np.maximum(matrix[:, self._counts], 0.0))
        out: F32 = matrix.astype(np.float32)
        return out

    def contract(self, facts: ContractFacts) -> ContractArrays:
        """The static arrays of a contract."""
        layout = self.layout
        count = len(facts.functions)
        static = np.zeros((count, layout.static_width), dtype=np.float32)
        tokens = np.zeros((count, layout.max_name_tokens), dtype=np.int64)
        weights = np.zeros((count, layout.max_name_tokens), dtype=np.float32)
        kinds: list[tuple[str, ...]] = []
        int_slots: list[tuple[Slot, ...]] = []
        address_slots: list[tuple[Slot, ...]] = []
        for index, function in enumerate(facts.functions):
            static[index] = (
                float(function.fallback), function.code_share, float(function.payable),
                _log1p(len(function.parameters)), _log1p(function.address_arguments),
                _log1p(function.instructions),
            )
            names = function.name_tokens[:layout.max_name_tokens]
            for position, token in enumerate(names):
                tokens[index, position] = self._vocabulary.get(token, 0)
                weights[index, position] = 1.0 / len(names)
            mine = [parameter_kind(t) for t in function.parameters]
            kinds.append(tuple(kind for kind, _ in mine))
            named = [self._param_tokens(function, param) for param in range(len(mine))]
            widths = [_int_width(t) for t in function.parameters]
            int_slots.append(self._slots(mine, ("int", "ints"), named, widths))
            address_slots.append(self._slots(mine, ("address", "addresses"), named, widths))
        candidates = np.zeros((len(facts.roles), layout.candidate_width), dtype=np.float32)
        for index, role in enumerate(facts.roles):
            if role in layout.roles:
                candidates[index, layout.roles.index(role)] = 1.0
            candidates[index, len(layout.roles)
                       + min(index, layout.address_positions - 1)] = 1.0
        return ContractArrays(
            static=static, tokens=tokens, token_weights=weights,
            adjacency=adjacency([f.reads for f in facts.functions],
                                [f.writes for f in facts.functions]),
            payable=tuple(f.payable for f in facts.functions), kinds=tuple(kinds),
            int_slots=tuple(int_slots), address_slots=tuple(address_slots),
            constants=tuple(frozenset(f.constants) for f in facts.functions),
            constant_values=tuple(tuple(sorted(set(f.constants))) for f in facts.functions),
            constant_features=tuple(self.constant_features(sorted(set(f.constants)))
                                    for f in facts.functions),
            candidates=candidates, senders=facts.senders,
        )

    def _param_tokens(self, function: FunctionFacts, param: int) -> tuple[int, ...]:
        if param >= len(function.param_tokens):
            return ()
        return tuple(self._vocabulary.get(token, 0)
                     for token in function.param_tokens[param][:self.layout.max_param_tokens])

    def _slots(self, kinds: Sequence[tuple[str, int | None]], wanted: tuple[str, str],
               names: Sequence[tuple[int, ...]], widths: Sequence[tuple[int, bool]]
               ) -> tuple[Slot, ...]:
        scalar, array = wanted
        out: list[Slot] = []
        for param, (kind, length) in enumerate(kinds):
            bits, signed = widths[param]
            if kind == scalar:
                out.append(Slot(param, None, False, bits, signed, names[param]))
            elif kind == array:
                count = self.layout.array_cap if length is None else \
                    min(length, self.layout.array_cap)
                out.extend(Slot(param, element, length is None, bits, signed, names[param])
                           for element in range(count))
        return tuple(out)

    def slot_columns(self, slot: Slot) -> F32:
        """[slot_width] :data:`SLOT_COLUMNS` of a slot."""
        columns = self.layout.slot_columns
        out = np.zeros(len(columns), dtype=np.float32)
        if slot.bits:
            bucket = next((b for b in _WIDTH_BUCKETS if slot.bits <= b), 256)
            name = f"bits_{bucket}"
            if name in columns:
                out[columns.index(name)] = 1.0
        for name, on in (("signed", slot.signed), ("element", slot.element is not None),
                         ("dynamic", slot.dynamic)):
            if on and name in columns:
                out[columns.index(name)] = 1.0
        return out

    def constant_features(self, values: Sequence[int]) -> F32:
        """[K, constant_width] :data:`CONSTANT_COLUMNS` of a function's sorted constants."""
        columns = self.layout.constant_columns
        index = {name: position for position, name in enumerate(columns)}
        out = np.zeros((len(values), len(columns)), dtype=np.float32)
        last = max(len(values) - 1, 1)
        for row, value in enumerate(values):
            flags: dict[str, float] = {name: float(on)
                                       for name, on in _constant_flags(value).items()}
            flags["rank"] = row / last
            for name, on in flags.items():
                if name in index:
                    out[row, index[name]] = on
        return out

    def constant_fit(self, arrays: ContractArrays, function: int, slot: Slot
                     ) -> npt.NDArray[np.bool_]:
        """[K] which of the function's constants the slot can take."""
        return np.array([slot.fits(value) for value in arrays.constant_values[function]],
                        dtype=np.bool_)

    def candidates(self, arrays: ContractArrays, sender: int) -> F32:
        """[N, candidate_width] the address candidates, ``sender`` flagged."""
        out = arrays.candidates.copy()
        if 0 <= sender < min(arrays.senders, out.shape[0]):
            out[sender, -1] = 1.0
        return out

    def ended(self, ended: str | None) -> F32:
        """One-hot of how a transaction ended (zeros: none or unknown)."""
        out = np.zeros(len(self.layout.endings), dtype=np.float32)
        if ended in self.layout.endings:
            out[self.layout.endings.index(ended)] = 1.0
        return out

    def int_input(self, previous: int, slot: Slot) -> F32:
        """GRU_int's input at a slot (the network appends the parameter's name embedding).

        One-hot of the previous slot's class (zeros for none or masked) and of the
        parameter position, then the slot's type columns.
        """
        layout = self.layout
        out = np.zeros(layout.int_input_width, dtype=np.float32)
        if previous >= 0:
            out[previous] = 1.0
        out[layout.int_classes + min(slot.param, layout.param_cap - 1)] = 1.0
        out[layout.int_classes + layout.param_cap:] = self.slot_columns(slot)
        return out

    def address_input(self, candidates: F32, previous: int, slot: Slot) -> F32:
        """GRU_addr's input at a slot (the network appends the parameter's name embedding).

        The previous slot's candidate (zeros for none or masked), one-hot of the parameter
        position, then the slot's type columns.
        """
        layout = self.layout
        out = np.zeros(layout.address_input_width, dtype=np.float32)
        if 0 <= previous < candidates.shape[0]:
            out[:layout.candidate_width] = candidates[previous]
        out[layout.candidate_width + min(slot.param, layout.param_cap - 1)] = 1.0
        out[layout.candidate_width + layout.param_cap:] = self.slot_columns(slot)
        return out

    def name_weights(self, slot: Slot) -> tuple[npt.NDArray[np.int64], F32]:
        """([P], [P]) a slot's name tokens, padded, and their averaging weights."""
        width = self.layout.max_param_tokens
        tokens = np.zeros(width, dtype=np.int64)
        weights = np.zeros(width, dtype=np.float32)
        mine = slot.tokens[:width]
        for position, token in enumerate(mine):
            tokens[position] = token
            weights[position] = 1.0 / len(mine)
        return tokens, weights

    # ---------------------------------------------------------------- labels

    def int_class(self, value: int, constants: frozenset[int]) -> int:
        """A value's class: ``constant``, a seed's index or ``other``.

        ``constant`` when the value is among the function's constants (also as a 256-bit
        word), even when it is a seed too: "this argument takes one of the function's
        constants" carries over to other contracts, a seed's value only where it recurs,
        and the constant pointer learns only from these labels.
        """
        if value in constants or (value % (1 << 256)) in constants:
            return self.layout.constant_class
        seed = self._seeds.get(value)
        if seed is not None:
            return seed
        return self.layout.other_class

    def constant_index(self, arrays: ContractArrays, function: int, value: int) -> int:
        """The index of ``value`` (or its 256-bit word) among the function's constants, or -1."""
        values = arrays.constant_values[function]
        for candidate in (value, value % (1 << 256)):
            position = bisect.bisect_left(values, candidate)
            if position < len(values) and values[position] == candidate:
                return position
        return -1

    def labels(self, arrays: ContractArrays, step: Mapping[str, Any]
               ) -> tuple[int, int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """(function, sender, actual sender, amount, int slots, address slots, constants).

        The last is, per integer slot, the constant pointer's label (-1 unless ``constant``).
        """
        choice = step["choice"]
        function = int(choice["function"])
        actual = int(choice.get("sender", 0))
        solved = step.get("solved") or {}
        solved_args = list(solved.get("args") or [])
        sender = actual if solved.get("sender") and actual < self.layout.sender_cap else -1
        amount = -1
        if solved.get("value") and arrays.payable[function]:
            amount = self._amounts.get(int(choice.get("value", 0)), -1)

        def solved_arg(param: int) -> bool:
            return param < len(solved_args) and bool(solved_args[param])

        int_args = list(step.get("int_args") or [])
        ints: list[int] = []
        pointers: list[int] = []
        constants = arrays.constants[function]
        for slot in arrays.int_slots[function]:
            raw = int_args[slot.param] if slot.param < len(int_args) else None
            label = -1
            value: int | None = None
            if solved_arg(slot.param) and raw is not None:
                if slot.element is None:
                    values = _flat_ints(raw)
                    value = values[0] if values else None
                elif isinstance(raw, list):
                    if slot.element < len(raw):
                        element = _flat_ints(raw[slot.element])
                        value = element[0] if element else None
                    elif slot.element == len(raw) and slot.dynamic:
                        label = self.layout.other_class  # where a dynamic array ends
            if value is not None:
                label = self.int_class(value, constants)
            ints.append(label)
            pointers.append(self.constant_index(arrays, function, value)
                            if label == self.layout.constant_class and value is not None
                            else -1)
        address_args = list(step.get("address_args") or [])
        candidates = arrays.candidates.shape[0]
        addresses: list[int] = []
        for slot in arrays.address_slots[function]:
            raw = address_args[slot.param] if slot.param < len(address_args) else None
            index: Any = None
            if solved_arg(slot.param) and raw is not None:
                if slot.element is None:
                    index = raw
                elif isinstance(raw, list) and slot.element < len(raw):
                    index = raw[slot.element]
            label = index if isinstance(index, int) and 0 <= index < candidates else -1
            addresses.append(label)
        return (function, sender, actual, amount, tuple(ints), tuple(addresses),
                tuple(pointers))

    # ---------------------------------------------------------------- datasets

    def encode_dataset(self, header: Mapping[str, Any], steps: Sequence[Mapping[str, Any]],
                       name: str = "") -> EncodedContract:
        """A dataset file's contract and its chains (module docstring).

        Raises ValueError when the file's feature names are not this secant's.
        """
        names = header.get("feature_names")
        if names is not None and tuple(names) != self.layout.feature_names:
            raise ValueError(f"{name or 'the dataset'} was written with other feature names "
                             "than this secant computes: write it again with secant expert")
        arrays = self.contract(facts_from_header(header))
        contract = EncodedContract(name or str(header.get("contract", "")), arrays)
        if arrays.functions == 0:
            return contract
        by_case: dict[str, int] = {}
        histories: set[str] = set()
        for index, step in enumerate(steps):
            case = step.get("case") or []
            by_case.setdefault(_key(case), index)
            histories.add(_key(case[:-1]))
        seen: set[int] = set()
        for index, step in enumerate(steps):
            if _key(step.get("case") or []) in histories and by_case.get(
                    _key(step.get("case") or [])) == index:
                continue  # not a leaf: a longer chain goes through it
            chain = [index]
            while True:
                case = steps[chain[0]].get("case") or []
                before = by_case.get(_key(case[:-1])) if len(case) > 1 else None
                if before is None or before in chain:
                    break
                chain.insert(0, before)
            encoded: list[EncodedStep] = []
            for position, member in enumerate(chain):
                record = steps[member]
                function, sender, actual, amount, ints, addresses, pointers = \
                    self.labels(arrays, record)
                previous = steps[chain[position - 1]] if position else None
                encoded.append(EncodedStep(
                    features=self.features(record["features"]),
                    prev_function=-1 if previous is None else int(previous["choice"]["function"]),
                    prev_ended=None if previous is None else previous.get("ended"),
                    function=function, sender=sender, actual_sender=actual, amount=amount,
                    ints=ints, addresses=addresses, constants=pointers,
                    active=member not in seen,
                ))
                seen.add(member)
            contract.chains.append(encoded)
        return contract


def _int_width(type_text: str) -> tuple[int, bool]:
    """(bits, signed) of an integer type or an array of them; (0, False) otherwise."""
    match = _INT_WIDTH.match(type_text)
    if match is None:
        return 0, False
    return int(match.group(2) or 256), match.group(1) == ""


def _constant_flags(value: int) -> dict[str, bool]:
    """The :data:`CONSTANT_COLUMNS` of one constant but its rank."""
    bits = value.bit_length()
    bucket = next((b for b in _CONSTANT_BUCKETS if bits <= b), 256)
    ten = value >= 10 and _is_power_of_ten(value)
    return {
        f"const_bits_{bucket}": True,
        "timestamp": 10 ** 9 <= value < 1 << 32,
        "power_of_ten": ten,
        "power_of_two": value >= 4 and value & (value - 1) == 0,
        "round": value >= 1000 and value % 1000 == 0 and not ten,
        "wei_unit": value >= 10 ** 15 and value % 10 ** 15 == 0,
    }


def _is_power_of_ten(value: int) -> bool:
    while value % 10 == 0:
        value //= 10
    return value == 1


def _key(case: Sequence[Any]) -> str:
    return json.dumps(case, sort_keys=True, separators=(",", ":"))
