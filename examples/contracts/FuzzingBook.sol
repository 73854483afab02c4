// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// The Fuzzing Book's greybox chapter: crashme fails on input starting with "bad!",
/// one character per nested branch (so coverage guidance can climb it).
contract CrashMe {
    function crashme(bytes calldata s) external returns (uint256 depth) {
        if (s.length > 0 && s[0] == "b") {
            depth = 1;
            if (s.length > 1 && s[1] == "a") {
                depth = 2;
                if (s.length > 2 && s[2] == "d") {
                    depth = 3;
                    if (s.length > 3 && s[3] == "!") {
                        assert(false);
                    }
                }
            }
        }
    }
}

/// The Fuzzing Book's maze (greybox chapter, directed fuzzing): walk from X with moves
/// U/D/L/R; walls and unknown moves revert; reaching # fails an assertion. One solution:
/// "DDDDRRRRUULLUURRRRDDDD". Laid out as 7 rows of 9 cells:
///   +-+-----+
///   |X|     |
///   | | --+ |
///   | |   | |
///   | +-- | |
///   |     |#|
///   +-----+-+
contract Maze {
    bytes constant GRID =
        "+-+-----+|X|     || | --+ || |   | || +-- | ||     |#|+-----+-+";
    uint256 constant WIDTH = 9;

    function walk(bytes calldata moves) external returns (uint256 steps) {
        uint256 row = 1;
        uint256 col = 1;
        for (uint256 i = 0; i < moves.length; i++) {
            bytes1 move = moves[i];
            if (move == "U") {
                row -= 1;
            } else if (move == "D") {
                row += 1;
            } else if (move == "L") {
                col -= 1;
            } else if (move == "R") {
                col += 1;
            } else {
                revert("unknown move");
            }
            bytes1 cell = GRID[row * WIDTH + col];
            if (cell == "#") {
                assert(false);
            }
            if (cell != " " && cell != "X") {
                revert("wall");
            }
            steps++;
        }
    }
}
