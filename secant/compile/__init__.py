"""Contracts in: compilers (solc native / solc-js, Vyper), project artifacts, source maps.

The types deployment and reports consume:

- :class:`Compilation`: contracts and sources of one compiler run; ``main_contract()``,
  ``locate(contract, pc)``.
- :class:`CompiledContract`: ABI, creation/runtime :class:`Bytecode`, kind, AST ids.
- :class:`Bytecode`: hex with library placeholders, :class:`LinkReference` s,
  :class:`ImmutableReference` s, source map; ``link()`` and ``to_bytes()``.
- :class:`SourceLocation`: ``file:line:column`` plus function and contract of a pc.

Entry points: :func:`load` for any input, :func:`compile_files` for Solidity files;
:func:`compile_options_for` merges command-line choices with a project's compiler settings.
"""

from secant.compile.artifacts import (
    Bytecode,
    Compilation,
    CompiledContract,
    ImmutableReference,
    LinkReference,
)
from secant.compile.errors import (
    CompilationFailed,
    CompilerUnavailable,
    InputError,
    NoDeployableContract,
    PragmaUnsatisfiable,
    ToolMissing,
    UnknownContract,
)
from secant.compile.loader import LoadOptions, load, select_contract
from secant.compile.project import compile_options_for
from secant.compile.solc import SolcManager
from secant.compile.solidity import CompileOptions, compile_files
from secant.compile.srcmap import PcMapper, SourceFile, SourceLocation, SourceMapEntry

__all__ = [
    "Bytecode",
    "CompilationFailed",
    "Compilation",
    "CompileOptions",
    "CompiledContract",
    "CompilerUnavailable",
    "ImmutableReference",
    "InputError",
    "LinkReference",
    "LoadOptions",
    "NoDeployableContract",
    "PcMapper",
    "PragmaUnsatisfiable",
    "SolcManager",
    "SourceFile",
    "SourceLocation",
    "SourceMapEntry",
    "ToolMissing",
    "UnknownContract",
    "compile_files",
    "compile_options_for",
    "load",
    "select_contract",
]
