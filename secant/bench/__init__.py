"""Benchmarks that print figures (never gates on wall-clock time)."""
