// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Storage-heavy: many SLOAD/SSTORE in a loop.
contract StorageLoop {
    uint256[64] public slots;

    function churn(uint256 rounds) external {
        for (uint256 r = 0; r < rounds; r++) {
            for (uint256 i = 0; i < 64; i++) {
                slots[i] = slots[i] + r + i;
            }
        }
    }
}

/// Keccak-heavy: nested mappings written and read by computed keys.
contract MappingHash {
    mapping(uint256 => mapping(address => uint256)) public book;

    function fill(uint256 n, address who) external returns (uint256 acc) {
        for (uint256 i = 0; i < n; i++) {
            book[i][who] = i * 7 + 1;
            unchecked {
                // wrapping on purpose: the sum of hashes overflows
                acc += uint256(keccak256(abi.encode(i, who, acc)));
                acc += book[i][who];
            }
        }
    }
}

/// Call-heavy: a caller invoking a callee's function in a loop.
contract Callee {
    uint256 public total;

    function add(uint256 x) external returns (uint256) {
        total += x;
        return total;
    }
}

contract Caller {
    Callee public immutable callee;

    constructor() {
        callee = new Callee();
    }

    function run(uint256 n) external returns (uint256 last) {
        for (uint256 i = 0; i < n; i++) {
            last = callee.add(i);
        }
    }
}
