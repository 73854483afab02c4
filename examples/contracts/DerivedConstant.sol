// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A check on a constant derived by arithmetic: a * 3 + 7 == 57266236 (a = 19088743).
/// Dictionaries of bytecode constants do not contain the answer; prediction computes it.
contract DerivedConstant {
    // Deliberately not `pure`: fuzzers skip view/pure functions by default.
    function check(uint256 a) external returns (bool) {
        unchecked {
            if (a * 3 + 7 == 57266236) {
                assert(false);
            }
        }
        return true;
    }
}
