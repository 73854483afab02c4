// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Harvey Fig. 1 / "Learning inputs in greybox fuzzing" Fig. 1: five paths through baz;
/// the a == 42 path fails an assertion (the bug a fuzzer must find).
contract Baz {
    // Deliberately not `pure`: fuzzers skip view/pure functions by default (sFuzz).
    function baz(int256 a, int256 b, int256 c) external returns (int256) {
        int256 d;
        unchecked {
            d = b + c;
        }
        if (d < 1) {
            if (b < 3) {
                return 1;
            }
            if (a == 42) {
                assert(false);
                return 2;
            }
            return 3;
        } else {
            if (c < 42) {
                return 4;
            }
            return 5;
        }
    }
}
