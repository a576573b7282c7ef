"""python -m bench: run a registered benchmark and write its result (bench/harness.py).

    python -m bench list [-v]               every benchmark (-v: with what it measures)
    python -m bench NAME [--option value]   run one; writes bench/results/NAME.json (--out FILE elsewhere)
    python -m bench NAME --help             its options and their defaults
    python -m bench report NAME [FILE]      redraw its figures and tables from a result file, measuring nothing
"""

from __future__ import annotations

import sys

import bench.registry  # noqa: F401  (fills the registry)
from bench.harness import REGISTRY, UsageError, load, report, run


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    except UsageError as exc:
        print(f"python -m bench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # what a benchmark finished is in its checkpointed result (partial: true)
        print("python -m bench: interrupted; a benchmark's finished parts are in its result file, marked partial",
              file=sys.stderr)
        return 130


def _main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print((__doc__ or "").strip())
        return 0 if argv else 2
    if argv[0] == "list":
        for name in sorted(REGISTRY):
            detail = load(name).summary if "-v" in argv[1:] else f"bench/{REGISTRY[name]}.py"
            print(f"{name:24s} {detail}")
        return 0
    if argv[0] == "report":
        if len(argv) not in (2, 3):
            print("usage: python -m bench report NAME [FILE]", file=sys.stderr)
            return 2
        report(argv[1], argv[2] if len(argv) == 3 else None)
        return 0
    _, status = run(argv[0], argv[1:])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
