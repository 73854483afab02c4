"""secant: a greybox fuzzer for Ethereum smart contracts."""

__version__ = "0.1.0"
