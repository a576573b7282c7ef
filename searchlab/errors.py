"""Typed errors.

Each error subclasses the built-in a caller would naturally catch (Nevergrad's habit):
bad configuration values are ``ValueError``, unknown ids ``KeyError``, a space a searcher
cannot work on ``TypeError``. Every message names the offending value and the rule.
"""

from __future__ import annotations


class SearchlabError(Exception):
    """Base of every error searchlab raises on purpose."""

    exit_status = 2  # the CLI's exit status: 2 for bad input


class ConfigError(SearchlabError, ValueError):
    """A configuration value breaks a rule (negative budget, unknown knob, ...)."""


class InvalidConfigError(SearchlabError, ValueError):
    """A candidate configuration is not a member of its space."""


class IncompatibleError(SearchlabError, TypeError):
    """A searcher cannot work on a problem (space kind or missing capability)."""


class UnknownCandidateError(SearchlabError, KeyError):
    """``tell`` got a result whose candidate id was never asked."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class DuplicateResultError(SearchlabError, ValueError):
    """``tell`` got a second result for a candidate id."""


class ExecutorError(SearchlabError, RuntimeError):
    """Workers could not be started or placed (never raised for a failed evaluation)."""


class StoreError(SearchlabError, RuntimeError):
    """A run directory or database cannot be used (missing, broken, other run)."""


class EvaluationError(SearchlabError, RuntimeError):
    """Raised by a problem's ``evaluate`` to report a classified failure.

    The worker turns it into a ``FAILED`` measurement with this mode, so exceptions cross
    the worker boundary once and become a typed status.
    """

    def __init__(self, mode: object, message: str) -> None:
        super().__init__(message)
        self.mode = mode
        self.message = message


class WriteError(StoreError):
    """Records could not be written (a full disk); the message says what was kept.

    Not the user's input, so the CLI exits with status 1 rather than 2.
    """

    exit_status = 1


def did_you_mean(value: object, choices: object) -> str:
    """``" (did you mean 'random'?)"`` for a misspelt name, else ``""``: the hint cargo and git give.

    ``difflib``'s ratio with its default cutoff (0.6) finds transpositions and one- or two-letter
    slips (``randmo`` -> ``random``) without suggesting unrelated names."""
    import difflib

    names = [str(c) for c in choices] if isinstance(choices, (list, tuple, set, frozenset, dict)) else []
    close = difflib.get_close_matches(str(value), names, n=2)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def append_hint(exc: BaseException) -> str:
    """``"; to add it, use +searchers.auto=auto"`` when Hydra refused to override a key that a plain dict may
    gain (a study's ``searchers``), else ``""`` (issue 46, item 4): Hydra's own hint ("To append to your config
    use +...") is on a line of its own that a one-line message drops, and a schema's options cannot be added."""
    import dataclasses
    import re

    found = re.search(r"To append to your config use (\+\S+)", str(exc))
    cause: BaseException | None = exc
    while cause is not None:
        schema = getattr(cause, "object_type", None)
        if isinstance(schema, type) and dataclasses.is_dataclass(schema):
            return ""
        cause = cause.__cause__
    return f"; to add it, use {found.group(1)}" if found else ""
