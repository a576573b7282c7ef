"""The decision-DAG view of constrained knob spaces steers searchers away from known-infeasible words."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchlab.adapters.knobs import KernelTunerCache
from searchlab.api import optimize
from searchlab.core.records import Config, Status
from searchlab.core.spaces import DerivationGraph, IntKnob, KnobSpace, view_as
from searchlab.run.loop import Budget
from searchlab.searchers import McSearcher, TagSearcher, UctSearcher

SMALL = Path(__file__).resolve().parents[2] / "tests" / "data" / "kt_convolution_A100_small.json.gz"


def test_dead_end_prefixes_are_pruned_and_counts_are_exact() -> None:
    # a=3 passes every constraint it can be checked against alone, but no b completes it.
    space = KnobSpace((IntKnob("a", 1, 3), IntKnob("b", 1, 2)), ("a * b <= 2", "b >= 1"))
    dag = view_as(space, [DerivationGraph]).space  # type: ignore[union-attr]
    assert [label for label, _ in dag.children(dag.root)] == ["a=1", "a=2"]
    assert dag.count_sinks() == len(list(space.enumerate())) == 3


def test_table_membership_is_decided_on_prefixes() -> None:
    problem = KernelTunerCache(path=str(SMALL))
    view = view_as(problem.space, [DerivationGraph])
    assert view is not None
    words = {view.decode(w) for w in view.space.enumerate()}
    assert words == {c for c in problem.table.rows}  # every word is a recorded member, and every member a word


@pytest.mark.parametrize("cls", [TagSearcher, McSearcher, UctSearcher])
def test_dag_searchers_spend_no_measurement_on_known_infeasible_table_configs(cls: type) -> None:
    problem = KernelTunerCache(path=str(SMALL))
    outcome = optimize(problem, cls(problem.space, direction=problem.direction, seed=1), Budget(evaluations=80))
    statuses = [r.measurement.status for r in outcome.results]
    assert len(statuses) == 80
    assert statuses.count(Status.INFEASIBLE) == 0
    assert all(isinstance(r.candidate.config, Config) for r in outcome.results)
