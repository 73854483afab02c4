"""Artifact names to creation code, for ``vm.getCode`` and ``vm.deployCode``.

Foundry resolves an artifact path against its build output; secant resolves it against the
compilations a :class:`~secant.chain.chain.TestChain` deployed from. Accepted forms:

* ``Name``: the contract called ``Name``;
* ``File.sol``: the contract of that file (the one named like the file when it has several);
* ``File.sol:Name`` or ``path/to/File.sol:Name``, optionally with a trailing compiler version
  (``File.sol:Name:0.8.24``, which is ignored);
* ``out/File.sol/Name.json``, Foundry's artifact path.

A file matches a source unit with that path or ending in ``/`` plus that path. The creation
code comes back linked with the libraries already on the chain; a contract that needs one
that is not deployed yet is an error (a library cannot be deployed in the middle of a
transaction).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from secant.compile.artifacts import Compilation, CompiledContract

__all__ = ["ArtifactError", "ArtifactResolver", "CodeResolver", "parse_artifact_name"]


class ArtifactError(LookupError):
    """An artifact name that resolves to no contract, to several, or to unlinkable code."""


def parse_artifact_name(name: str) -> tuple[str | None, str | None]:
    """Split an artifact name into (file, contract name); either may be None."""
    text = name.strip()
    if text.endswith(".json"):
        path = PurePosixPath(text)
        return (path.parent.name or None), path.stem
    parts = text.split(":")
    if len(parts) >= 2 and parts[0]:
        return parts[0], parts[1] or None
    if text.endswith((".sol", ".vy", ".yul")):
        return text, None
    return None, text or None


def _file_matches(source: str, wanted: str) -> bool:
    source = source.replace("\\", "/")
    wanted = wanted.replace("\\", "/").removeprefix("./")
    return source == wanted or source.endswith("/" + wanted)


@dataclass
class ArtifactResolver:
    """Creation code by artifact name, from the compilations a chain deployed from.

    ``compilations`` is read at each lookup (the chain appends to it as it deploys);
    ``libraries`` maps a library's qualified name to its address on the chain.
    """

    compilations: Sequence[Compilation]
    libraries: Mapping[str, int]

    def contract(self, name: str) -> CompiledContract:
        """The compiled contract ``name`` denotes (``ArtifactError`` if none or several)."""
        file, contract = parse_artifact_name(name)
        if file is None and contract is None:
            raise ArtifactError("an empty artifact name")
        candidates = [c for compilation in self.compilations for c in compilation.contracts
                      if not c.creation.empty
                      and (file is None or _file_matches(c.source, file))
                      and (contract is None or c.name == contract)]
        if contract is None and len(candidates) > 1 and file is not None:
            stem = PurePosixPath(file).stem
            candidates = [c for c in candidates if c.name == stem] or candidates
        unique: dict[tuple[str, str], CompiledContract] = {}
        for candidate in candidates:  # the same file compiled twice is one artifact
            unique.setdefault((candidate.qualified_name, candidate.creation.hex), candidate)
        if len(unique) == 1:
            return next(iter(unique.values()))
        if not unique:
            known = sorted({c.qualified_name for compilation in self.compilations
                            for c in compilation.contracts if not c.creation.empty})
            raise ArtifactError(f"no artifact {name!r} (compiled: {', '.join(known) or 'none'})")
        names = ", ".join(sorted({c.qualified_name for c in unique.values()}))
        raise ArtifactError(f"artifact name {name!r} is ambiguous ({names}); "
                            "use File.sol:Name")

    def creation_code(self, name: str) -> bytes:
        """The linked creation code of artifact ``name`` (``ArtifactError`` if unavailable)."""
        chosen = self.contract(name)
        code = chosen.creation
        if not code.link_references:
            try:
                return code.to_bytes()
            except ValueError as exc:
                raise ArtifactError(f"{chosen.qualified_name}: {exc}") from None
        missing = [r.qualified_name for r in code.link_references
                   if r.qualified_name not in self.libraries and r.library not in self.libraries]
        if missing:
            raise ArtifactError(f"{chosen.qualified_name} links against "
                                f"{', '.join(missing)}, which is not deployed")
        return code.link(dict(self.libraries))

    def __call__(self, name: str) -> bytes:
        """Same as :meth:`creation_code` (a resolver is a callable)."""
        return self.creation_code(name)


CodeResolver = Callable[[str], bytes]
"""Artifact name -> creation code; raises ``ArtifactError`` (or ``LookupError``)."""
