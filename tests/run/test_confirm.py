"""The confirm phase (searchlab.run.confirm): recorded, not charged, not told, resumable; and
replay noise (searchlab.adapters.table): seeded, reproducible, drawn from the recorded samples."""

from __future__ import annotations

import json
import sqlite3
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from searchlab.adapters.knobs import KernelTunerCache, load_kernel_tuner_cache
from searchlab.adapters.table import TableProblem
from searchlab.core.records import Config, Measurement, Status
from searchlab.core.store import read_run
from searchlab.errors import ConfigError
from searchlab.run.confirm import ConfirmConfig
from searchlab.run.lifecycle import execute
from searchlab.run.summary import format_summary
from searchlab.study.execution.grid import _compose_run
from tests.doubles import register_problem

KT = Path(__file__).parents[1] / "data" / "kt_convolution_A100_small.json.gz"
INTERRUPT_AT: dict[str, int] = {}  # evaluate() call number at which InterruptingCache raises KeyboardInterrupt


class InterruptingCache(KernelTunerCache):
    """A noisy replay whose N-th evaluation is interrupted (Ctrl-C in the middle of a phase)."""

    calls = 0

    def evaluate(self, config: Config) -> Measurement:
        InterruptingCache.calls += 1
        if InterruptingCache.calls == INTERRUPT_AT.get("n"):
            raise KeyboardInterrupt
        return super().evaluate(config)



@pytest.fixture
def registered_double(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only registered classes are built from a config (searchlab.registry): register the test double."""
    register_problem(monkeypatch, "interrupting_cache", InterruptingCache, "tests/run/test_confirm.py")


def _run(run_dir: Path, *overrides: str, target: str | None = None) -> dict[str, Any]:
    cfg = _compose_run(["problem=kernel_tuner_cache", f"problem.path={KT}", "searcher=random", "executor=serial",
                        "progress=off", *overrides])
    if target:
        cfg["problem"]["_target_"] = target
    return execute(cfg, run_dir, quiet=True)


def _rows(run_dir: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(run_dir / "results.db") as conn:
        return conn.execute("SELECT candidate_id, config_key, meta, objective, charged_s FROM evaluations"
                            " ORDER BY id").fetchall()


def test_confirm_phase_is_recorded_not_charged_and_reported(tmp_path: Path) -> None:
    summary = _run(tmp_path / "run", "problem.sample_noise=true", "budget.evaluations=20", "confirm.k=3",
                   "confirm.rounds=4", "seed=3")
    rows = _rows(tmp_path / "run")
    search = [r for r in rows if r[0] >= 0]
    confirm = [r for r in rows if r[0] < 0]
    assert len(search) == 20 and summary["evaluations"] == 20 and summary["stop_reason"] == "evaluations"
    assert len(confirm) == 12 and all(json.loads(r[2])["phase"] == "confirm" for r in confirm)
    assert summary["charged_time_s"] == pytest.approx(sum(r[4] for r in search))  # confirmations cost the budget nothing
    _info, results = read_run(tmp_path / "run")  # what studies read: the search only
    assert [r.id for r in results] == [r[0] for r in search]
    # round-robin: every round measures the three candidates before the next round starts
    rounds = [json.loads(r[2])["round"] for r in confirm]
    assert rounds == sorted(rounds) and rounds.count(0) == 3
    # the three best distinct configurations, from the raw rows (not from top_k: the code under test)
    best_of: dict[str, tuple[float, int]] = {}
    for cid, key, _meta, objective, _charged in search:
        if objective is not None and (key not in best_of or objective < best_of[key][0]):
            best_of[key] = (objective, cid)
    expected = sorted(best_of, key=lambda k: best_of[k])[:3]
    c = summary["confirm"]
    assert [Config(e["config"]).key for e in c["candidates"]] == expected
    assert [e["search_objective"] for e in c["candidates"]] == [best_of[k][0] for k in expected]
    assert c["complete"] and all(e["samples"] == 4 and e["measurements"] == 4 for e in c["candidates"])
    best = c["best"]
    mine = [r[3] for r in confirm if r[1] == Config(best["config"]).key]
    assert best["median"] == pytest.approx(statistics.median(mine))
    assert best["ci95"][0] <= best["median"] <= best["ci95"][1]
    assert best["median"] == min(e["median"] for e in c["candidates"])
    text = format_summary(summary, tmp_path / "run")
    assert "re-measured best" in text and "95% CI" in text


def test_confirm_runs_by_default_only_where_measurements_are_noisy(tmp_path: Path) -> None:
    plain = _run(tmp_path / "plain", "budget.evaluations=5")
    assert plain["confirm"] is None and len(_rows(tmp_path / "plain")) == 5
    assert plain["noise"]["median_cv"] > 0  # the recorded samples still say how noisy the table was
    off = _run(tmp_path / "off", "budget.evaluations=5", "problem.sample_noise=true", "confirm.k=0")
    assert off["confirm"] is None
    forced = _run(tmp_path / "forced", "budget.evaluations=5", "confirm.force=true", "confirm.rounds=2")
    assert forced["confirm"]["complete"] and len(_rows(tmp_path / "forced")) == 5 + 3 * 2
    with pytest.raises(ConfigError, match="confirm.k=-1"):
        ConfirmConfig(k=-1)


@pytest.mark.usefixtures("registered_double")
def test_resume_after_an_interrupted_confirm_phase(tmp_path: Path) -> None:
    target = f"{__name__}.InterruptingCache"
    INTERRUPT_AT["n"] = 10 + 5  # the 5th confirmation measurement (round 1, second candidate)
    InterruptingCache.calls = 0
    with pytest.raises(KeyboardInterrupt):  # an interrupted confirm phase interrupts the run (issue 47, case 4)
        _run(tmp_path / "run", "problem.sample_noise=true", "budget.evaluations=10", "confirm.k=3",
             "confirm.rounds=3", target=target)
    first = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert first["status"] == "interrupted" and first["stop_reason"] == "interrupted"
    before = _rows(tmp_path / "run")
    assert len([r for r in before if r[0] < 0]) == 4
    INTERRUPT_AT.clear()
    second = execute(_compose_run([f"resume={tmp_path / 'run'}", "progress=off"]), tmp_path / "run", quiet=True,
                     overrides=[f"resume={tmp_path / 'run'}", "progress=off"])
    after = _rows(tmp_path / "run")
    assert after[: len(before)] == before  # nothing recorded was lost or rewritten
    search, confirm = [r for r in after if r[0] >= 0], [r for r in after if r[0] < 0]
    assert len(search) == 10 and second["evaluations"] == 10  # the searcher was not told the confirmations
    pairs = [(json.loads(r[2])["round"], r[1]) for r in confirm]
    assert len(pairs) == 9 and len(set(pairs)) == 9  # only the missing (round, configuration) pairs
    assert len({r[0] for r in confirm}) == 9  # fresh ids
    assert second["confirm"]["complete"] and all(e["measurements"] == 3 for e in second["confirm"]["candidates"])


def test_replay_noise_draws_recorded_samples_reproducibly() -> None:
    table = load_kernel_tuner_cache(KT)
    config, row = next((c, m) for c, m in table.rows.items() if m.status is Status.OK)
    assert len(row.samples) == 32 and statistics.fmean(row.samples) == pytest.approx(row.objective)  # kept

    def draws(seed: int, order: list[Config], n: int = 40) -> list[float]:
        problem = TableProblem(table, sample_noise=True, noise_seed=seed)
        out = []
        for _ in range(n):
            for c in order:
                value = problem.evaluate(c).objective
                if c == config:
                    out.append(value)
        return out

    other = next(c for c, m in table.rows.items() if m.status is Status.OK and c != config)
    a = draws(1, [config])
    assert all(v in row.samples for v in a) and len(set(a)) >= min(5, len(set(row.samples)))  # recorded samples
    assert a == draws(1, [other, config])  # reproducible, whatever else was evaluated in between
    assert a != draws(2, [config])  # the seed matters
    m = TableProblem(table, sample_noise=True, noise_seed=1).evaluate(config)
    assert m.samples == (m.objective,) and m.extra["recorded_objective"] == row.objective
    assert TableProblem(table).evaluate(config) is row  # off by default: the recorded value


def test_replay_noise_seed_defaults_to_the_run_seed(tmp_path: Path) -> None:
    _run(tmp_path / "a", "problem.sample_noise=true", "budget.evaluations=3", "seed=5", "confirm.k=0")
    info, _ = read_run(tmp_path / "a")
    assert info["config"]["problem"]["noise_seed"] == 5
    problem = KernelTunerCache(str(KT), sample_noise=True, noise_seed=5)
    assert problem.noisy and not KernelTunerCache(str(KT)).noisy


def test_a_replay_without_differing_samples_is_not_noisy() -> None:
    table = load_kernel_tuner_cache(KT)
    flat = replace(table, rows={c: replace(m, samples=(m.objective,) if m.objective is not None else ())
                                for c, m in table.rows.items()})
    problem = TableProblem(flat, sample_noise=True, noise_seed=0)
    assert not problem.noisy  # nothing to draw: no confirm phase by default
    config, row = next((c, m) for c, m in flat.rows.items() if m.objective is not None)
    assert problem.evaluate(config).objective == row.objective


def test_knob_table_replays_recorded_launch_times() -> None:
    from searchlab.adapters.knobs import KnobTable

    recorded = Path(__file__).resolve().parents[2] / "bench" / "results" / "probabilistic_tables" / "fir.json.gz"
    plain = KnobTable(str(recorded), arch="large_many")  # recorded with the former problem.runs=5
    noisy = KnobTable(str(recorded), arch="large_many", sample_noise=True, noise_seed=4)
    config, row = next((c, m) for c, m in plain.table.rows.items() if m.status is Status.OK and len(set(m.samples)) > 2)
    drawn = [noisy.evaluate(config) for _ in range(30)]
    assert all(m.objective in row.samples and m.sensors["time_s"] == m.objective for m in drawn)
    assert len({m.objective for m in drawn}) > 1 and noisy.noisy and not plain.noisy
    assert noisy.fingerprint() != plain.fingerprint()  # a study does not mix noisy and exact replays
