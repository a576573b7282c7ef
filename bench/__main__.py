"""``python -m bench list`` | ``python -m bench NAME [--option value ...]`` (see bench/harness.py)."""

from __future__ import annotations

import sys

import bench.registry  # noqa: F401  (fills the registry)
from bench.harness import REGISTRY, load, run


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    if argv[0] == "list":
        for name in sorted(REGISTRY):
            detail = load(name).summary if "-v" in argv[1:] else f"bench/{REGISTRY[name]}.py"
            print(f"{name:28s} {detail}")
        return 0
    run(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
