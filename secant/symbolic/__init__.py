"""Concolic (symbolic shadow) execution over secant's EVM, and a solver for new test cases.

* ``semantics``: the EVM's stack operations on 256-bit z3 bit-vectors;
* ``shadow``: the tracker that runs beside the interpreter (the trace recorder's
  ``symbolic`` recording) and records the path condition of a test case;
* ``records``: what it records (``SymbolicRun``: branch records, concretisations, the
  transactions' messages, the variables' values in the run);
* ``abi_words``: which calldata word is which argument, and what values it may take;
* ``solve``: negate one branch record under the path condition before it and turn the
  model into a new test case (``flip_branch``).

docs/symbolic.md describes what is symbolic, what is concretised and the API. The package
imports z3; nothing imports it unless the ``symbolic`` recording or the solver is used.
"""
