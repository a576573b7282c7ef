"""The live view of a reproduce (issue 54, item 5): watch repeats arrive in optuna-dashboard while it runs.

A reproduce replays Kernel Tuner's strategies on recorded tables, thousands of evaluations a second, so a trial per
evaluation would cost more than the work (about 3 ms each: :mod:`searchlab.run.live`) and show nothing a person
follows. What a person follows is the comparison filling in: so each group (GPU x application x strategy) is one
Optuna study, and each finished repeat one trial, whose value is the best the repeat found and whose parameters are
that configuration (user attributes: repeat, seed, attempts, evaluations, valid evaluations, node). Comparing the
studies of one space in the dashboard shows each strategy's spread of outcomes as repeats finish.

It is opt-in (``--live`` or ``--live STORAGE``): the run's own view, ``live=``, is off for replayed tables by
default for the same reason. The writes go through :class:`searchlab.run.live.LiveStudy` (the one Optuna writer, on
a thread of its own; ``results.db`` stays the record of truth and is committed first; a failing view is one warning
and the run goes on). The default storage is the journal file ``live.log`` in the output directory. A resumed
reproduce opens new studies (``<group>-2``...) holding the repeats run in that session; ``results.db`` holds all.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from searchlab.core._rows import EVALUATION_COLUMNS
from searchlab.core.records import Candidate, Config, Direction, Measurement, Result, Status

__all__ = ["RepeatView", "best_of"]

JOURNAL = "live.log"
_CONFIG, _STATUS, _OBJECTIVE = (EVALUATION_COLUMNS.index(c) for c in ("config", "status", "objective"))


def best_of(rows: Sequence[Sequence[Any]], minimize: bool) -> tuple[Config | None, float | None, int]:
    """The best valid evaluation of a repeat's encoded rows (configuration, objective) and how many were valid."""
    best: tuple[Config | None, float | None] = (None, None)
    valid = 0
    for row in rows:
        value = row[_OBJECTIVE]
        if row[_STATUS] != Status.OK.value or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        valid += 1
        if best[1] is None or (value < best[1] if minimize else value > best[1]):
            best = (Config.from_json(row[_CONFIG]), float(value))
    return best[0], best[1], valid


class RepeatView:
    """One :class:`~searchlab.run.live.LiveStudy` per group, opened when its first repeat finishes."""

    def __init__(self, storage: str, root: Path) -> None:
        self.storage, self.root = storage, root
        self.session = time.strftime("%Y-%m-%dT%H:%M:%S")
        self._studies: dict[str, Any] = {}

    @classmethod
    def start(cls, setting: str | None, root: Path, quiet: bool) -> RepeatView | None:
        """The view ``--live`` asks for (None: off); prints the command that opens it."""
        if setting is None:
            return None
        from searchlab.run.live import check_live, dashboard_command

        text = check_live(setting)
        if text == "false":
            return None
        storage = str(root.resolve() / JOURNAL) if text in ("auto", "true") else \
            (text if "://" in text else str(Path(text).expanduser().resolve()))
        if "://" not in storage:
            Path(storage).parent.mkdir(parents=True, exist_ok=True)
            Path(storage).touch(exist_ok=True)
        if not quiet:
            print(f"searchlab reproduce: live view (a study per strategy and space, a trial per finished repeat) at "
                  f"http://127.0.0.1:8080 once you start: {dashboard_command(storage)}", file=sys.stderr, flush=True)
        return cls(storage, root)

    def repeat(self, group: Any, index: int, record: Any) -> None:
        """Repeat ``index`` of ``group`` is stored (``record``: its RunRecord): its best as a trial."""
        minimize = bool(group.space.minimization)
        config, value, valid = best_of(record.evaluations, minimize)
        study = self._studies.get(group.key) or self._open(group, minimize)
        m = Measurement(Status.OK, objective=value) if value is not None else \
            Measurement(Status.FAILED, message="no valid evaluation in this repeat")
        chosen = config if config is not None else Config()
        cfg: Mapping[str, Any] = record.config
        study.record(Result(Candidate(index, chosen, chosen), m, "kernel_tuner", str(group.space.gpu),
                            record.started, record.started, record.ended),
                     {"repeat": index, "seed": cfg.get("seed"), "attempts": cfg.get("attempts"), "node": record.node,
                      "evaluations": len(record.evaluations), "valid_evaluations": valid})

    def _open(self, group: Any, minimize: bool) -> Any:
        from searchlab.run.live import LiveStudy

        attrs = {"run_dir": f"{self.root.resolve()}#{self.session}", "problem": f"{group.space.gpu}/"
                 f"{group.space.application}", "searcher": group.name, "repeats": group.repeats, "status": "running",
                 "objective": "best of each repeat"}
        study = LiveStudy.open(self.storage, group.key, attrs=attrs,
                               direction=Direction.MINIMIZE if minimize else Direction.MAXIMIZE)
        self._studies[group.key] = study
        return study

    def close(self) -> None:
        for study in self._studies.values():
            study.finish({"status": "finished"})
            study.close()
