"""What the tests in tests/ and the docstring examples in src/treelens share.

``make test`` runs both (``testpaths`` and ``--doctest-modules`` in pyproject.toml),
so the pictures of either render off screen and no figure outlives its test.
"""

import os
import sys

import pytest

# Pictures render off screen.
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test or an example opened."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
