"""Foundry build artifacts: read ``out/`` (after ``forge build`` when asked and forge is on PATH).

secant compiles Foundry projects from source itself (:mod:`secant.compile.project`); these
artifacts are read instead when they are up to date.

Each artifact ``out/<File>.sol/<Contract>.json`` carries the ABI, creation and runtime code
with source maps, link and immutable references, method identifiers, the source's AST and its
source ``id``. Source ids are taken from ``out/build-info/*.json`` (``source_id_to_path``) when
present, else from each artifact's ``id`` and AST ``absolutePath``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from secant.abi import Abi
from secant.compile.artifacts import Bytecode, Compilation, CompiledContract, _contract_info, abi_of
from secant.compile.config import read_foundry
from secant.compile.errors import CompilationFailed, InputError
from secant.compile.srcmap import SourceFile


def forge_build(root: Path) -> None:
    """Run ``forge build`` in ``root``; CompilationFailed with forge's last error line."""
    forge = shutil.which("forge")
    if forge is None:
        return
    proc = subprocess.run([forge, "build"], cwd=root, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        detail = next((line for line in lines if "rror" in line), lines[-1] if lines else "")
        raise CompilationFailed(f"forge build failed in {root}: {detail.strip()}",
                                "fix the error reported by 'forge build' and retry")


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read artifact {path}: {exc}",
                         "delete the out/ directory and rebuild with 'forge build'") from None


def _metadata(artifact: dict[str, Any]) -> dict[str, Any]:
    meta = artifact.get("metadata")
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = None
    if not isinstance(meta, dict) and isinstance(artifact.get("rawMetadata"), str):
        try:
            meta = json.loads(artifact["rawMetadata"])
        except ValueError:
            meta = None
    return meta if isinstance(meta, dict) else {}


def load_foundry(root: Path, build: bool = True) -> Compilation:
    """Read a Foundry project's artifacts (building first when forge is available)."""
    root = root.resolve()
    project = read_foundry(root)
    if build:
        forge_build(root)
    out = root / project.out
    artifacts = sorted(p for p in out.glob("*/*.json")) if out.is_dir() else []
    if not artifacts:
        raise InputError(
            f"no Foundry artifacts under {out}",
            "run 'forge build' in the project (forge is not on PATH here)",
        )
    sources: dict[int, SourceFile] = {}
    for info in sorted((out / "build-info").glob("*.json")):
        data = _load_json(info)
        for key, name in (data.get("source_id_to_path") or {}).items():
            sources.setdefault(int(key), SourceFile(int(key), str(name), root / str(name)))
    entries: list[tuple[str, str, dict[str, Any], Abi]] = []
    compiler = ""
    for path in artifacts:
        if path.parent.name == "build-info":
            continue
        artifact = _load_json(path)
        if not isinstance(artifact, dict) or "abi" not in artifact:
            continue
        meta = _metadata(artifact)
        target = (meta.get("settings") or {}).get("compilationTarget") or {}
        ast = artifact.get("ast") if isinstance(artifact.get("ast"), dict) else None
        if target:
            source_name, name = next(iter(target.items()))
        else:
            source_name = str((ast or {}).get("absolutePath") or path.parent.name)
            name = path.stem.split(".")[0]
        compiler = compiler or str((meta.get("compiler") or {}).get("version", ""))
        source_id = artifact.get("id")
        if isinstance(source_id, int):
            known = sources.get(source_id)
            if known is None:
                sources[source_id] = SourceFile(source_id, source_name, root / source_name,
                                                ast=ast)
            elif known.ast is None and known.name == source_name:
                known.ast = ast
        entries.append((source_name, name, artifact, abi_of(artifact.get("abi") or [], path)))
    outline = _contract_info(sources)
    contracts = []
    for source_name, name, artifact, abi in sorted(entries, key=lambda e: (e[0], e[1])):
        details = outline.get((source_name, name), {})
        layout = artifact.get("storageLayout")
        contracts.append(CompiledContract(
            name=name, source=source_name, abi=abi,
            creation=Bytecode.from_json(artifact.get("bytecode")),
            runtime=Bytecode.from_json(artifact.get("deployedBytecode")),
            kind=details.get("kind", "contract"),
            method_identifiers=dict(artifact.get("methodIdentifiers") or {}),
            storage_layout=layout if isinstance(layout, dict) else None,
            ast_id=details.get("id"), base_ids=details.get("bases", ()),
            compiler=f"solc {compiler}" if compiler else "",
        ))
    roots = tuple(sorted({c.source for c in contracts if project.is_main(c.source)}))
    label = f"solc {compiler} (forge artifacts)" if compiler else "forge artifacts"
    return Compilation(contracts, sources, roots, label, "foundry")
