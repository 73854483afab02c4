"""Transactions: validation, intrinsic gas, fees, execution and settlement."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from secant.evm.forks import DEFAULT_FORK, Fork
from secant.evm.instructions.system import create_address
from secant.evm.interpreter import Evm, MessageResult
from secant.evm.state import Log

if TYPE_CHECKING:
    from secant.evm.env import BlockEnv
    from secant.evm.inspector import Inspector
    from secant.evm.intercept import Interceptor
    from secant.evm.state import WorldState

GAS_PER_BLOB = 1 << 17
NONCE_LIMIT = 2**64 - 1


class InvalidTransaction(Exception):
    """The transaction cannot be included; the state is unchanged."""


@dataclass
class Transaction:
    """A signed transaction, reduced to what execution needs (the sender is given)."""

    sender: int
    to: int | None
    nonce: int = 0
    gas_limit: int = 1_000_000
    value: int = 0
    data: bytes = b""
    gas_price: int | None = None
    max_fee_per_gas: int | None = None
    max_priority_fee_per_gas: int | None = None
    access_list: list[tuple[int, list[int]]] = field(default_factory=list)
    max_fee_per_blob_gas: int | None = None
    blob_versioned_hashes: list[bytes] = field(default_factory=list)
    tx_type: int | None = None

    @property
    def kind(self) -> int:
        """The EIP-2718 type: explicit, else inferred from the fields present."""
        if self.tx_type is not None:
            return self.tx_type
        if self.max_fee_per_blob_gas is not None or self.blob_versioned_hashes:
            return 3
        if self.max_fee_per_gas is not None:
            return 2
        if self.access_list:
            return 1
        return 0


@dataclass
class TxResult:
    """What a transaction did."""

    success: bool
    reverted: bool
    gas_used: int
    output: bytes
    logs: list[Log]
    error: str | None = None
    created_address: int | None = None


def intrinsic_gas(tx: Transaction, fork: Fork) -> tuple[int, int]:
    """(intrinsic gas, EIP-7623 calldata floor) of ``tx``."""
    data = tx.data
    zeros = data.count(0)
    nonzeros = len(data) - zeros
    gas = fork.gas_tx + zeros * fork.gas_calldata_zero + nonzeros * fork.gas_calldata_nonzero
    if tx.to is None:
        gas += fork.gas_tx_create
        if fork.initcode_limit:
            gas += fork.gas_initcode_word * ((len(data) + 31) // 32)
    for _, slots in tx.access_list:
        gas += fork.gas_access_list_address + fork.gas_access_list_slot * len(slots)
    floor = 0
    if fork.calldata_floor_per_token:
        floor = fork.gas_tx + fork.calldata_floor_per_token * (zeros + 4 * nonzeros)
    return gas, floor


def _effective_gas_price(tx: Transaction, env: BlockEnv, kind: int) -> tuple[int, int]:
    """(effective gas price, max fee per gas) after the EIP-1559 checks (``kind``: tx.kind)."""
    if kind >= 2:
        max_fee = tx.max_fee_per_gas or 0
        priority = tx.max_priority_fee_per_gas or 0
        if max_fee < priority:
            raise InvalidTransaction("priority fee greater than max fee")
        if max_fee < env.base_fee:
            raise InvalidTransaction("max fee per gas below base fee")
        return min(priority, max_fee - env.base_fee) + env.base_fee, max_fee
    price = tx.gas_price or 0
    if price < env.base_fee:
        raise InvalidTransaction("gas price below base fee")
    return price, price


def validate(state: WorldState, env: BlockEnv, tx: Transaction, fork: Fork) -> tuple[int, int, int]:
    """Raise ``InvalidTransaction`` or return (intrinsic gas, floor, effective gas price)."""
    kind = tx.kind
    if kind == 3 and not fork.max_blobs_per_block:
        raise InvalidTransaction(f"blob transactions do not exist in {fork.name}")
    gas, floor = intrinsic_gas(tx, fork)
    if max(gas, floor) > tx.gas_limit:
        raise InvalidTransaction("intrinsic gas exceeds the gas limit")
    if tx.nonce >= NONCE_LIMIT:
        raise InvalidTransaction("nonce too high (EIP-2681)")
    if tx.to is None and fork.initcode_limit and len(tx.data) > fork.max_initcode_size:
        raise InvalidTransaction("initcode too large (EIP-3860)")
    if fork.tx_gas_limit_cap and tx.gas_limit > fork.tx_gas_limit_cap:
        raise InvalidTransaction("gas limit above the transaction cap (EIP-7825)")
    if tx.gas_limit > env.gas_limit:
        raise InvalidTransaction("gas limit exceeds the block gas limit")
    blob_gas = GAS_PER_BLOB * len(tx.blob_versioned_hashes)
    if blob_gas > GAS_PER_BLOB * fork.max_blobs_per_block:
        raise InvalidTransaction("too many blobs")
    price, max_price = _effective_gas_price(tx, env, kind)
    max_cost = tx.gas_limit * max_price
    if kind == 3:
        if tx.to is None:
            raise InvalidTransaction("blob transactions cannot create contracts")
        if not tx.blob_versioned_hashes:
            raise InvalidTransaction("blob transaction without blobs")
        if any(h[:1] != b"\x01" for h in tx.blob_versioned_hashes):
            raise InvalidTransaction("invalid blob versioned hash version")
        blob_price = env.blob_base_fee(fork.blob_base_fee_update_fraction)
        if (tx.max_fee_per_blob_gas or 0) < blob_price:
            raise InvalidTransaction("max fee per blob gas below the blob base fee")
        max_cost += blob_gas * (tx.max_fee_per_blob_gas or 0)
    account = state.get(tx.sender)
    nonce = account.nonce if account else 0
    if nonce != tx.nonce:
        raise InvalidTransaction(f"nonce mismatch: account has {nonce}, transaction {tx.nonce}")
    balance = account.balance if account else 0
    if balance < max_cost + tx.value:
        raise InvalidTransaction("insufficient balance for gas and value")
    if account is not None and account.code:
        raise InvalidTransaction("sender has code (EIP-3607)")
    return gas, floor, price


def apply_transaction(
    state: WorldState,
    env: BlockEnv,
    tx: Transaction,
    fork: Fork = DEFAULT_FORK,
    inspector: Inspector | None = None,
    cheatcodes: Interceptor[Evm] | None = None,
) -> TxResult:
    """Validate and execute ``tx``, settling fees; raise ``InvalidTransaction`` if invalid.

    ``cheatcodes`` intercepts messages (see ``secant.evm.intercept``); a block it changes
    mid-transaction applies to the rest of the execution, while the fees are settled in the
    block the transaction was priced in (``env``).
    """
    gas, floor, price = validate(state, env, tx, fork)
    evm = Evm(state, env, fork, inspector, cheatcodes)
    sender = tx.sender
    blob_fee = GAS_PER_BLOB * len(tx.blob_versioned_hashes) * evm.blob_base_fee
    state.increment_nonce(sender)
    state.add_balance(sender, -(tx.gas_limit * price + blob_fee))

    txs = state.begin_transaction()
    warm = txs.warm_addresses
    warm.add(sender)
    warm.update(evm.precompiles)
    if fork.initcode_limit:  # Shanghai+ (EIP-3651): the coinbase starts warm.
        warm.add(env.coinbase)
    for address, slots in tx.access_list:
        warm.add(address)
        for slot in slots:
            txs.warm_slots.add((address, slot))
    evm.origin = sender
    evm.gas_price = price
    evm.blob_hashes = tuple(tx.blob_versioned_hashes)

    message_gas = tx.gas_limit - gas
    if tx.to is None:
        address = create_address(sender, tx.nonce)
        warm.add(address)
        target = state.get(address)
        if target is not None and (target.code or target.nonce or target.storage):
            result = MessageResult(False, False, b"", 0, "address collision")
        else:
            result = evm.create(sender, address, tx.data, message_gas, tx.value)
    else:
        warm.add(tx.to)
        result = evm.call(sender, tx.to, tx.data, message_gas, tx.value)

    used = tx.gas_limit - result.gas_left
    refund = min(used // fork.refund_quotient, txs.refund) if result.success else 0
    used -= refund
    used = max(used, floor)
    state.add_balance(sender, (tx.gas_limit - used) * price)
    fee = used * (price - env.base_fee)
    coinbase = env.coinbase
    if fee:
        state.add_balance(coinbase, fee)
    else:
        account = state.get(coinbase)
        if account is not None and account.is_empty():
            state.delete_account(coinbase)
    for address in txs.destroyed:
        state.delete_account(address)
    return TxResult(
        success=result.success,
        reverted=result.reverted,
        gas_used=used,
        output=result.output,
        logs=list(txs.logs) if result.success else [],
        error=result.error,
        created_address=result.created_address,
    )
