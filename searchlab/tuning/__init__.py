"""Tuning the tuner: ``problem=searcher_settings`` tunes one searcher's settings by replaying it on
training tables (issue 23; docs/tuning.md). It runs searches, so it sits above the run layer
(issue 21) and is registered through searchlab's built-in entry points, not the adapters' bundle."""

from searchlab.tuning._train import fraction_score, replay, train_table
from searchlab.tuning.searcher_settings import SearcherSettings

SCHEMAS: dict[str, type] = {"searcher_settings": SearcherSettings}

# replay one searcher on a training table and score it as the settings problem does (bench/tuner_folds.py)
__all__ = ["SCHEMAS", "SearcherSettings", "fraction_score", "replay", "train_table"]
