"""Detectors: one module per oracle, each reading a run and reporting findings.

The protocol is ``secant.engine.oracle.Oracle``; ``secant.oracles.registry`` lists the
built-in ones and builds a campaign's set by name.
"""
