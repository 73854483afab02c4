"""ILF's learned policy at fuzz time: the trained networks' forward pass in numpy.

:func:`secant.learn.train.train_model` trains the networks in PyTorch and exports their
weights to one ``.npz`` file: the arrays by their torch names and a JSON ``__meta__`` entry
(the layout digest and everything that fixes it, the encoder version, the network sizes, a
training summary). :class:`LearnedModel` loads that file and runs the same networks on
numpy, float32, one thread; :class:`Episode` holds one episode's state (the GRU over the
transactions so far) and :meth:`Episode.decide` draws every head from its softmax with the
campaign's ``random.Random`` (never numpy's global generator).

The inputs come from :class:`secant.learn.encode.Encoder`, the code that built the training
arrays: a model whose layout digest differs from what that code computes for the model's
vocabulary and seeds was trained for other inputs, and loading it fails with a
:class:`ModelError` naming the fix.

How a decision is drawn (each from its softmax, impossible choices masked):

* the function, over the contract's functions;
* the sender, over the first ``min(senders, SENDER_CAP)`` sender positions;
* the amount, over the seed amounts when the function is payable (0 otherwise, no draw);
* per integer slot (a parameter, or an element of an array of up to ``ARRAY_CAP``) a class:
  a seed integer, ``constant`` or ``other``; for ``constant``, which of the function's PUSH
  constants, from the constant pointer (a dot product of the slot's GRU state with each
  constant's features, constants that do not fit the slot's type masked; none that fits:
  the value is left to the policy); a dynamic array's elements stop at its first
  ``other`` (the slots after it are neither drawn nor fed back, as in training), a fixed
  array keeps the elements before its first ``other`` or ``constant`` without a value;
* per address slot, a candidate of ``view.addresses``.
"""

from __future__ import annotations

import json
import random
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from secant.errors import SecantError
from secant.learn.encode import (
    ENCODER_VERSION,
    ContractArrays,
    ContractFacts,
    Encoder,
    Layout,
    Slot,
    facts_from_view,
)
from secant.learn.features import FEATURE_NAMES

if TYPE_CHECKING:
    from secant.engine.mutators import FunctionSpec
    from secant.learn.view import ContractView

__all__ = [
    "DEFAULT_MODEL",
    "MODEL_FORMAT",
    "ArgumentChoice",
    "Decision",
    "Episode",
    "LearnedModel",
    "ModelError",
    "NetworkDims",
    "weight_shapes",
]

F32 = npt.NDArray[np.float32]

DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "ilf.npz"
"""The model shipped inside the package (``LearnedModel.load(None)``)."""

MODEL_FORMAT = 1
"""The weights file's format (its meta's ``format``)."""

_FIX = "retrain it with `secant learn train` or reinstall secant"


class ModelError(SecantError):
    """A learned model that cannot be used: missing, corrupt, or for another layout."""


@dataclass(frozen=True)
class ArgumentChoice:
    """What the networks chose for one top-level parameter.

    ``kind``: ``"seed"`` (one of the model's seed integers), ``"constant"`` (one of the
    function's constants), ``"address"`` (a candidate) or ``"other"`` (the policy fills it,
    at random by type). ``value``: the integer or address, None for ``other`` and for
    arrays. ``values``: for arrays of integers (kind ``seed``) or addresses (kind
    ``address``), one entry per element the networks gave a value (module docstring); an
    array with none is ``other``.
    """

    kind: str
    value: int | None
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class Decision:
    """One transaction as the networks chose it."""

    function: int
    """Index into ``view.functions``."""
    sender: int
    """Index into ``view.senders``."""
    amount: int
    """Wei (0 when the function is not payable)."""
    arguments: tuple[ArgumentChoice, ...]
    """One per top-level parameter of the function."""


_OTHER = ArgumentChoice("other", None)


@dataclass(frozen=True)
class NetworkDims:
    """The sizes of the networks (the layout gives the rest); ``train`` builds them so."""

    hidden: int = 100
    embed: int = 32
    compress_layers: int = 2
    func_layers: int = 5
    sender_layers: int = 3
    amount_layers: int = 3
    int_layers: int = 2

    def to_json(self) -> dict[str, int]:
        """As JSON."""
        return {"hidden": self.hidden, "embed": self.embed,
                "compress_layers": self.compress_layers, "func_layers": self.func_layers,
                "sender_layers": self.sender_layers, "amount_layers": self.amount_layers,
                "int_layers": self.int_layers}


def weight_shapes(layout: Layout, dims: NetworkDims) -> dict[str, tuple[int, ...]]:
    """The name and shape of every array of a weights file (torch's names).

    ``secant.learn.train.build_network`` builds the networks these are the parameters of;
    a test checks that the two agree.
    """
    h = dims.hidden
    out: dict[str, tuple[int, ...]] = {"embed.weight": (len(layout.vocabulary), dims.embed)}

    def linear(name: str, inputs: int, outputs: int) -> None:
        out[f"{name}.weight"] = (outputs, inputs)
        out[f"{name}.bias"] = (outputs,)

    def mlp(name: str, sizes: Sequence[int]) -> None:
        # torch's Sequential numbers a ReLU after every Linear but the last (and after the
        # last for the compressor): Linear k is module 2k.
        for k in range(len(sizes) - 1):
            linear(f"{name}.{2 * k}", sizes[k], sizes[k + 1])

    def gru(name: str, inputs: int) -> None:
        out[f"{name}.weight_ih_l0"] = (3 * h, inputs)
        out[f"{name}.weight_hh_l0"] = (3 * h, h)
        out[f"{name}.bias_ih_l0"] = (3 * h,)
        out[f"{name}.bias_hh_l0"] = (3 * h,)

    row = layout.numeric_width + layout.static_width + dims.embed
    mlp("compress", [row] + [h] * dims.compress_layers)
    linear("gcn1", 2 * h, h)
    linear("gcn2", 2 * h, h)
    gru("gru_fuzz", h + len(layout.endings))
    mlp("func", [2 * h] + [h] * (dims.func_layers - 1) + [1])
    mlp("sender", [2 * h] + [h] * (dims.sender_layers - 1) + [layout.sender_cap])
    mlp("amount", [2 * h] + [h] * (dims.amount_layers - 1) + [len(layout.seed_amounts)])
    linear("int_init", 2 * h, h)
    gru("gru_int", layout.int_input_width + dims.embed)
    mlp("int_head", [h] + [h] * (dims.int_layers - 1) + [layout.int_classes])
    linear("const_query", h, h)
    linear("const_key", layout.constant_width, h)
    linear("addr_init", 2 * h, h)
    gru("gru_addr", layout.address_input_width + dims.embed)
    linear("addr_query", h, h)
    linear("addr_key", layout.candidate_width, h)
    return out




def _sigmoid(x: F32) -> F32:
    # tanh form: no overflow warnings for large |x|, and float32 throughout.
    out: F32 = np.float32(0.5) * (np.float32(1.0) + np.tanh(np.float32(0.5) * x))
    return out


def _relu(x: F32) -> F32:
    return np.maximum(x, np.float32(0.0))


def _softmax(logits: F32) -> F32:
    shifted = logits - logits.max()
    weights = np.exp(shifted)
    return weights / weights.sum()  # type: ignore[no-any-return]


def _draw(probabilities: F32, rng: random.Random) -> int:
    """An index drawn from ``probabilities`` with one ``rng.random()``; zero entries never."""
    cumulative = np.cumsum(probabilities, dtype=np.float64)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    if index >= len(probabilities) or probabilities[index] <= 0:
        index = int(np.flatnonzero(probabilities > 0)[-1])
    return index


class _Linear:
    """``x @ W.T + b`` with torch's weight layout."""

    def __init__(self, weights: Mapping[str, F32], name: str) -> None:
        self.w = np.ascontiguousarray(weights[f"{name}.weight"].T)
        self.b = weights[f"{name}.bias"]

    def __call__(self, x: F32) -> F32:
        return x @ self.w + self.b  # type: ignore[no-any-return]


class _Mlp:
    """torch's ``Sequential`` of Linear and ReLU.

    ReLU between layers, and after the last when the training side put one there.
    """

    def __init__(self, weights: Mapping[str, F32], name: str, last_relu: bool = False) -> None:
        indices = sorted(int(key.split(".")[1]) for key in weights
                         if key.startswith(name + ".") and key.endswith(".weight"))
        if not indices:
            raise KeyError(name)
        self.layers = [_Linear(weights, f"{name}.{index}") for index in indices]
        self.last_relu = last_relu

    def __call__(self, x: F32) -> F32:
        last = len(self.layers) - 1
        for index, layer in enumerate(self.layers):
            x = layer(x)
            if index < last or self.last_relu:
                x = _relu(x)
        return x


class _Gru:
    """One GRU cell with torch's gates (r, z, n) and weight layout."""

    def __init__(self, weights: Mapping[str, F32], name: str) -> None:
        self.w_ih = np.ascontiguousarray(weights[f"{name}.weight_ih_l0"].T)
        self.w_hh = np.ascontiguousarray(weights[f"{name}.weight_hh_l0"].T)
        self.b_ih = weights[f"{name}.bias_ih_l0"]
        self.b_hh = weights[f"{name}.bias_hh_l0"]
        self.size = self.w_hh.shape[0]

    def __call__(self, x: F32, h: F32) -> F32:
        size = self.size
        gi = x @ self.w_ih + self.b_ih
        gh = h @ self.w_hh + self.b_hh
        r = _sigmoid(gi[:size] + gh[:size])
        z = _sigmoid(gi[size:2 * size] + gh[size:2 * size])
        n = np.tanh(gi[2 * size:] + r * gh[2 * size:])
        return (np.float32(1.0) - z) * n + z * h  # type: ignore[no-any-return]


class LearnedModel:
    """The trained networks, loaded from a weights file (module docstring)."""

    layout: str
    """Hex digest of the feature layout the weights were trained for."""

    def __init__(self, weights: Mapping[str, F32], meta: Mapping[str, Any],
                 source: str = "the learned model") -> None:
        """The networks of ``weights`` (torch names) for ``meta``.

        Checked as :meth:`load` checks a file.
        """
        self.source = source
        self.meta = dict(meta)
        spec = _layout_of(meta, source)
        self.layout = spec.digest
        self.encoder = Encoder(spec)
        try:
            self.dims = NetworkDims(**meta["dims"])
            expected = weight_shapes(spec, self.dims)
        except (KeyError, TypeError, ValueError) as error:
            raise ModelError(f"the learned model {source} is corrupt (meta dims: {error}): "
                             f"{_FIX}") from None
        for name, shape in expected.items():
            found = weights.get(name)
            if found is None or tuple(found.shape) != shape:
                what = "missing" if found is None else f"of shape {tuple(found.shape)}"
                raise ModelError(f"the learned model {source} is corrupt (weights {name} "
                                 f"{what}, not {shape}): {_FIX}")
        self._build(weights)

    def _build(self, weights: Mapping[str, F32]) -> None:
        layout = self.encoder.layout
        self.embed = np.asarray(weights["embed.weight"], dtype=np.float32)
        self.compress = _Mlp(weights, "compress", last_relu=True)
        first = self.compress.layers[0]
        numeric = layout.numeric_width
        hidden = self.dims.hidden
        # The first layer splits in the history part (per decision) and the static part
        # (once per episode).
        self._compress_numeric = np.ascontiguousarray(first.w[:numeric])
        self._compress_static = np.ascontiguousarray(first.w[numeric:])
        self.gcn1 = _Linear(weights, "gcn1")
        self.gcn2 = _Linear(weights, "gcn2")
        self.gru_fuzz = _Gru(weights, "gru_fuzz")
        self.func = _Mlp(weights, "func")
        # FCN_func's first layer splits in the state part (once per decision) and the
        # function part.
        head = self.func.layers[0]
        self._func_state = np.ascontiguousarray(head.w[:hidden])
        self._func_function = np.ascontiguousarray(head.w[hidden:])
        self.sender = _Mlp(weights, "sender")
        self.amount = _Mlp(weights, "amount")
        self.int_init = _Linear(weights, "int_init")
        self.gru_int = _Gru(weights, "gru_int")
        self.int_head = _Mlp(weights, "int_head")
        self.const_query = _Linear(weights, "const_query")
        self.const_key = _Linear(weights, "const_key")
        self.addr_init = _Linear(weights, "addr_init")
        self.gru_addr = _Gru(weights, "gru_addr")
        self.addr_query = _Linear(weights, "addr_query")
        self.addr_key = _Linear(weights, "addr_key")
        self.hidden = hidden

    @classmethod
    def load(cls, path: Path | None = None) -> LearnedModel:
        """The model in ``path`` (None: the one shipped in the package).

        A missing or corrupt file, or one trained for another feature layout than this
        secant computes, raises :class:`ModelError` (one line naming the fix).
        """
        where = DEFAULT_MODEL if path is None else Path(path)
        if not where.is_file():
            if path is None:
                raise ModelError("this secant ships no learned model (secant/learn/models/"
                                 "ilf.npz is missing): train one with `secant learn train` "
                                 "and pass its path, or reinstall secant")
            raise ModelError(f"the learned model {where} does not exist: train one with "
                             "`secant learn train` or reinstall secant")
        try:
            with np.load(where, allow_pickle=False) as data:
                arrays = {name: np.asarray(data[name]) for name in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
            raise ModelError(f"the learned model {where} is corrupt ({type(error).__name__}): "
                             f"{_FIX}") from None
        raw = arrays.pop("__meta__", None)
        try:
            meta = json.loads(str(raw[()])) if raw is not None else None
        except (ValueError, TypeError, IndexError):
            meta = None
        if not isinstance(meta, dict):
            raise ModelError(f"the learned model {where} is corrupt (no meta entry): {_FIX}")
        weights = {name: array.astype(np.float32, copy=False) for name, array in arrays.items()}
        return cls(weights, meta, str(where))

    def start(self, view: ContractView, specs: Sequence[FunctionSpec]) -> Episode:
        """An episode for a campaign's contract: what does not change is computed once."""
        return self.start_facts(facts_from_view(view, specs), tuple(view.senders),
                                tuple(view.addresses))

    def start_facts(self, facts: ContractFacts, senders: Sequence[int] = (),
                    addresses: Sequence[int] = ()) -> Episode:
        """An episode from plain facts.

        :func:`secant.learn.encode.facts_from_header` gives them for a dataset;
        ``addresses`` give the address candidates' values (their indices when empty).
        """
        return Episode(self, self.encoder.contract(facts), tuple(addresses))


def _layout_of(meta: Mapping[str, Any], source: str) -> Layout:
    """The layout a model was trained for, checked against what this secant computes."""
    if meta.get("format") != MODEL_FORMAT:
        raise ModelError(f"the learned model {source} has format {meta.get('format')!r}; this "
                         f"secant reads format {MODEL_FORMAT}: {_FIX}")
    try:
        spec = Layout.from_json(meta["layout_data"])
        recorded = str(meta["layout"])
    except (KeyError, ValueError, TypeError) as error:
        raise ModelError(f"the learned model {source} is corrupt (meta: {error}): "
                         f"{_FIX}") from None
    if spec.version != ENCODER_VERSION:
        # Checked first: an older layout lacks keys of today's, so its digest reads as corrupt.
        raise ModelError(f"the learned model {source} was trained for feature layout "
                         f"{recorded[:12]} (encoder version {spec.version}, this secant's is "
                         f"{ENCODER_VERSION}): {_FIX}")
    if spec.digest != recorded:
        raise ModelError(f"the learned model {source} is corrupt (its layout digest does not "
                         f"match its layout): {_FIX}")
    current = spec.current()
    if current.digest != recorded:
        why = ""
        if spec.feature_names != FEATURE_NAMES:
            why = " (other feature names)"
        raise ModelError(f"the learned model {source} was trained for feature layout "
                         f"{recorded[:12]}; this secant computes {current.digest[:12]}{why}: "
                         f"{_FIX}")
    return spec


class Episode:
    """One campaign's use of the model: the contract's static inputs and the GRU's state."""

    def __init__(self, model: LearnedModel, arrays: ContractArrays,
                 addresses: Sequence[int] = ()) -> None:
        self.model = model
        self.arrays = arrays
        encoder = model.encoder
        layout = encoder.layout
        if not arrays.functions:
            raise ValueError("a contract without functions: nothing to decide")
        self.addresses = tuple(addresses) or tuple(range(arrays.candidates.shape[0]))
        if len(self.addresses) != arrays.candidates.shape[0]:
            raise ValueError(f"{len(self.addresses)} addresses for "
                             f"{arrays.candidates.shape[0]} candidate roles")
        name = (model.embed[arrays.tokens] * arrays.token_weights[..., None]).sum(axis=1)
        static = np.concatenate([arrays.static, name.astype(np.float32)], axis=1)
        self._static = (static @ model._compress_static
                        + model.compress.layers[0].b).astype(np.float32)
        self._senders = max(min(arrays.senders, layout.sender_cap), 1)
        # Per function and slot, the parameter's name embedding (GRU inputs' last columns);
        # per function, the constant pointer's keys: both fixed for the episode.
        self._int_names = tuple(self._names(slots) for slots in arrays.int_slots)
        self._address_names = tuple(self._names(slots) for slots in arrays.address_slots)
        self._constant_keys: dict[int, F32] = {}
        self._fits: dict[tuple[int, int], npt.NDArray[np.bool_]] = {}
        self._endings = {ending: encoder.ended(ending) for ending in layout.endings}
        self._no_ending = encoder.ended(None)
        self._zeros = np.zeros(model.hidden, dtype=np.float32)
        self.reset()

    def _names(self, slots: Sequence[Slot]) -> tuple[F32, ...]:
        embed = self.model.embed
        out = []
        for slot in slots:
            tokens, weights = self.model.encoder.name_weights(slot)
            out.append((embed[tokens] * weights[:, None]).sum(axis=0).astype(np.float32))
        return tuple(out)

    def _int_input(self, previous: int, function: int, j: int) -> F32:
        slot = self.arrays.int_slots[function][j]
        return np.concatenate([self.model.encoder.int_input(previous, slot),
                               self._int_names[function][j]])

    def _address_input(self, candidates: F32, previous: int, function: int, j: int) -> F32:
        slot = self.arrays.address_slots[function][j]
        return np.concatenate([self.model.encoder.address_input(candidates, previous, slot),
                               self._address_names[function][j]])

    def _constant_probabilities(self, function: int, j: int, h: F32) -> F32 | None:
        """The constant pointer's distribution at slot ``j`` (None: no constant fits)."""
        arrays = self.arrays
        fit = self._fits.get((function, j))
        if fit is None:  # fixed for the episode: worked out once per slot
            fit = self.model.encoder.constant_fit(arrays, function,
                                                  arrays.int_slots[function][j])
            self._fits[(function, j)] = fit
        if not fit.any():
            return None
        keys = self._constant_keys.get(function)
        if keys is None:
            keys = _relu(self.model.const_key(arrays.constant_features[function]))
            self._constant_keys[function] = keys
        logits = keys @ self.model.const_query(h)
        logits[~fit] = -np.inf
        return _softmax(logits)

    def reset(self) -> None:
        """A new episode from the deployed state."""
        self._state = self._zeros
        self._previous: tuple[int, str] | None = None
        self._current: F32 | None = None
        self._embeddings: F32 | None = None

    # ---------------------------------------------------------------- the forward pass

    def _embed(self, features: Sequence[Sequence[float]]) -> F32:
        """The functions' embeddings ``e`` [F, H] for the history's feature rows."""
        model = self.model
        numeric = model.encoder.features(features)
        if numeric.shape[0] != self.arrays.functions:
            raise ValueError(f"{numeric.shape[0]} feature rows for "
                             f"{self.arrays.functions} functions")
        x = _relu(numeric @ model._compress_numeric + self._static)
        for layer in model.compress.layers[1:]:
            x = _relu(layer(x))
        adjacency = self.arrays.adjacency
        for layer in (model.gcn1, model.gcn2):
            x = _relu(layer(np.concatenate([adjacency @ x, x], axis=1)))
        return x

    def _step(self, features: Sequence[Sequence[float]]) -> tuple[F32, F32]:
        """(e, h_i): the embeddings and GRU_fuzz's state for this history."""
        e = self._embed(features)
        if self._previous is None:
            previous, ended = self._zeros, self._no_ending
        else:
            previous = e[self._previous[0]]
            ended = self._endings.get(self._previous[1], self._no_ending)
        state = self.model.gru_fuzz(np.concatenate([previous, ended]), self._state)
        self._current, self._embeddings = state, e
        return e, state

    def _function_probabilities(self, e: F32, state: F32) -> F32:
        model = self.model
        first = model.func.layers[0]
        x = _relu(e @ model._func_function + (state @ model._func_state + first.b))
        for index, layer in enumerate(model.func.layers[1:], start=1):
            x = layer(x)
            if index < len(model.func.layers) - 1:
                x = _relu(x)
        return _softmax(x[:, 0])

    def _sender_probabilities(self, chosen: F32) -> F32:
        logits = self.model.sender(chosen)
        logits[self._senders:] = -np.inf
        return _softmax(logits)

    def _amount_probabilities(self, chosen: F32) -> F32:
        return _softmax(self.model.amount(chosen))

    def _keys(self, sender: int) -> F32:
        candidates = self.model.encoder.candidates(self.arrays, sender)
        return _relu(self.model.addr_key(candidates))

    # ---------------------------------------------------------------- the API

    def decide(self, features: Sequence[Sequence[float]], rng: random.Random) -> Decision:
        """The next transaction for the history whose feature rows are ``features``.

        ``features`` are ``features.feature_matrix`` rows; every draw comes from ``rng``.
        """
        model = self.model
        encoder = model.encoder
        layout = encoder.layout
        e, state = self._step(features)
        function = _draw(self._function_probabilities(e, state), rng)
        chosen = np.concatenate([state, e[function]])
        sender = _draw(self._sender_probabilities(chosen), rng)
        amount = 0
        if self.arrays.payable[function]:
            amount = layout.seed_amounts[_draw(self._amount_probabilities(chosen), rng)]
        kinds = self.arrays.kinds[function]
        values: list[list[int]] = [[] for _ in kinds]
        open_ = [True] * len(kinds)  # the parameter still takes values
        chosen_kind: list[str] = ["other"] * len(kinds)

        slots = self.arrays.int_slots[function]
        if slots:
            h = np.tanh(model.int_init(chosen))
            previous = -1
            constants = self.arrays.constant_values[function]
            for j, slot in enumerate(slots):
                h = model.gru_int(self._int_input(previous, function, j), h)
                if not open_[slot.param] and slot.dynamic:
                    previous = -1  # past a dynamic array's end: not drawn, nothing fed back
                    continue
                previous = _draw(_softmax(model.int_head(h)), rng)
                if not open_[slot.param]:
                    continue
                pointer = self._constant_probabilities(function, j, h) \
                    if previous == layout.constant_class else None
                if previous < layout.constant_class:
                    values[slot.param].append(layout.seed_ints[previous])
                    chosen_kind[slot.param] = "seed"
                elif pointer is not None:
                    values[slot.param].append(constants[_draw(pointer, rng)])
                    if chosen_kind[slot.param] == "other":
                        chosen_kind[slot.param] = "constant"
                else:
                    open_[slot.param] = False
        slots = self.arrays.address_slots[function]
        if slots:
            keys = self._keys(sender)
            candidates = encoder.candidates(self.arrays, sender)
            h = np.tanh(model.addr_init(chosen))
            previous = -1
            for j, slot in enumerate(slots):
                h = model.gru_addr(self._address_input(candidates, previous, function, j), h)
                previous = _draw(_softmax(keys @ model.addr_query(h)), rng)
                values[slot.param].append(self.addresses[previous])
                chosen_kind[slot.param] = "address"
        arguments: list[ArgumentChoice] = []
        for param, kind in enumerate(kinds):
            mine = values[param]
            if not mine:
                arguments.append(_OTHER)
            elif kind in ("int", "address"):
                arguments.append(ArgumentChoice(chosen_kind[param], mine[0]))
            else:
                arguments.append(ArgumentChoice("address" if kind == "addresses" else "seed",
                                                None, tuple(mine)))
        return Decision(function, sender, amount, tuple(arguments))

    def advance(self, decision: Decision, ended: str) -> None:
        """The chosen transaction ran and ended so: GRU_fuzz's state moves on.

        ``ended`` is ``"return"``, ``"revert"`` or ``"assert"``.

        Its input is built at the next :meth:`decide`, from the features of the history
        that then includes this transaction (ILF's ``α_{f_{i-1}}(F, t_i)``).
        """
        if self._current is None:
            # No decide for this step: the state moves on with a zero function embedding.
            ended_before = self._no_ending if self._previous is None else \
                self._endings.get(self._previous[1], self._no_ending)
            self._current = self.model.gru_fuzz(np.concatenate([self._zeros, ended_before]),
                                                self._state)
        self._state = self._current
        self._current = None
        self._previous = (decision.function, ended)

    def probabilities(self, features: Sequence[Sequence[float]], function: int, sender: int,
                      ints: Sequence[int] = (), addresses: Sequence[int] = ()
                      ) -> dict[str, F32]:
        """Every head's distribution at this step, given the choices (teacher forcing).

        As in training: ``function`` [F], ``sender`` [SENDER_CAP], ``amount`` [A],
        ``int`` [J, classes] (``ints``: the classes of the slots, -1 for none), ``constant``
        [J, K] (the pointer over the function's constants; a row of zeros where none fits)
        and ``address`` [J2, N] (``addresses``: the candidates). The state does not move.
        """
        model = self.model
        encoder = model.encoder
        e, state = self._step(features)
        out = {"function": self._function_probabilities(e, state)}
        chosen = np.concatenate([state, e[function]])
        out["sender"] = self._sender_probabilities(chosen)
        out["amount"] = self._amount_probabilities(chosen)
        rows = []
        pointers = []
        slots = self.arrays.int_slots[function]
        count = len(self.arrays.constant_values[function])
        if slots:
            h = np.tanh(model.int_init(chosen))
            for j in range(len(slots)):
                previous = ints[j - 1] if 0 < j <= len(ints) else -1
                h = model.gru_int(self._int_input(previous, function, j), h)
                rows.append(_softmax(model.int_head(h)))
                pointer = self._constant_probabilities(function, j, h)
                pointers.append(np.zeros(count, np.float32) if pointer is None else pointer)
        out["int"] = np.array(rows, dtype=np.float32).reshape(
            len(slots), model.encoder.layout.int_classes)
        out["constant"] = np.array(pointers, dtype=np.float32).reshape(len(slots), count)
        rows = []
        slots = self.arrays.address_slots[function]
        if slots:
            keys = self._keys(sender)
            candidates = encoder.candidates(self.arrays, sender)
            h = np.tanh(model.addr_init(chosen))
            for j in range(len(slots)):
                previous = addresses[j - 1] if 0 < j <= len(addresses) else -1
                h = model.gru_addr(self._address_input(candidates, previous, function, j), h)
                rows.append(_softmax(keys @ model.addr_query(h)))
        out["address"] = np.array(rows, dtype=np.float32).reshape(
            len(slots), len(self.addresses))
        return out
