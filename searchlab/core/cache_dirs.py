"""Where searchlab keeps what it can rebuild (issue 36, item 7): one root, one variable.

``$SEARCHLAB_CACHE_DIR`` if set, else the platform's user cache directory from ``platformdirs``
(``$XDG_CACHE_HOME/searchlab``, by default ``~/.cache/searchlab``, on Linux). Beneath it: ``dft/`` (problem=dft's
compiled C library), ``futhark/`` (compiled Futhark servers and datasets), ``compile_times/`` (the OpenCL knob
problems' recorded build times). Everything there may be deleted at any time.
"""

from __future__ import annotations

import os
from pathlib import Path

VARIABLE = "SEARCHLAB_CACHE_DIR"


def cache_dir(*parts: str) -> Path:
    """The cache root, or a directory beneath it (not created here)."""
    import platformdirs

    root = os.environ.get(VARIABLE) or platformdirs.user_cache_dir("searchlab", appauthor=False)
    return Path(root).expanduser().joinpath(*parts)
