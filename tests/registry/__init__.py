"""Tests of searchlab.registry (tests/ mirrors the package layout)."""
