import os

import pytest
from hypothesis import settings

# `make test` (and CI) runs the same property examples every time, so a result
# does not depend on the run; `pytest --hypothesis-profile=explore` draws new ones.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("repeatable")


@pytest.fixture
def unwritable_dir(tmp_path):
    """A directory this process cannot create files in (root ignores chmod)."""
    from pathlib import Path

    if os.geteuid() == 0:
        yield Path("/sys")
        return
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    yield locked
    locked.chmod(0o755)


@pytest.fixture(scope="session")
def dask_cluster():
    """A local Dask cluster of two single-threaded worker processes, shared by the
    Dask tests (starting one costs seconds)."""
    import distributed

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    yield cluster
    cluster.close()
