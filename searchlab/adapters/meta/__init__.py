"""Problems about searchers: ``searcher_settings`` tunes one searcher's settings by replaying it
on training tables (issue 23; docs/tuning.md)."""

from searchlab.tuning.searcher_settings import SearcherSettings, SearcherSettingsConfig

SCHEMAS: dict[str, type] = {"searcher_settings": SearcherSettingsConfig}

__all__ = ["SCHEMAS", "SearcherSettings", "SearcherSettingsConfig"]
