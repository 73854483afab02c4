// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The Fuzzing Book's maze as the book compiles it for directed fuzzing: one function
/// per open tile, so each tile is its own code and control-flow distances to the
/// target tile mean something. Moves are U/D/L/R; walls and unknown moves revert;
/// reaching # fails an assertion. Solution: "DDDDRRRRUULLUURRRRDDDD".
///   +-+-----+
///   |X|     |
///   | | --+ |
///   | |   | |
///   | +-- | |
///   |     |#|
///   +-----+-+
contract DirectedMaze {
    function walk(bytes calldata moves) external returns (uint256 steps) {
        return tile_1_1(moves, 0);
    }

    function tile_1_1(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") return tile_2_1(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_1_3(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") return tile_2_3(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") return tile_1_4(m, i + 1);
        revert("unknown move");
    }

    function tile_1_4(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") revert("wall");
        if (d == "L") return tile_1_3(m, i + 1);
        if (d == "R") return tile_1_5(m, i + 1);
        revert("unknown move");
    }

    function tile_1_5(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") revert("wall");
        if (d == "L") return tile_1_4(m, i + 1);
        if (d == "R") return tile_1_6(m, i + 1);
        revert("unknown move");
    }

    function tile_1_6(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") revert("wall");
        if (d == "L") return tile_1_5(m, i + 1);
        if (d == "R") return tile_1_7(m, i + 1);
        revert("unknown move");
    }

    function tile_1_7(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") return tile_2_7(m, i + 1);
        if (d == "L") return tile_1_6(m, i + 1);
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_2_1(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_1_1(m, i + 1);
        if (d == "D") return tile_3_1(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_2_3(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_1_3(m, i + 1);
        if (d == "D") return tile_3_3(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_2_7(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_1_7(m, i + 1);
        if (d == "D") return tile_3_7(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_3_1(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_2_1(m, i + 1);
        if (d == "D") return tile_4_1(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_3_3(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_2_3(m, i + 1);
        if (d == "D") revert("wall");
        if (d == "L") revert("wall");
        if (d == "R") return tile_3_4(m, i + 1);
        revert("unknown move");
    }

    function tile_3_4(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") revert("wall");
        if (d == "L") return tile_3_3(m, i + 1);
        if (d == "R") return tile_3_5(m, i + 1);
        revert("unknown move");
    }

    function tile_3_5(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") return tile_4_5(m, i + 1);
        if (d == "L") return tile_3_4(m, i + 1);
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_3_7(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_2_7(m, i + 1);
        if (d == "D") return tile_4_7(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_4_1(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_3_1(m, i + 1);
        if (d == "D") return tile_5_1(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_4_5(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_3_5(m, i + 1);
        if (d == "D") return tile_5_5(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_4_7(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_3_7(m, i + 1);
        if (d == "D") return tile_5_7(m, i + 1);
        if (d == "L") revert("wall");
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_5_1(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_4_1(m, i + 1);
        if (d == "D") revert("wall");
        if (d == "L") revert("wall");
        if (d == "R") return tile_5_2(m, i + 1);
        revert("unknown move");
    }

    function tile_5_2(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") revert("wall");
        if (d == "L") return tile_5_1(m, i + 1);
        if (d == "R") return tile_5_3(m, i + 1);
        revert("unknown move");
    }

    function tile_5_3(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") revert("wall");
        if (d == "L") return tile_5_2(m, i + 1);
        if (d == "R") return tile_5_4(m, i + 1);
        revert("unknown move");
    }

    function tile_5_4(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") revert("wall");
        if (d == "D") revert("wall");
        if (d == "L") return tile_5_3(m, i + 1);
        if (d == "R") return tile_5_5(m, i + 1);
        revert("unknown move");
    }

    function tile_5_5(bytes calldata m, uint256 i) internal returns (uint256) {
        if (i >= m.length) return i;
        bytes1 d = m[i];
        if (d == "U") return tile_4_5(m, i + 1);
        if (d == "D") revert("wall");
        if (d == "L") return tile_5_4(m, i + 1);
        if (d == "R") revert("wall");
        revert("unknown move");
    }

    function tile_5_7(bytes calldata m, uint256 i) internal returns (uint256) {
        assert(false);
        return i;
    }
}
