"""The verdict that ends every run: did tuning help, by how much, and what was written.

Built on the default check (searchlab.run.confirm: the default measured beside the best, paired
speed-up with its 95 % interval; Futhark: the same on the validation datasets), in the
problem's own units, one time unit per run (chosen from the best objective's size), with the
stop reason in words and, where the optimum is known (replays), the fraction of it reached.
Printed last and stored as ``summary.json``'s ``verdict`` (docs/measurement.md, "Verdict").
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from searchlab.core.speedup import confirmed_choice, show_interval, show_ratio, show_speedup
from searchlab.core.units import run_time_unit, show
from searchlab.run.confirm_report import default_was_best


def stop_words(reason: str, evaluations: int, budget: int | None, space_size: int | None, distinct: int) -> str:
    """A stop reason as a sentence ("exhausted" -> "every configuration in the space was measured")."""
    of = f"{evaluations} of {budget}" if budget else f"{evaluations}"
    why = {
        "evaluations": "the evaluation budget was used",
        "wall_time": "the wall-time budget (budget.wall_time_s) ran out",
        "charged_time": "the charged-time budget (budget.charged_time_s) ran out",
        "target": "the target objective (budget.target) was reached",
        "failure_rate": "too many evaluations failed (budget.max_failure_rate)",
        "infeasible_proposals": "the searcher kept proposing known-infeasible configurations "
                                "(budget.max_infeasible_proposals)",
        "stalled": "the searcher proposed nothing while nothing was running",
        "same_failures": "the program failed the same way every time (budget.max_same_failures): it does not "
                         "build or run",
        "interrupted": "interrupted (Ctrl-C or SIGTERM); every finished evaluation is kept",
    }.get(reason, reason)
    if reason == "exhausted":
        why = ("every configuration in the space was measured" if space_size and distinct >= space_size
               else "the searcher had nothing left to propose (its plan was complete)")
    return f"stopped at {of} evaluations: {why}"


def _interval(c: Mapping[str, Any]) -> str:
    lo, hi = c["ci95"]
    return "(exact)" if lo == hi else show_interval(lo, hi, c["speedup"])


def _x(c: Mapping[str, Any]) -> str:
    """The speed-up in the digits of its interval (searchlab.core.speedup.ratio_digits)."""
    lo, hi = c["ci95"]
    return show_speedup(c["speedup"], lo, hi)[0]


def change_words(name: str, c: Mapping[str, Any], base: str) -> str:
    """One dataset's (or the total's) paired speed-up in words: faster, slower, or undecided (the
    interval holds 1; a decided "no difference" is said by :func:`decision_words`)."""
    s, (lo, hi) = c["speedup"], c["ci95"]
    if lo > 1:
        return f"{_x(c)}x faster than {base} on {name} {_interval(c)}"
    if hi < 1:
        return f"{show_ratio(1 / s, 2)}x slower than {base} on {name} (speed-up {_x(c)} {_interval(c)})"
    if lo == hi:
        return f"no change on {name} ({_x(c)}x {_interval(c)})"
    return f"undecided on {name} ({_x(c)}x {_interval(c)})"


def comparison_words(c: Mapping[str, Any], base: str) -> str:
    where = "validation datasets" if c.get("basis") == "validation" else "tuning datasets"
    parts = [change_words(d, v, base) for d, v in c.get("datasets", {}).items()]
    total = change_words(f"the {where}" + (" (summed)" if len(parts) > 1 else ""), c, base)
    pairs = c.get("pairs", 0)
    kind = "anytime 95 % intervals" if c.get("method") else "95 % intervals"
    note = f" ({kind} over {pairs} paired rounds)" if pairs > 1 else ""
    return "; ".join([*parts, total] if len(parts) > 1 else [total]) + note


def next_step(c: Mapping[str, Any], equivalence: float, load: Mapping[str, Any] | None = None) -> str:
    """What an undecided comparison needs: the interval, and what to do next (more rounds, a quieter
    machine: named when the run saw other processes on its cores, searchlab.run.load)."""
    band = f" nor lies within 1 ± {equivalence:.2f}" if equivalence > 0 else ""
    busy = ""
    if load and load.get("busy_cores"):
        busy = f" (this one was busy: other processes held {load['busy_cores']} of {load['cores']} cores)"
    return (f"undecided after {c.get('pairs', 0)} paired rounds: the speed-up {_x(c)}x {_interval(c)} "
            f"neither excludes 1{band}; to decide, allow more rounds (confirm.max_rounds, confirm.max_time_s) "
            f"or run on a quieter machine{busy}")


DEFAULT_BEST = "your default was the search's best single measurement"


def _not_compared(s: Mapping[str, Any]) -> str:
    """A run with a default whose comparison did not happen: interrupted first, or the phase was off."""
    default = ", ".join(f"{k}={v}" for k, v in (s.get("default_config") or {}).items()) or "the default"
    if s.get("stop_reason") == "interrupted":
        return (f"interrupted before the comparison with your default ({default}): nothing recommended, nothing "
                "written; resume the run to compare")
    return (f"not compared with your default ({default}): the confirm phase was off (confirm.k=0 or "
            "confirm.rounds=0), so nothing is recommended")


def _which(confirm: Mapping[str, Any]) -> str:
    best = confirm.get("best") or {}
    k = len(confirm.get("candidates") or [])
    return confirmed_choice(int(best.get("rank", 1)), k) if k else "the best"


def _decision(s: Mapping[str, Any], unit: tuple[str, float]) -> str:
    """The decision first (what is recommended or written, and why), then the comparison with the
    default per dataset, one line each."""
    report, confirm = s.get("report") or {}, s.get("confirm") or {}
    name = s["objective_name"]
    if "recommended" in report:  # an adapter that writes a file (Futhark): its comparison decides
        c = report.get("versus_default")
        config = ", ".join(f"{k}={v}" for k, v in sorted(report.get("tuned", {}).items()))
        details = f"tuned vs untuned: {comparison_words(c, 'untuned')}" if c else ""
        training = confirm.get("versus_default")
        if c and training and c.get("basis") == "validation":  # the confirm phase's comparison, as printed above
            details += f"\nconfirm phase (tuning datasets): {comparison_words(training, 'untuned')}"
        if report["recommended"]:
            head = f"wrote {Path(report['tuning_file']).resolve()}: {report.get('chosen')} ({config})"
            if report.get("use_command"):
                head += f"\nuse it: {report['use_command']}"
        else:
            candidate = Path(str(report.get("candidate_tuning_file"))).resolve()
            why = str(report.get("recommendation"))
            if why.startswith("undecided") and c:
                why = next_step(c, float(confirm.get("equivalence") or 0), s.get("load"))
            if default_was_best(confirm):
                why = f"{DEFAULT_BEST}; {why}"
            head = (f"kept the default: {why}, so no .tuning file was written; the best found ({config}) is in "
                    f"{candidate}")
            if report.get("check_command"):
                head += f"\ncheck it later: {report['check_command']}"
        return "\n".join(x for x in (head, details) if x)
    if "tuned_is_default" in report:  # problem=searcher_settings: settings against the defaults on training tables
        return _settings_decision(report)
    c, best = confirm.get("versus_default"), confirm.get("best")
    if confirm.get("default") is None and s.get("default_config") is not None:
        return _not_compared(s)
    if confirm.get("default") is None:
        if best is not None:
            return (f"confirmed best {show(name, best['median'], unit)} {_ci(name, best, unit)}; "
                    "the problem has no default configuration to compare with")
        return "the problem has no default configuration to compare with"
    if c is None:
        return "keep the default: no other configuration was measured successfully against it"
    from searchlab.core.speedup import recommended

    config = s["best"]["description"] if best is None else ", ".join(f"{k}={v}" for k, v in best["config"].items())
    details = f"tuned vs the default: {comparison_words(c, 'the default')}"
    decided = confirm.get("decision")
    k = len(confirm.get("candidates") or [])
    if recommended(c):
        return f"recommended: {_which(confirm)} ({config})\n{details}"
    first = f"{DEFAULT_BEST}, and " if default_was_best(confirm) else ""
    if decided == "slower":
        return (f"keep the default: {first}even the fastest of the {k} re-measured is measurably slower than the "
                f"default ({config})\n{details}")
    if decided == "equivalent":
        return (f"keep the default: {first}no difference from the default (the interval lies within "
                f"1 ± {confirm.get('equivalence', 0):.2f}; best candidate: {config})\n{details}")
    if decided == "undecided":
        first = f"{DEFAULT_BEST}; " if first else ""
        return (f"undecided, so the default is kept: {first}"
                f"{next_step(c, float(confirm.get('equivalence') or 0), s.get('load'))} "
                f"(best candidate: {config})\n{details}")
    return (f"keep the default: {first}nothing measurably faster than the default was found (best candidate: "
            f"{config})\n{details}")


def _settings_decision(report: Mapping[str, Any]) -> str:
    def score(key: str) -> str:
        value = report.get(key)
        return "not scored" if value is None else f"{value:.4f}"

    scores = f"training score: defaults {score('default_score')}, the search's best {score('search_best_score')}"
    if report["tuned_is_default"]:
        return (f"keep the defaults ({' '.join(report['tuned_overrides'])}): the search's best did not score above "
                f"them on the training tables; {scores}")
    return (f"recommended: {' '.join(report['tuned_overrides'])}, above the defaults on the training tables "
            f"({scores}); judge it on tables it was not tuned on (a study's tune: rows)")


def _ci(name: str, entry: Mapping[str, Any], unit: tuple[str, float]) -> str:
    lo, hi = entry["ci95"]
    return f"[{show(name, lo, unit)}, {show(name, hi, unit)}]"


def build_verdict(s: Mapping[str, Any], budget: int | None, space_size: int | None, distinct: int) -> str:
    """The verdict of summary ``s`` (lines: decision, then search outcome)."""
    best = s.get("best")
    if best is None:
        return (f"no configuration was measured successfully; nothing recommended, nothing written; "
                f"{stop_words(s['stop_reason'], s['evaluations'], budget, space_size, distinct)}")
    name = s["objective_name"]
    unit = run_time_unit(name, best["objective"])
    second = f"search: best {show(name, best['objective'], unit)} at evaluation {best['evaluation']}"
    optimum = s.get("known_optimum")
    if isinstance(optimum, (int, float)) and best["objective"]:
        minimize = s.get("direction", "minimize") == "minimize"
        fraction = optimum / best["objective"] if minimize else best["objective"] / optimum
        second += f" ({fraction:.3f} of the known optimum {show(name, optimum, unit)})"
    second += "; " + stop_words(s["stop_reason"], s["evaluations"], budget, space_size, distinct)
    return f"{_decision(s, unit)}\n{second}"
