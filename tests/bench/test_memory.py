"""bench/memory.py: the slope of resident memory, and reading a process's size."""

from __future__ import annotations

import os

import pytest

from tests.bench import load_bench

memory = load_bench("memory")


def test_the_slope_is_the_least_squares_one() -> None:
    assert memory.slope([(10.0, 100.0), (11.0, 102.0), (12.0, 104.0)]) == pytest.approx(2.0)
    # Noise around a flat line gives a slope near zero, not the last jump.
    assert memory.slope([(10.0, 100.0), (11.0, 101.0), (12.0, 99.0), (13.0, 100.0)]
                        ) == pytest.approx(-0.2)
    assert memory.slope([(10.0, 100.0)]) is None
    assert memory.slope([(10.0, 100.0), (10.0, 120.0)]) is None


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux's /proc")
def test_this_process_has_a_resident_size_and_a_gone_one_has_none() -> None:
    size = memory.resident_mb(os.getpid())
    assert size is not None and size > 1.0
    assert memory.resident_mb(2**22 + 12345) is None
