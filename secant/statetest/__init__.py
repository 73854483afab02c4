"""Official Ethereum state tests (Cancun) run against secant's EVM.

:mod:`secant.statetest.fixtures` parses the JSON fixtures into typed cases and
:mod:`secant.statetest.runner` executes them and compares the outcome.
"""
