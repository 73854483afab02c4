"""The user cache directory and the compiler-output cache keyed by content hash."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from secant.files import write_atomic


def cache_root() -> Path:
    """``$SECANT_CACHE``, else ``$XDG_CACHE_HOME/secant``, else ``~/.cache/secant``."""
    env = os.environ.get("SECANT_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "secant"


def content_key(*parts: Any) -> str:
    """Return a sha256 hex digest of the canonical JSON of ``parts``."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class OutputCache:
    """Compiler outputs stored as JSON files named by the hash of compiler and input."""

    def __init__(self, directory: Path | None = None, enabled: bool = True) -> None:
        self.directory = directory if directory is not None else cache_root() / "outputs"
        self.enabled = enabled

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the stored output for ``key``, or None (also when unreadable)."""
        if not self.enabled:
            return None
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, output: dict[str, Any]) -> None:
        """Store ``output`` under ``key`` (errors writing the cache are ignored)."""
        if not self.enabled:
            return
        try:
            write_atomic(self._path(key), json.dumps(output, separators=(",", ":")))
        except OSError:
            pass
