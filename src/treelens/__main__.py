"""``python -m treelens``: the same as the ``treelens`` command."""

from ._cli._app import main

if __name__ == "__main__":
    main()
