"""The greybox loop's configuration and counters: what a campaign does, and what it did.

Apart from the loop (``secant.engine.fuzzer``) so that the policy seam
(``secant.engine.policy``), which reads both, does not import the loop that imports it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

DEFAULT_SYMBOLIC_SHARE = 0.1
"""The concolic stage's share in a campaign of the commands (the library's own default,
``FuzzConfig.symbolic_share``, is 0: off). On the maze bench (five mazes, ten minutes each)
it found 66 of 100 assertions at 0.1 and 64 at 0.25, against 62 without the stage; at 60 s,
39 against 37 (docs/maze-bench.md)."""

DEFAULT_MEMORY_BUDGET_MB = 256
"""``--memory-budget``: what a worker's capped stores may take, in MB (docs/engine.md,
"Bounded memory"). The code, the chain and z3 come on top."""
MIN_MEMORY_BUDGET_MB = 16
DEFAULT_PREFIX_CACHE_MB = 64.0
"""The prefix cache's share of the default budget."""


def memory_split(budget_mb: int) -> tuple[float, float]:
    """(prefix cache, cost vectors) in MB of a worker's ``--memory-budget``.

    The prefix cache takes a quarter, at most 64 MB (a few hundred prefixes, more than a
    schedule returns to); the corpus's cost vectors take the rest.
    """
    prefix = min(DEFAULT_PREFIX_CACHE_MB, budget_mb / 4)
    return prefix, budget_mb - prefix


@dataclass
class FuzzConfig:
    """What a campaign does and for how long (None: no limit of that kind).

    The loop reads the budget, ``seed``, ``sstore_cost`` and ``stop_on_finding``; the
    other fields configure Harvey's policy (``secant.engine.harvey.policy``).
    """

    seed: int = 0
    max_execs: int | None = 10_000
    max_time: float | None = None
    max_transactions: int | None = None
    """The most transactions the cases may make in all (Echidna's and Medusa's
    ``testLimit``, which count calls, not sequences)."""
    schedule: str = "aflfast"
    predict: bool = True
    predict_iterations: int = 8
    havoc_probability: float = 0.1
    sstore_cost: bool = True
    stop_on_finding: bool = False
    input_to_state_probability: float = 0.15
    sequences: str = "demand"  # "demand" (Harvey A), "eager" (Harvey D) or "off"
    aggressive_probability: float = 0.125
    max_sequence_length: int = 16
    adaptive: bool = True
    adaptive_share: float | None = None  # None: sFuzz's, by the number of adaptive seeds
    caller_slots: bool = True  # data flow names balances[msg.sender] per sender (ablation)
    # The most seconds and blocks one transaction may move the chain on; None: the
    # campaign decides (secant.campaign.worker.block_delays).
    max_time_delay: int | None = None
    max_block_delay: int | None = None
    # The concolic stage's share of the executions (secant.engine.harvey.concolic); 0: off.
    symbolic_share: float = 0.0
    # The most memory the corpus's cost vectors may take, in MB (None: no bound): past it,
    # the least recently fuzzed seeds' vectors are dropped and computed again on demand
    # (secant.engine.corpus.CostMemory).
    cost_vectors_mb: float | None = DEFAULT_MEMORY_BUDGET_MB - DEFAULT_PREFIX_CACHE_MB


@dataclass
class FuzzStats:
    """Counters of the loop (a policy keeps its own)."""

    execs: int = 0
    started: float = field(default_factory=time.perf_counter)
    last_new_path_exec: int = 0
    transactions: int = 0
    steps_run: int = 0
    """Steps the target actually ran, not restored from a prefix cache: the campaign's
    work in a unit that does not depend on the machine (what the concolic stage's share
    is a share of)."""
    probes: int = 0

    @property
    def elapsed(self) -> float:
        """Seconds since the campaign started."""
        return time.perf_counter() - self.started
