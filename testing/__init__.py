"""Helpers for patchkit's tests and for tests of patch sets (kept apart from the package)."""
