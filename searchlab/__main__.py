"""``python -m searchlab``: see :mod:`searchlab.cli`."""

from searchlab.cli.main import main

if __name__ == "__main__":
    main()
