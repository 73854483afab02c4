"""Python's garbage collector as a fuzzing loop wants it (a campaign's and a worker process's)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FUZZING_GC_THRESHOLDS = (50_000, 20, 20)
"""Python's collector thresholds while a campaign fuzzes (the default is 700, 10, 10)."""


@contextmanager
def fuzzing_collector() -> Iterator[None]:
    """Python's cyclic garbage collector set for fuzzing, then as it was.

    Why: a run allocates thousands of tuples and lists that die with it, and each 700
    allocations the collector walks the young ones; what was built before fuzzing (the
    compiled code, the block tables, the deployed chain) is frozen out of its walks. The
    runs make few reference cycles, so collecting fifty times less often costs little
    memory: measured 2 to 5 % of the fuzzing loop's time on a maze and on the token.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*FUZZING_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
