"""The names of the symbolic variables that stand for storage read before a test case.

The shadow tracker (``secant.symbolic.shadow``) names the value of slot ``slot`` of
``address``, read before the case wrote it, ``s_<address>_<slot>`` (hex); the solver pins
or frees those values, and the concolic stage asks for the writers of those slots. The
inputs of transaction ``n`` are ``tx<n>_w<k>`` (argument word ``k``), ``tx<n>_value``,
``tx<n>_sender``, ``tx<n>_time`` and ``tx<n>_blocks``. This module holds the formats once,
without z3, so that callers need not load it.
"""

from __future__ import annotations

import re

_INPUT = re.compile(r"^tx(\d+)_")

STATE_PREFIX = "s_"
"""The prefix of every state variable (inputs have others: ``tx0_w2``, ``tx1_value``)."""


def state_variable(address: int, slot: int) -> str:
    """The name of the value slot ``slot`` of ``address`` held before the case."""
    return f"{STATE_PREFIX}{address:x}_{slot:x}"


def is_state_variable(name: str) -> bool:
    """Whether ``name`` stands for storage read before the case (no input of the case)."""
    return name.startswith(STATE_PREFIX)


def state_slot(name: str) -> tuple[int, int]:
    """The ``(address, slot)`` that state variable ``name`` stands for."""
    address, slot = name[len(STATE_PREFIX):].split("_")
    return int(address, 16), int(slot, 16)


def input_transaction(name: str) -> int | None:
    """The index of the transaction whose input ``name`` stands for (None: no input)."""
    match = _INPUT.match(name)
    return int(match.group(1)) if match else None
