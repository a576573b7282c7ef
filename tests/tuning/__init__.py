"""Tests of searchlab.tuning (tests/ mirrors the package layout)."""
