"""Wrong-output messages a person can read (issue 27, item 2): plain numbers with got/want labels.

Why plain numbers: numpy's ``repr`` (``np.float64(0.1565...)``) and unlabeled ``a vs b`` make the
reader guess which side was measured and which was expected. Problems (adapters) write these
messages; the run's summary groups them (:mod:`searchlab.run.failures`).
"""

from __future__ import annotations

from typing import Any


def number(value: Any) -> str:
    """A value as a person writes it: 4 significant digits, no numpy type name."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{x:.4g}" if x == x else "nan"


def _index(flat: int, shape: tuple[int, ...]) -> str:
    import numpy as np

    if len(shape) <= 1:
        return str(flat)
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def wrong_output(got: Any, want: Any, bad: Any, tolerance: str) -> str:
    """``wrong output: got 0.1565 at index 12, want 0.5346 (tolerance 1e-4); 3 of 1024 values differ``.

    ``bad``: a boolean array of the values that failed the check (same shape as ``want``);
    ``tolerance``: the rule in words (``1e-4``, ``rtol 1e-5, atol 1e-8``)."""
    import numpy as np

    got, want, bad = np.asarray(got), np.asarray(want), np.asarray(bad, dtype=bool)
    if got.shape != want.shape:
        return f"wrong output: got shape {got.shape}, want {want.shape}"
    count = int(bad.sum())
    if not count:
        return f"wrong output (tolerance {tolerance})"
    first = int(np.argmax(bad.reshape(-1)))
    where = _index(first, want.shape)
    return (f"wrong output: got {number(got.reshape(-1)[first])} at index {where}, want "
            f"{number(want.reshape(-1)[first])} (tolerance {tolerance}); {count} of {want.size} values differ")


def not_close(got: Any, want: Any, rtol: float, atol: float) -> str | None:
    """None when ``got`` matches ``want`` as ``numpy.allclose`` (NaN equal to NaN) would say, else why not."""
    import numpy as np

    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"wrong output: got shape {got.shape}, want {want.shape}"
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return wrong_output(got, want, bad, f"rtol {rtol:g}, atol {atol:g}") if bad.any() else None
