"""Cost vectors, path ids with hit-count buckets, and campaign coverage."""

from __future__ import annotations

from secant.engine.feedback import Coverage, cost_vector
from secant.targets.contract import bucket, path_hash
from secant.types import RunResult, TxOutcome

H = b"\x11" * 32
OK = TxOutcome(True, False, b"", 21000)


def result(branches: list[tuple], marks: list[int], sstores: list[tuple] = (),
           sstore_marks: list[int] | None = None) -> RunResult:
    edges = {(h, pc, taken) for h, pc, taken, *_ in branches}
    return RunResult((), [OK] * len(marks), path_hash(branches, 0), {(H, 0)}, edges,
                      list(branches), marks, list(sstores), sstore_marks or [0] * len(marks),
                      [])


def test_branch_costs_are_for_the_side_not_taken_and_per_occurrence() -> None:
    branches = [
        (H, 10, False, "eq", 40, 42),   # a == 42 failed: cost |40 - 42| to make it true
        (H, 20, True, "lt", 1, 5),      # 1 < 5 held: cost 5 - 1 to make it false
        (H, 10, False, "eq", 41, 42),   # the same JUMPI again in a loop: its own metric
        (H, 30, True, "slt", (1 << 256) - 3, 2),  # -3 < 2 held (signed): cost 5
    ]
    costs = cost_vector(result(branches, [0]), None)
    assert costs == {
        (0, H, 10, 0, True): 2,
        (0, H, 20, 0, False): 4,
        (0, H, 10, 1, True): 1,
        (0, H, 30, 0, False): 5,
    }


def test_transactions_have_separate_metrics_and_sstore_distance() -> None:
    branches = [(H, 10, False, "eq", 0, 7), (H, 10, False, "eq", 3, 7)]
    sstores = [(H, 99, 5), (H, 99, 1000)]
    costs = cost_vector(result(branches, [0, 1], sstores, [0, 1]), sstore_target=1003)
    assert costs[(0, H, 10, 0, True)] == 7
    assert costs[(1, H, 10, 0, True)] == 4
    assert costs[("sstore", 0, H, 99, 0)] == 998
    assert costs[("sstore", 1, H, 99, 0)] == 3
    assert ("sstore", 0, H, 99, 0) not in cost_vector(result(branches, [0, 1], sstores,
                                                             [0, 1]), None)


def test_hit_count_buckets_and_path_ids() -> None:
    assert [bucket(n) for n in (1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 127, 128, 10**6)] == \
        [1, 2, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8]
    loop = [(H, 5, True, "lt", 0, 0)]
    five = path_hash(loop * 5, 0)
    assert five == path_hash(loop * 6, 0)  # same bucket (4-7)
    assert five != path_hash(loop * 8, 0)  # next bucket
    # Around the end of the precomputed buckets: 127 is bucket 7, 128 and on bucket 8.
    assert path_hash(loop * 100, 0) == path_hash(loop * 127, 0) != path_hash(loop * 128, 0)
    assert path_hash(loop * 128, 0) == path_hash(loop * 300, 0)
    assert five != path_hash(loop * 5, 1)  # a revert is another path
    other = [(H, 6, True, "lt", 0, 0)]
    assert path_hash(loop + other, 0) != path_hash(other + loop, 0)  # order matters


def test_coverage_merge_reports_what_is_new() -> None:
    cov = Coverage()
    first = result([(H, 10, False, "eq", 0, 1)], [0])
    assert cov.merge(first) == (True, 1, 1)
    assert cov.merge(first) == (False, 0, 0)
    second = result([(H, 10, True, "eq", 1, 1)], [0])
    assert cov.merge(second) == (True, 0, 1)
    assert cov.edges == {(H, 10, False), (H, 10, True)}
