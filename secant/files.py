"""Files written so that a crash at any moment never leaves half of one behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` (or bytes) to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as raw:
                raw.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
