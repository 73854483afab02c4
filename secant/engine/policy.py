"""The policy seam: who proposes the next test case, and learns from what it did.

A :class:`Policy` is bound to one :class:`~secant.engine.fuzzer.Fuzzer` and then asked,
again and again, for a :class:`Proposal` (a case and what produced it); the fuzzer runs
it, decides its novelty and hands both back through ``observe``. Harvey's choice
(schedule, mutation, prediction, sequences, adaptive seeds, probes) is one policy
(``secant.engine.harvey.policy.HarveyPolicy``); a learned policy or a symbolic expert is
another, or a stage mixed into one.

A policy reads the fuzzer's shared state (``corpus``, ``coverage``, ``stats``, ``rng``,
``config``, ``exhausted()``) and draws every random choice from ``fuzzer.rng``, so a
campaign stays a function of its seed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from secant.types import RunResult, TxSeq

if TYPE_CHECKING:
    from secant.engine.corpus import Seed
    from secant.engine.fuzzer import Fuzzer


@dataclass(slots=True)
class Proposal:
    """A case to run and what produced it.

    ``origin`` names the producer (``init``, ``mutation``, ``havoc``, ``prediction``,
    ``sequence``, ``adaptive``, ``aggressive``, ``import``, or a policy's own word); a
    seed found by it keeps that name. A ``probe`` only asks whether its last step takes a
    new path: it joins neither the coverage, the corpus nor the findings. ``adaptive``
    marks a case proposed while fuzzing an sFuzz adaptive seed (sFuzz counts those).
    """

    case: TxSeq
    origin: str
    probe: bool = False
    adaptive: bool = False


class Novelty(NamedTuple):
    """What a run added to the campaign's coverage (a probe adds nothing)."""

    new_path: bool
    new_blocks: int
    new_edges: int
    seed: Seed | None = None

    @property
    def covered_more(self) -> bool:
        """Whether the run covered anything new: a path, a block or an edge."""
        return self.new_path or bool(self.new_blocks) or bool(self.new_edges)


class Policy(ABC):
    """Proposes cases (see the module docstring)."""

    name: str = ""

    def bind(self, fuzzer: Fuzzer) -> None:
        """Attach to the fuzzer whose loop will ask this policy (called once, first)."""
        self.fuzzer = fuzzer

    @abstractmethod
    def propose(self) -> Proposal | None:
        """The next case to run, or None when there is none (the loop then ends)."""

    def observe(self, proposal: Proposal, result: RunResult,  # noqa: B027 (optional hook)
                novelty: Novelty) -> None:
        """What the proposed case did (called after every execution of a proposal)."""

    def summary(self) -> dict[str, Any]:
        """The policy's counters for ``summary.json``."""
        return {}

    def progress_rows(self) -> list[tuple[str, str]]:
        """Rows for the live display: (label, text)."""
        return []
