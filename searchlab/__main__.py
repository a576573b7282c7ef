"""``python -m searchlab``: see :mod:`searchlab.cli`; ``python -m searchlab reproduce ...``: :mod:`searchlab.reproduce`."""

import sys


def main() -> None:
    if sys.argv[1:2] == ["reproduce"]:
        from searchlab.reproduce.cli import main as reproduce

        sys.exit(reproduce(sys.argv[2:]))
    from searchlab.cli.main import main as cli

    cli()


if __name__ == "__main__":
    main()
