"""Instruction implementations, one small function per opcode.

Every handler has the signature ``handler(stack, frame, arg)``. ``arg`` is fixed at analysis
time (a PUSH's value, a DUP's depth, the instruction's pc, ...). Static gas and stack bounds
are checked once per basic block by the frame loop (``analysis.py``), so handlers charge only
dynamic gas. Sections follow the execution specs: STACK, GAS, OPERATION, PROGRAM COUNTER.
"""
