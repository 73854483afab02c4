// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A maze whose position lives in storage: every move is a transaction. Walls revert.
/// Some cells guard an assertion behind arithmetic on the move's argument, at sequence
/// depths 3, 6 and 10 (witnesses: N,N,E(49); N,N,N,E,E,E(1001); N,N,N,E,E,E,S,S,W,S(0xdead)).
///
///   y=3  .  .  .  .
///   y=2  .  .  #  .      # = wall, start at (0,0)
///   y=1  .  #  .  .
///   y=0  S  #  .  .
///        x=0 1  2  3
contract StatefulMaze {
    uint256 public x;
    uint256 public y;
    uint256 constant SIZE = 4;
    uint256 constant WALLS = (1 << 1) | (1 << 5) | (1 << 10); // (1,0), (1,1), (2,2)

    function _step(int256 dx, int256 dy) internal {
        int256 nx = int256(x) + dx;
        int256 ny = int256(y) + dy;
        require(nx >= 0 && ny >= 0 && nx < int256(SIZE) && ny < int256(SIZE), "edge");
        uint256 cell = uint256(ny) * SIZE + uint256(nx);
        require(WALLS & (1 << cell) == 0, "wall");
        x = uint256(nx);
        y = uint256(ny);
    }

    function north(uint256 k) external {
        _step(0, 1);
        if (x == 0 && y == 3 && k == 7) {
            emit Corner(k); // a branch, not a bug
        }
    }

    function east(uint256 k) external {
        _step(1, 0);
        if (x == 1 && y == 2) {
            if ((k * 7) % 1000 == 343) {
                assert(false); // depth 3
            }
        }
        if (x == 3 && y == 3) {
            if (k > 1000 && k < 1010) {
                if (k % 3 == 2) {
                    assert(false); // depth 6
                }
            }
        }
    }

    function south(uint256 k) external {
        _step(0, -1);
        if (x == 2 && y == 0 && k == 0xdead) {
            assert(false); // depth 10
        }
    }

    function west(uint256 k) external {
        _step(-1, 0);
        if (x == 0 && k > 2 ** 200) {
            emit Corner(k);
        }
    }

    event Corner(uint256 k);
}
