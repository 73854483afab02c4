# Sourced by bin/secant and bin/test: make sure .venv exists and matches pyproject.toml.
# Re-installs only when pyproject.toml changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"
stamp="$VENV/.secant-installed"
want="$(sha256sum "$ROOT/pyproject.toml" | cut -c1-64)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "secant: setting up $VENV (first run or dependencies changed)..." >&2
  "$PY" -m venv "$VENV"
  log="$VENV/install.log"
  if ! { "$VENV/bin/python" -m pip install -q --upgrade pip \
         && "$VENV/bin/python" -m pip install -q -e "$ROOT[dev]"; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "secant: installing Python packages failed (full log: $log); check network access to the package index and retry" >&2
    exit 2
  fi
  echo "$want" > "$stamp"
fi
