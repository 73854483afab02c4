// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Harvey Fig. 2: the assertion in Bar needs SetY(42); CopyY(); Bar() (or 42 x IncX; Bar).
contract Foo {
    int256 private x;
    int256 private y;

    constructor() {
        x = 0;
        y = 0;
    }

    // Deliberately not `view` (as in the paper): fuzzers skip view functions by default.
    function Bar() public returns (int256) {
        if (x == 42) {
            assert(false);
            return 1;
        }
        return 0;
    }

    function SetY(int256 ny) public {
        y = ny;
    }

    function IncX() public {
        x++;
    }

    function CopyY() public {
        x = y;
    }
}
