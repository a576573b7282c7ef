"""Tests of searchlab.study (tests/ mirrors the package layout)."""
