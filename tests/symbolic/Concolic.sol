// SPDX-License-Identifier: MIT
// Conditions that mutation and input prediction cannot solve (issue 15), one contract each.
// Every function returns 1 when its guarded side is reached.
pragma solidity 0.8.26;

contract NonLinear {
    function f(uint256 a, uint256 b) external pure returns (uint256) {
        if (a * b == 391 && a > 1 && b > 1) {
            return 1;
        }
        return 0;
    }
}

contract MultiParam {
    function g(uint256 p0, uint256 p1, uint256 p2, uint256 p3, uint256 p4, uint256 p5,
               uint256 p6, uint256 p7) external pure returns (uint256) {
        if (p1 == 7 + p2 && p0 > 27 * p2 && p7 < 49) {
            return 1 + p3 * 0 + p4 * 0 + p5 * 0 + p6 * 0;
        }
        return 0;
    }
}

contract Wrapping {
    function w(uint64 p4, uint64 p6) external pure returns (uint256) {
        unchecked {
            if (p6 > 1 && p4 > uint64(p4 * p6)) {
                return 1;
            }
        }
        return 0;
    }
}

contract Signed {
    function s(int256 x) external pure returns (uint256) {
        if (x < -1000 && x * 3 > -4000) {
            return 1;
        }
        return 0;
    }
}

contract Stored {
    uint256 stored;

    function set(uint256 x) external {
        stored = x;
    }

    function check() external view returns (uint256) {
        if (stored * 3 == 123456789) {
            return 1;
        }
        return 0;
    }
}

contract Infeasible {
    function h(uint256 x) external pure returns (uint256) {
        if (x > 10) {
            if (x < 5) {
                return 1;
            }
            return 2;
        }
        return 0;
    }
}

contract Environment {
    address owner;
    uint256 start;

    constructor() {
        owner = msg.sender;
        start = block.timestamp;
    }

    function owned() external view returns (uint256) {
        if (msg.sender == owner) {
            return 1;
        }
        return 0;
    }

    function later() external payable returns (uint256) {
        if (msg.value > 1 ether && block.timestamp > start + 30 days) {
            return 1;
        }
        return 0;
    }
}

contract Mapped {
    mapping(address => uint256) balances;
    bytes32 public last;

    function deposit(uint256 amount) external {
        balances[msg.sender] += amount;
    }

    function spend(uint256 amount, bytes calldata note) external returns (uint256) {
        last = keccak256(note);
        if (balances[msg.sender] > 1000 && amount == balances[msg.sender] - 1000) {
            return 1;
        }
        return 0;
    }
}
