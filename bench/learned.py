"""Decisions per second of the learned policy's numpy networks (issue 29: at least 300).

Usage::

    .venv/bin/python bench/learned.py [--model FILE] [--functions 30] [--decisions 3000]
        [--seed 0]

Times ``Episode.decide`` followed by ``Episode.advance`` (one transaction of ILF's loop, the
networks' part only: the feature rows are given, not computed) on one thread, for a
synthetic contract of ``--functions`` functions (integer, address, array and other
parameters, some payable, storage reads and writes, constants), episodes of 50
transactions. Without ``--model`` the networks have ILF's sizes (hidden 100, a name
embedding of 32, 64 seed integers, 16 seed amounts, a vocabulary of 4,096 tokens) with
random weights: the speed does not depend on the values. A figure, never a pass/fail.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

# One thread, as a campaign's worker runs the networks (set before numpy loads BLAS).
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

from secant.learn.encode import ContractFacts, FunctionFacts, Layout  # noqa: E402
from secant.learn.features import FEATURE_NAMES  # noqa: E402
from secant.learn.network import (  # noqa: E402
    MODEL_FORMAT,
    LearnedModel,
    NetworkDims,
    weight_shapes,
)

PARAMETERS = [(), ("uint256",), ("address", "uint256"), ("uint256[]",), ("bool", "uint8"),
              ("address[]", "uint256", "uint256"), ("bytes",)]


def random_model(seed: int) -> LearnedModel:
    rng = np.random.default_rng(seed)
    layout = Layout(("<unk>", *(f"t{i}" for i in range(4095))), tuple(range(64)),
                    (0, *(10 ** k for k in range(15))))
    dims = NetworkDims()
    weights = {name: (rng.standard_normal(shape) * 0.1).astype(np.float32)
               for name, shape in weight_shapes(layout, dims).items()}
    meta = {"format": MODEL_FORMAT, "layout": layout.digest, "layout_data": layout.to_json(),
            "encoder_version": layout.version, "dims": dims.to_json()}
    return LearnedModel(weights, meta, "random networks")


def contract(functions: int, seed: int) -> ContractFacts:
    rng = random.Random(seed)
    out = []
    for index in range(functions):
        params = PARAMETERS[index % len(PARAMETERS)]
        out.append(FunctionFacts(
            signature=f"f{index}({','.join(params)})", name_tokens=(f"t{index}", "get"),
            parameters=params, address_arguments=sum("address" in p for p in params),
            payable=index % 4 == 0, instructions=rng.randrange(20, 400), fallback=False,
            code_share=rng.random() / functions,
            reads=frozenset(rng.sample(range(12), 3)), writes=frozenset(rng.sample(range(12), 1)),
            constants=tuple(sorted(rng.sample(range(2, 10 ** 6), 5))),
        ))
    roles = ("sender",) * 5 + ("target", "attacker", "zero")
    return ContractFacts(tuple(out), senders=5, roles=roles)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--functions", type=int, default=30)
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    model = LearnedModel.load(args.model) if args.model else random_model(args.seed)
    episode = model.start_facts(contract(args.functions, args.seed))
    rng = random.Random(args.seed)
    data = np.random.default_rng(args.seed)
    rows = [data.random((args.functions, len(FEATURE_NAMES))).tolist() for _ in range(16)]
    for index in range(50):  # warm up
        episode.advance(episode.decide(rows[index % 16], rng), "return")
    episode.reset()
    start = time.perf_counter()
    for index in range(args.decisions):
        if index % 50 == 0:
            episode.reset()
        decision = episode.decide(rows[index % 16], rng)
        episode.advance(decision, "revert" if index % 3 == 0 else "return")
    seconds = time.perf_counter() - start
    print(f"{args.decisions} decisions for {args.functions} functions in {seconds:.2f} s: "
          f"{args.decisions / seconds:,.0f} decisions/s ({model.source})")


if __name__ == "__main__":
    main()
