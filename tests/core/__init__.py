"""Tests of searchlab.core (tests/ mirrors the package layout)."""
