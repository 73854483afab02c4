"""Message interception: the hook that cheatcodes (Foundry's ``vm``, HEVM's) plug into.

An ``Evm`` whose ``cheatcodes`` attribute is None (the default) runs exactly as without this
module: the driver tests that attribute once when a message starts and once when it ends,
never per instruction. With an :class:`Interceptor` installed:

* a message whose code address is :attr:`Interceptor.address` runs no code: the driver asks
  :meth:`Interceptor.answer` for the result (success, gas left, output), as it would a
  precompile, and hands that to the caller;
* while :attr:`Interceptor.watching` is true, every other CALL-family and CREATE/CREATE2
  message started by a running frame first asks :meth:`Interceptor.sender_for` which address
  it comes from (``vm.prank``); a changed sender pays the value, and a creation's address is
  derived from it;
* while :attr:`Interceptor.watching` is true, every message that ends (frames, precompiles,
  accounts without code, early failures, but not the interceptor's own answers) is reported
  to :meth:`Interceptor.message_end`, which may replace its outcome (``vm.expectRevert``
  turns an expected revert into a success and an unexpected success into a revert). A
  replaced failure keeps its state changes undone; a success turned into a revert has them
  undone.

The interceptor may also change the block environment (``Evm.env`` and the ``env`` of the
frames still running, see :func:`set_block_env`) and ``Evm.origin``; it must make any state
change through the ``WorldState`` so that the journal undoes it like a transaction's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from secant.evm.env import BlockEnv
    from secant.evm.frame import Frame, Machine

_E = TypeVar("_E", bound="Machine")
"""The machine an interceptor is installed in (``secant.evm.interpreter.Evm``): its hooks
receive it as it is, so that a subclass can use all of it."""

HEVM_ADDRESS = 0x7109709ECFA91A80626FF3989D68F67F5B1DD12D
"""Where Foundry, HEVM, Echidna and Medusa harnesses send cheatcode calls:
``address(bytes20(uint160(uint256(keccak256("hevm cheat code")))))``."""

DUMMY_CREATE_ADDRESS = 1
"""The address a creation reports when an interceptor turned its failure into a success
(Foundry's choice: a non-zero address, so that ``new C()`` does not revert in the caller)."""


class Interceptor(Generic[_E]):
    """Base class of message interceptors: answers nothing, changes nothing.

    Subclasses override :meth:`answer` (the reason to exist) and, as needed,
    :meth:`sender_for` and :meth:`message_end`.
    """

    #: The code address whose messages :meth:`answer` handles.
    address: int = HEVM_ADDRESS

    #: While False the driver calls neither :meth:`sender_for` nor :meth:`message_end`, so an
    #: idle interceptor (no prank, no expectation) costs an attribute check per message.
    watching: bool = True

    def answer(self, evm: _E, parent: Frame | None, caller: int, data: bytes, gas: int,
               depth: int, is_static: bool) -> tuple[bool, int, bytes]:
        """Handle a message to :attr:`address`: return (success, gas left, output).

        ``parent`` is the calling frame (None for a transaction's own message) and ``depth``
        the depth the message would run at. A failure (success False) reverts the message's
        value transfer and whatever the interceptor changed in the state; its output is the
        caller's return data.
        """
        return False, 0, b""

    def sender_for(self, evm: _E, parent: Frame, kind: int, caller: int, address: int) -> int:
        """The sender of a message ``parent`` is about to start (``caller`` without a change).

        ``kind`` is the opcode (CALL, CALLCODE, DELEGATECALL, STATICCALL, CREATE, CREATE2);
        ``address`` the account the message runs in (0 for a creation: its address depends
        on the sender).
        """
        return caller

    def message_end(self, evm: _E, kind: int, address: int, depth: int, success: bool,
                    output: bytes) -> tuple[bool, bytes] | None:
        """A message ended: None keeps its outcome, (success, output) replaces it.

        ``address`` is the account it ran in (0: a creation that failed before it started).
        """
        return None


def set_block_env(evm: Machine, frame: Frame | None, env: BlockEnv) -> None:
    """Make ``env`` the block of ``evm`` from now on, for ``frame`` and its callers too.

    Frames read the block through their own ``env`` (set when they start), so a change made
    in the middle of a transaction (``vm.warp``) is handed to every frame still running.
    """
    evm.env = env
    while frame is not None:
        frame.env = env
        frame = frame.parent
