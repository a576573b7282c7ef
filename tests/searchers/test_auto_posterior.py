"""auto's incremental posterior (issue 53): appending observations one at a time is the same posterior as
conditioning on all of them at once, and a budget past the space ends when the space is used up."""

from __future__ import annotations

import itertools

import numpy as np

from searchlab.core.records import Config, Measurement, Result
from searchlab.core.spaces import IntKnob, KnobSpace
from searchlab.searchers import AutoSearcher
from searchlab.searchers._auto.posterior import Posterior


def _data(seed: int, n: int, m: int, d: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x, block = rng.random((n, d)), rng.random((m, d))
    y = np.sin(3 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.01 * rng.standard_normal(n)
    return x, y, block, np.array([0.4, 0.7, 1.3])


def test_appended_rows_equal_a_fresh_conditioning() -> None:
    """70 appends (past the initial capacity, so the factor grows) against one factorisation of all 70."""
    x, y, block, lengths = _data(0, 70, 50)
    grown = Posterior(block, lengths, 1.7, 1e-3)
    for row, target in zip(x, y):
        grown.add(row, float(target))
    fresh = Posterior.conditioned(block, lengths, 1.7, 1e-3, x, y)
    m1, s1, c1, _ = grown.mean_std()
    m2, s2, c2, _ = fresh.mean_std()
    assert np.allclose(m1, m2, atol=1e-7) and np.allclose(s1, s2, atol=1e-7) and c1 == c2
    # outside the block (computed afresh from the factor) agrees with the block's own numbers
    pm, ps = grown.predict(block[:5])
    assert np.allclose(pm, m1[:5], atol=1e-7) and np.allclose(ps, s1[:5], atol=1e-7)


def test_conditioning_shrinks_the_variance_where_observed() -> None:
    x, y, block, lengths = _data(1, 12, 30)
    post = Posterior.conditioned(np.vstack([block, x[:3]]), lengths, 1.0, 1e-4, x, y)
    _, std, _, _ = post.mean_std()
    assert std[-3:].max() < 0.05 < np.median(std[:30])


def test_fantasy_variance_is_a_fresh_posterior_with_the_pending_rows_and_leaves_the_posterior_unchanged() -> None:
    x, y, block, lengths = _data(2, 20, 40)
    post = Posterior.conditioned(block, lengths, 1.2, 1e-3, x[:17], y[:17])
    before = post.mean_std()
    var = post.fantasy_var(list(x[17:]))
    with_pending = Posterior.conditioned(block, lengths, 1.2, 1e-3, x, y)
    assert np.allclose(var, with_pending.mean_std()[1] ** 2, atol=1e-7)
    after = post.mean_std()
    assert post.n == 17 and all(np.array_equal(a, b) for a, b in zip(before[:2], after[:2]))


def test_a_budget_past_the_space_ends_when_every_configuration_was_proposed() -> None:
    """64 configurations, a budget of 256: 64 distinct proposals, then ``done`` and empty asks."""
    space = KnobSpace((IntKnob("a", 0, 7), IntKnob("b", 0, 7)))
    searcher = AutoSearcher(space, seed=0)
    searcher.set_budget(256)
    seen: set[Config] = set()
    for _ in range(256):
        batch = searcher.ask(1)
        if not batch:
            break
        cand = batch[0]
        seen.add(cand.config)
        a, b = cand.config["a"], cand.config["b"]
        assert isinstance(a, int) and isinstance(b, int)
        value = 1.0 + (a - 5) ** 2 + (b - 2) ** 2
        searcher.tell(Result(cand, Measurement.ok(value, samples=(value,))))
    assert len(seen) == 64 and searcher.done and searcher.ask(1) == []


def test_keeping_a_subset_of_the_block_is_exact_there_and_later_rows_stay_exact() -> None:
    """``keep`` (auto's ``focus``) leaves the posterior on the kept candidates as a conditioning on that subset."""
    x, y, block, lengths = _data(3, 40, 60)
    kept = np.array([3, 7, 11, 20, 41, 59])
    post = Posterior.conditioned(block, lengths, 1.3, 1e-3, x[:30], y[:30])
    post.keep(kept)
    for row, target in zip(x[30:], y[30:]):
        post.add(row, float(target))
    fresh = Posterior.conditioned(block[kept], lengths, 1.3, 1e-3, x, y)
    assert all(np.allclose(a, b, atol=1e-7) for a, b in zip(post.mean_std()[:2], fresh.mean_std()[:2]))


def test_hyperparameters_are_refitted_often_early_and_by_refit_growth_late() -> None:
    """The schedule (issue 53): by 1.25 below 40 observations, then by ``refit_growth``."""
    space = KnobSpace((IntKnob("a", 0, 20), IntKnob("b", 0, 20)))
    searcher = AutoSearcher(space, seed=0, refit_growth=3.0)
    model = searcher._model
    assert model is not None
    fits: list[int] = []
    for _ in range(150):
        cand = searcher.ask(1)[0]
        a, b = cand.config["a"], cand.config["b"]
        assert isinstance(a, int) and isinstance(b, int)
        value = 1.0 + (a - 13) ** 2 + 0.5 * (b - 4) ** 2
        searcher.tell(Result(cand, Measurement.ok(value, samples=(value,))))
        if not fits or model._fitted_at != fits[-1]:
            fits.append(model._fitted_at)
    early = [n for n in fits if 0 < n < 40]
    assert len(early) >= 5 and all(b <= 1.25 * a + 1 for a, b in itertools.pairwise(early))
    late = [n for n in fits if n >= 40]
    assert late and all(b >= 3 * a for a, b in itertools.pairwise(late)) and len(fits) <= 12


def test_blas_runs_on_one_thread_inside_and_as_before_afterwards_even_after_an_error() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    from searchlab.searchers._auto.blas import one_blas_thread

    def blas_threads() -> list[int]:
        return [int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]

    with threadpool_limits(limits=2, user_api="blas"):
        outside = blas_threads()
        with one_blas_thread():
            assert blas_threads() and set(blas_threads()) == {1}
        assert blas_threads() == outside
        try:
            with one_blas_thread():
                raise KeyError("inside")
        except KeyError:
            pass
        assert blas_threads() == outside
