"""Tests of searchlab.searchers (tests/ mirrors the package layout)."""
