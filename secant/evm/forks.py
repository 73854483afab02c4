"""Forks as data: which opcodes exist, their static gas, and the constants that differ.

A fork is a frozen value. The interpreter never branches on a fork's *name*; it reads the
fields below (and the analysis builds its dispatch tables from them), so adding a fork is a
matter of deriving a new ``Fork`` from its parent with ``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from secant.evm.opcodes import BY_NAME, OPS

# Static gas of every opcode as of London (EIP-2929/3529 pricing). Dynamic parts (memory,
# copies, cold/warm access, SSTORE) are charged by the instructions themselves.
_LONDON_GAS: dict[str, int] = {
    "STOP": 0, "ADD": 3, "MUL": 5, "SUB": 3, "DIV": 5, "SDIV": 5, "MOD": 5, "SMOD": 5,
    "ADDMOD": 8, "MULMOD": 8, "EXP": 10, "SIGNEXTEND": 5,
    "LT": 3, "GT": 3, "SLT": 3, "SGT": 3, "EQ": 3, "ISZERO": 3, "AND": 3, "OR": 3, "XOR": 3,
    "NOT": 3, "BYTE": 3, "SHL": 3, "SHR": 3, "SAR": 3,
    "KECCAK256": 30,
    "ADDRESS": 2, "BALANCE": 0, "ORIGIN": 2, "CALLER": 2, "CALLVALUE": 2, "CALLDATALOAD": 3,
    "CALLDATASIZE": 2, "CALLDATACOPY": 3, "CODESIZE": 2, "CODECOPY": 3, "GASPRICE": 2,
    "EXTCODESIZE": 0, "EXTCODECOPY": 0, "RETURNDATASIZE": 2, "RETURNDATACOPY": 3,
    "EXTCODEHASH": 0,
    "BLOCKHASH": 20, "COINBASE": 2, "TIMESTAMP": 2, "NUMBER": 2, "PREVRANDAO": 2,
    "GASLIMIT": 2, "CHAINID": 2, "SELFBALANCE": 5, "BASEFEE": 2,
    "POP": 2, "MLOAD": 3, "MSTORE": 3, "MSTORE8": 3, "SLOAD": 0, "SSTORE": 0, "JUMP": 8,
    "JUMPI": 10, "PC": 2, "MSIZE": 2, "GAS": 2, "JUMPDEST": 1,
    **{f"PUSH{i}": 3 for i in range(1, 33)},
    **{f"DUP{i}": 3 for i in range(1, 17)},
    **{f"SWAP{i}": 3 for i in range(1, 17)},
    **{f"LOG{i}": 375 * (i + 1) for i in range(5)},
    "CREATE": 32000, "CALL": 0, "CALLCODE": 0, "RETURN": 0, "DELEGATECALL": 0,
    "CREATE2": 32000, "STATICCALL": 0, "REVERT": 0, "INVALID": 0, "SELFDESTRUCT": 5000,
}


def _gas_table(names: dict[str, int]) -> tuple[int, ...]:
    table = [0] * 256
    for name, gas in names.items():
        table[BY_NAME[name]] = gas
    return tuple(table)


@dataclass(frozen=True)
class Fork:
    """The rules of one Ethereum fork, as data."""

    name: str
    opcodes: frozenset[int]
    static_gas: tuple[int, ...] = field(repr=False)
    # EIP-6780: SELFDESTRUCT only deletes accounts created in the same transaction.
    selfdestruct_only_same_tx: bool = False
    # EIP-3860: limit and meter initcode.
    initcode_limit: bool = False
    # EIP-4844 blob parameters (0 = no blob transactions).
    max_blobs_per_block: int = 0
    blob_base_fee_update_fraction: int = 3338477
    # EIP-7623 calldata floor price per token (0 = no floor).
    calldata_floor_per_token: int = 0
    # EIP-7825 per-transaction gas limit cap (0 = none).
    tx_gas_limit_cap: int = 0
    # Constants shared by every fork here (kept as fields so a test fork can change them).
    max_code_size: int = 0x6000
    max_initcode_size: int = 0xC000
    gas_tx: int = 21000
    gas_tx_create: int = 32000
    gas_calldata_zero: int = 4
    gas_calldata_nonzero: int = 16
    gas_access_list_address: int = 2400
    gas_access_list_slot: int = 1900
    gas_initcode_word: int = 2
    refund_quotient: int = 5

    def derive(self, name: str, add: dict[str, int] | None = None, **changes: object) -> Fork:
        """A child fork: new opcodes ``add`` (name -> static gas) plus changed fields."""
        gas = list(self.static_gas)
        ops = set(self.opcodes)
        for op_name, op_gas in (add or {}).items():
            gas[BY_NAME[op_name]] = op_gas
            ops.add(BY_NAME[op_name])
        return replace(
            self, name=name, opcodes=frozenset(ops), static_gas=tuple(gas), **changes  # type: ignore[arg-type]
        )


LONDON = Fork(
    name="london",
    opcodes=frozenset(BY_NAME[n] for n in _LONDON_GAS),
    static_gas=_gas_table(_LONDON_GAS),
)
PARIS = LONDON.derive("paris")  # DIFFICULTY became PREVRANDAO: same opcode, new meaning.
SHANGHAI = PARIS.derive("shanghai", add={"PUSH0": 2}, initcode_limit=True)
CANCUN = SHANGHAI.derive(
    "cancun",
    add={"TLOAD": 100, "TSTORE": 100, "MCOPY": 3, "BLOBHASH": 3, "BLOBBASEFEE": 2},
    selfdestruct_only_same_tx=True,
    max_blobs_per_block=6,
)
# Prague: EIP-7623 calldata floor and the new blob schedule. EIP-7702 set-code transactions,
# the BLS12-381 precompiles and the EIP-2935 history contract are not implemented.
PRAGUE = CANCUN.derive(
    "prague",
    calldata_floor_per_token=10,
    max_blobs_per_block=9,
    blob_base_fee_update_fraction=5007716,
)
# Osaka: CLZ (EIP-7939) and the transaction gas cap (EIP-7825); MODEXP repricing lives in the
# precompile table. Blob-parameter-only forks are not modelled.
OSAKA = PRAGUE.derive("osaka", add={"CLZ": 5}, tx_gas_limit_cap=1 << 24)

FORKS: dict[str, Fork] = {f.name: f for f in (LONDON, PARIS, SHANGHAI, CANCUN, PRAGUE, OSAKA)}
DEFAULT_FORK = CANCUN


def get_fork(name: str) -> Fork:
    """Look a fork up by name (case-insensitive); raise ``ValueError`` naming the choices."""
    try:
        return FORKS[name.lower()]
    except KeyError:
        raise ValueError(
            f"unknown fork {name!r}; choose one of: {', '.join(FORKS)}"
        ) from None


assert all(op in OPS for op in CANCUN.opcodes)
