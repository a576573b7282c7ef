"""problem.train takes live DFT specs (dft:N) beside tables, measured once into problem.cache (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchlab.errors import ConfigError
from searchlab.tuning import SearcherSettings
from searchlab.tuning._live import FORMAT


def test_a_live_spec_is_scored_and_its_plans_are_measured_once(tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    problem = SearcherSettings(searcher="tag_scaled", train=["dft:64"], seeds=2, budget=8, cache=str(cache))
    first = problem.score_settings({"exploration": 0.1, "quantile": 0.2})
    assert first.objective is not None and 0 < first.objective <= 1.5
    assert first.extra["plans_measured"] > 0 and "score_dft_64" in first.sensors
    again = problem.score_settings({"exploration": 0.1, "quantile": 0.2})
    assert again.extra["plans_measured"] == 0 and again.objective == first.objective  # cached: same numbers
    saved = json.loads(cache.read_text())
    assert saved["format"] == FORMAT and saved["entries"]["dft:64"]["reference"] > 0
    fresh = SearcherSettings(searcher="tag_scaled", train=["dft:64"], seeds=2, budget=8, cache=str(cache))
    assert fresh.score_settings({"exploration": 0.1, "quantile": 0.2}).extra["plans_measured"] == 0


@pytest.mark.parametrize("train, match", [(["dft:1"], "2 .. 2"), (["dft:64", "dft:64"], "named twice"), ([], "at least")])
def test_bad_live_specs_are_refused(train: list[str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SearcherSettings(searcher="tag_scaled", train=train)


def test_live_specs_need_the_fraction_score_and_a_dag_searcher() -> None:
    with pytest.raises(ConfigError, match="fraction only"):
        SearcherSettings(searcher="tag_scaled", train=["dft:64"], score="methodology")
    with pytest.raises(ConfigError, match="dft:64"):
        SearcherSettings(searcher="genetic", train=["dft:64"])


def test_a_cache_from_another_protocol_or_no_cache_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": FORMAT, "entries": {"dft:64": {"protocol": {"min_runs": 1}, "rows": {}}}}))
    with pytest.raises(ConfigError, match="another protocol"):
        SearcherSettings(searcher="tag_scaled", train=["dft:64"], cache=str(other))
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    with pytest.raises(ConfigError, match="not a searchlab live cache"):
        SearcherSettings(searcher="tag_scaled", train=["dft:64"], cache=str(junk))
