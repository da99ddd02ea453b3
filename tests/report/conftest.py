"""Fixtures shared by the command-line tests."""

import pytest

from .test_report import chromium_binary


@pytest.fixture(scope="module")
def chromium():
    """Path of headless Chromium, which the report tests open their pages in."""
    binary = chromium_binary()
    if binary is None:
        pytest.fail(
            "headless Chromium is needed for the report test; install it with "
            "`apt-get install chromium` (`make test` does) or set TREELENS_CHROMIUM"
        )
    return binary
