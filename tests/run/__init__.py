"""Tests of searchlab.run (tests/ mirrors the package layout)."""
