"""What both replay paths of a study share: Ray started or joined, tasks gathered, the head watched.

Ray is started with an explicit ``num_cpus`` only if it is not running, and shut down only by
the call that started it. On a cluster (issue 24) a lost head node ends the study with one line
(:class:`HeadLost`); every run written before is kept.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from searchlab.errors import ConfigError, SearchlabError


class StudyError(SearchlabError, RuntimeError):
    """Some cells of a study failed (the others are recorded; re-running resumes)."""


class HeadLost(StudyError):
    """The cluster's head node went away mid-study (what finished is kept)."""


RETRIES = 3  # Ray re-runs a task whose worker or node died; its result is written once
HEAD_GRACE_S = 5.0  # the head must stay unreachable this long before the study gives up


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _start_ray(workers: int | None, address: str | None) -> bool:
    """Start Ray unless it runs; True if this call started it (loopback only, token auth on).

    ``address``: join that cluster with token authentication (searchlab.run.execution._join).
    """
    from searchlab.run.cluster import local_ray_environment

    if not address:
        local_ray_environment()
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        return False
    if address:
        from searchlab.run.cluster import join_cluster

        join_cluster(address, "study.ray_address")
        return False
    if workers is not None and workers < 1:
        raise ConfigError(f"study.workers={workers}: must be a positive integer or null")
    from searchlab.run.cluster import start_local_ray

    start_local_ray(workers or _cores())  # the one local Ray start: loopback only, every process reaped
    return True


def _progress(done: int, total: int, record: dict[str, Any], before: int | None = None) -> None:
    step = max(1, total // 10)
    before = done - 1 if before is None else before
    if done == total or done // step > before // step:
        print(f"study: {done}/{total} runs done (last: {record['cell']}, {record['evaluations']} evaluations, "
              f"stopped on {record['stop']})", file=sys.stderr, flush=True)


def _gather(pending: dict[Any, Any], joined: bool, gcs: str, total: int,
            accept: Callable[[Any, Any], int], label: Callable[[Any], str]) -> None:
    """Wait for every task of ``pending`` (ref -> what it runs); ``accept`` writes a result and
    returns how many runs it finished. Failures are collected and raised at the end."""
    import ray

    done, errors, lost_since = 0, [], None
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
        if not ready:
            lost_since = _check_head(gcs, lost_since, done, total) if joined else None
            continue
        item = pending.pop(ready[0])
        try:
            outcome = ray.get(ready[0])
        except Exception as exc:
            cause = getattr(exc, "cause", None) or exc
            errors.append(f"{label(item)}: {type(cause).__name__}: {cause}")
            continue
        done += accept(item, outcome)
    if errors:
        raise StudyError(f"study: {len(errors)} replay task(s) failed (the others are recorded; re-run the study "
                         f"into the same directory to resume): " + " | ".join(errors[:5]))


def _check_head(gcs: str, lost_since: float | None, done: int, total: int) -> float | None:
    """None while the head answers; raises once it has been unreachable for HEAD_GRACE_S."""
    from searchlab.run.cluster import head_reachable

    if head_reachable(gcs):
        return None
    now = time.time()
    if lost_since is None:
        return now
    if now - lost_since < HEAD_GRACE_S:
        return lost_since
    raise HeadLost(f"study: the Ray cluster's head node ({gcs}) is gone; {done} of {total} runs were finished and "
                   f"are kept; restart the cluster and re-run the study into the same directory to resume")
