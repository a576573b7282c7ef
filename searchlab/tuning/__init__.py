"""Tuning the tuner: ``problem=searcher_settings`` tunes one searcher's settings by replaying it on
training tables (issue 23; docs/tuning.md). It runs searches, so it sits above the run layer
(issue 21) and is registered through searchlab's built-in entry points, not the adapters' bundle."""

from searchlab.tuning.searcher_settings import SearcherSettings

SCHEMAS: dict[str, type] = {"searcher_settings": SearcherSettings}

__all__ = ["SCHEMAS", "SearcherSettings"]
