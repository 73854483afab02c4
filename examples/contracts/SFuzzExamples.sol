// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// sFuzz Fig. 2: two just-missed branches behind a non-linear computation
/// (x = 10 or -10 reaches the first, x = 100 or -100 the second).
contract MultipleObjectives {
    // Deliberately not `pure`: fuzzers skip view/pure functions by default.
    function foo(int256 x) external returns (int256) {
        int256 y = x * x + 10;
        if (y == 110) {
            assert(false);
        }
        if (y == 10010) {
            assert(false);
        }
        return y;
    }
}

/// sFuzz Fig. 1 (opposite_game): Try pays out only after start_quiz_game and with exactly
/// 100 finney (0.1 ether); the unchecked send is the gasless-send bug.
contract OppositeGame {
    string public question;
    address questionSender;
    bytes32 responseHash;

    event Won(address player, bool sent);

    function Try(string calldata _response) external payable {
        if (responseHash == keccak256(bytes(_response)) && msg.value == 0.1 ether) {
            bool sent = payable(msg.sender).send(address(this).balance);
            emit Won(msg.sender, sent);
        }
    }

    function start_quiz_game(string calldata _question, string calldata _answer)
        public
        payable
    {
        if (responseHash == 0x0) {
            responseHash = keccak256(bytes(_answer));
            question = _question;
            questionSender = msg.sender;
        }
    }

    fallback() external payable {}

    receive() external payable {}
}
