"""Tests of searchlab.cli (tests/ mirrors the package layout)."""
