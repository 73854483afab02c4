"""The chain side of secant: ABI encoding/decoding (the test chain comes later)."""
