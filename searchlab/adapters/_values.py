"""Knob values as integers: the knob problems' knobs are integer or ordinal-of-integer knobs.

Why a function: a configuration's values are typed as any scalar (or a tuple, for derivation
words), so ``int(config["tile"])`` needs a check the type checker can see; here it is, once.
"""

from __future__ import annotations

from searchlab.core.records import Config


def ints(config: Config, *names: str) -> tuple[int, ...]:
    """The values of ``names`` in ``config`` as ints (a TypeError names a value that is not a number)."""
    out: list[int] = []
    for name in names:
        value = config[name]
        if not isinstance(value, (int, float, str)):
            raise TypeError(f"knob {name}={value!r} is not a number")
        out.append(int(value))
    return tuple(out)
