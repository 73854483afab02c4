"""``--target``: a pc or a source line resolved to the main contract's runtime pcs."""

from __future__ import annotations

import pytest

from secant.campaign.directed import resolve_line_target, resolve_pc_target
from secant.errors import SecantError
from secant.evm.cfg import ControlFlowGraph
from tests.compile.conftest import needs_node
from tests.examples.test_example_contracts import compiled


def test_pc_targets() -> None:
    assert resolve_pc_target("pc:0x1a") == {26}
    assert resolve_pc_target("pc:418") == {418}
    with pytest.raises(SecantError, match="cannot read the pc"):
        resolve_pc_target("pc:zz")


@needs_node
def test_line_target_on_the_directed_maze() -> None:
    from pathlib import Path
    comp = compiled("DirectedMaze.sol")[0]
    contract = comp.contract("DirectedMaze")
    text = (Path(__file__).resolve().parents[2] / "examples" / "contracts"
            / "DirectedMaze.sol").read_text().splitlines()
    line = next(i + 1 for i, t in enumerate(text) if "assert(false)" in t)
    pcs = resolve_line_target(f"DirectedMaze.sol:{line}", comp, contract)
    assert pcs
    mapper = comp.mapper(contract)
    assert all(mapper.locate(pc).line == line for pc in pcs)  # type: ignore[union-attr]
    g = ControlFlowGraph.from_code(contract.runtime.to_bytes())
    distances = g.distances(pcs)
    assert distances[0] > distances[g.block_of(min(pcs))] == 0.0
    # Tile functions nearer the target (by moves) are nearer in the graph too.
    with pytest.raises(SecantError, match="no source file 'Nope.sol'"):
        resolve_line_target("Nope.sol:3", comp, contract)
    with pytest.raises(SecantError, match="line 2 of .* has no code"):
        resolve_line_target("DirectedMaze.sol:2", comp, contract)
    with pytest.raises(SecantError, match="cannot read the target"):
        resolve_line_target("DirectedMaze.sol", comp, contract)
