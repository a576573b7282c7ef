"""Every study ready for a paper (issue 45, item 3): a score range never runs past the budget unnoticed, provenance
of shipped defaults marked, figures as vectors sized for a paper, shipped studies complete, batches small.
Pure computation (no Ray, no signals): in the parallel part."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from searchlab.study.analysis import methodology as KT
from tests.study.test_study_data import make_run

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
KT_A100 = SHARED / "kernel_tuner" / "convolution_A100.json.gz"
AUTO = {"_target_": "searchlab.searchers.AutoSearcher"}
RANDOM = {"_target_": "searchlab.searchers.RandomSearcher"}


def _table(n: int = 2000, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).lognormal(0.0, 1.0, n)


def test_a_range_past_the_budget_is_clipped_to_it_and_says_from_where() -> None:
    values = _table()
    full = KT.score_range(values, True)
    assert full.end > 100  # the default cutoff needs more than 100 evaluations on this table
    best = np.minimum.accumulate(np.random.default_rng(1).choice(values, (5, 100)), axis=1)
    score, curve, rng = KT.methodology_score(values, True, best, budget=100)
    assert (rng.start, rng.end, rng.clipped_from) == (full.start, 100, full.end)
    assert curve.size == 100 - full.start + 1 and np.isfinite(score)
    assert rng.text() == f"{full.start}-100 (clipped from {full.start}-{full.end})"
    unclipped = KT.methodology_score(values, True, best, budget=full.end)[2]
    assert unclipped.clipped_from is None and unclipped.end == full.end


def test_a_budget_ending_before_the_range_is_refused_with_the_budget_needed() -> None:
    values = _table()
    full = KT.score_range(values, True, cutoff=0.95, start=0.5)
    best = np.minimum.accumulate(np.random.default_rng(1).choice(values, (3, full.start)), axis=1)
    with pytest.raises(ValueError, match=f"run at least {full.end} evaluations"):
        KT.methodology_score(values, True, best, start=0.5, budget=full.start)


def test_the_report_scores_over_the_clipped_range_and_notes_it(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from searchlab.study.analysis.aggregate import aggregate
    from searchlab.study.analysis.collect import collect_runs

    if not KT_A100.is_file():
        pytest.skip(f"no shared table at {KT_A100}")
    problem = {"_target_": "searchlab.adapters.knobs.KernelTunerCache", "path": str(KT_A100)}
    for seed in range(2):
        make_run(tmp_path / f"r{seed}", list(np.linspace(9.0, 3.0, 30) + seed), searcher="random", seed=seed,
                 problem_cfg=problem, searcher_cfg=RANDOM, known=None)
    data = aggregate(*collect_runs([tmp_path]))
    (row,) = data.rows
    assert row["kt_range"] == "2-30 (clipped from 2-1050)"  # the default cutoff's range on this table is 2-1050
    assert any("beyond the runs' budget of 30" in n and "budget.evaluations=1050" in n for n in data.notes)


def test_the_shared_tables_are_declared_once_by_content() -> None:
    from searchlab.core.provenance import SHARED_CONVOLUTION, file_digest
    from searchlab.searchers import AutoSearcher

    files = sorted(SHARED.glob("kernel_tuner/convolution_*.json.gz")) + sorted(
        SHARED.glob("benchmark_hub/cachefiles/convolution_milo/*_T4.json"))
    if len(files) != 8:
        pytest.skip(f"the shared tables are not under {SHARED}")
    assert {file_digest(f) for f in files} == {r.sha256 for r in SHARED_CONVOLUTION}
    assert set(SHARED_CONVOLUTION) <= set(AutoSearcher.defaults_chosen_on)


def test_a_copy_recompressed_elsewhere_is_still_recognised(tmp_path: Path) -> None:
    from searchlab.study.analysis.provenance import chosen_on

    if not KT_A100.is_file():
        pytest.skip(f"no shared table at {KT_A100}")
    copy = tmp_path / "renamed.json.gz"
    with gzip.open(KT_A100, "rb") as src, gzip.open(copy, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(src, dst)
    problem = {"_target_": "searchlab.adapters.knobs.KernelTunerCache", "path": str(copy)}
    assert chosen_on({"problem": problem, "searcher": AUTO}) == "convolution A100 (Kernel Tuner cache)"
    assert chosen_on({"problem": problem, "searcher": RANDOM}) == ""  # random's defaults were chosen on nothing
    other = tmp_path / "other.json"
    other.write_text("{}")
    assert chosen_on({"problem": {**problem, "path": str(other)}, "searcher": AUTO}) == ""


def test_a_dft_training_size_is_an_instance_that_chose_tag_scaled() -> None:
    from searchlab.study.analysis.provenance import chosen_on

    tag_scaled = {"_target_": "searchlab.searchers.TagScaledSearcher"}
    dft = {"_target_": "searchlab.adapters.grammar.DftProblem", "size": 4096}
    assert "dft training sizes" in chosen_on({"problem": dft, "searcher": tag_scaled})
    assert chosen_on({"problem": {**dft, "size": 10007}, "searcher": tag_scaled}) == ""  # held out


def test_report_and_summary_mark_the_cells_that_are_not_held_out(tmp_path: Path) -> None:
    from searchlab.study.analysis.aggregate import aggregate
    from searchlab.study.analysis.collect import collect_runs
    from searchlab.study.analysis.report import write_report

    if not KT_A100.is_file():
        pytest.skip(f"no shared table at {KT_A100}")
    problem = {"_target_": "searchlab.adapters.knobs.KernelTunerCache", "path": str(KT_A100)}
    for searcher, cfg in (("auto", AUTO), ("random", RANDOM)):
        for seed in range(2):
            make_run(tmp_path / "runs" / f"{searcher}{seed}", [5.0, 4.0, 3.0 - seed], searcher=searcher, seed=seed,
                     problem_cfg=problem, searcher_cfg=cfg)
    data = aggregate(*collect_runs([tmp_path / "runs"]))
    marks = {r["searcher"]: r["defaults_chosen_on"] for r in data.rows}
    assert marks == {"auto": "convolution A100 (Kernel Tuner cache)", "random": ""}
    paths = write_report(data, tmp_path / "out", {"name": "provenance"})
    for text in (paths["markdown"].read_text(), paths["html"].read_text()):
        assert "NO: defaults chosen on convolution A100 (Kernel Tuner cache)" in text
        assert "Provenance" in text and "NOT held out" in text


def test_figures_are_svg_and_png_sized_for_a_paper_and_no_title_is_cut(tmp_path: Path) -> None:
    from searchlab.core import figures as _plots

    long = "a_problem_label_long_enough_to_run_past_the_edge_of_any_figure_at_nine_points_" * 2
    with _plots.paper_style():
        fig, _ = _plots.axes(f"{long}: best so far vs evaluations", "evaluations", "fraction")
        png, svg = _plots.render(fig)
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        box = fig.axes[0].title.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width  # the title fits inside the figure
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    import io

    from PIL import Image

    width, height = Image.open(io.BytesIO(png)).size
    assert (width, height) == (round(_plots.WIDTH_IN * _plots.DPI), round(_plots.HEIGHT_IN * _plots.DPI))


def test_report_html_embeds_the_svgs_and_writes_both_files(tmp_path: Path) -> None:
    from searchlab.study.analysis.aggregate import aggregate
    from searchlab.study.analysis.collect import collect_runs
    from searchlab.study.analysis.report import write_report

    for seed in range(2):
        make_run(tmp_path / "runs" / f"a{seed}", [4.0, 2.0, 1.0 + seed], searcher="a", seed=seed, charged=1.0)
    paths = write_report(aggregate(*collect_runs([tmp_path / "runs"])), tmp_path / "out", {"name": "figures"})
    text = paths["html"].read_text()
    svgs = sorted((tmp_path / "out" / "figures").glob("*.svg"))
    assert svgs and len(svgs) == len(list((tmp_path / "out" / "figures").glob("*.png")))
    assert text.count("src='data:image/svg+xml;base64,") == len(svgs) and "image/png" not in text


def test_kt_replay_compares_auto() -> None:
    from searchlab.study.execution.config import compose_study

    assert "auto" in compose_study("kt_replay", []).searchers


def test_batches_are_a_few_runs_at_most() -> None:
    from searchlab.study.execution.batched import MAX_BATCH, batches
    from searchlab.study.execution.cells import Cell

    cells = [Cell("p", "s", seed, Path(f"r{seed}"), {}) for seed in range(400)]
    cut = batches(cells, 1)
    assert MAX_BATCH <= 4 and max(len(b) for b in cut) <= 4 and sum(len(b) for b in cut) == 400
