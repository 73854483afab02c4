"""The whole suite's settings."""

from __future__ import annotations

import os

# Campaigns run with one worker unless a test asks for more: ``--workers`` defaults to the
# machine's cores, and a test's budget and findings must not depend on the machine.
os.environ.setdefault("SECANT_WORKERS", "1")
