"""Tests of searchlab.adapters (tests/ mirrors the package layout)."""
