"""Dask clusters: connecting to a running scheduler, or starting a local one.

distributed is part of the ``treelens[dask]`` extra and imported only here, when a
cluster is asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._exceptions import InputError, SchedulerUnreachableError

__all__ = ["connect", "local_cluster"]


def connect(address: str, *, timeout: float = 10.0) -> Any:
    """Connect a ``distributed.Client`` to a running Dask scheduler.

    Parameters
    ----------
    address : str
        Scheduler address, for example ``"tcp://10.0.0.5:8786"``.
    timeout : float, default=10.0
        Seconds to wait for the scheduler before giving up.

    Returns
    -------
    client : distributed.Client
        Registered as the default client, so Dask computations run on it.

    Raises
    ------
    SchedulerUnreachableError
        If no scheduler answers at ``address`` within ``timeout`` seconds.
    """
    from distributed import Client

    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise InputError(
            f"`timeout` must be a positive number of seconds; got {timeout!r}."
        )
    try:
        return Client(address, timeout=f"{float(timeout)}s")
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise SchedulerUnreachableError(
            f"Could not reach a Dask scheduler at {address!r} within {timeout:g} s; "
            "expected the address of a running scheduler (for example "
            f"'tcp://host:8786'); got: {exc}."
        ) from exc


def local_cluster(n_workers: int, *, processes: bool = True) -> Any:
    """Start a local Dask cluster of ``n_workers`` single-threaded workers.

    Parameters
    ----------
    n_workers : int
    processes : bool, default=True
        Workers in their own processes (threads of this one when False).

    Returns
    -------
    client : distributed.Client
        Owning the cluster: closing the client (``client.close()``, or leaving a
        ``with`` block) shuts the cluster down.

    Notes
    -----
    distributed starts its worker processes with ``MALLOC_TRIM_THRESHOLD_`` set,
    which turns off glibc's dynamic mmap threshold: every large temporary array
    of the vectorized searches is then mapped and unmapped afresh, which halves
    their speed.  The workers started here keep glibc's default.
    """
    import dask
    from distributed import Client

    if not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
        raise InputError(f"`n_workers` must be a positive integer; got {n_workers!r}.")
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        return Client(
            n_workers=int(n_workers),
            threads_per_worker=1,
            processes=processes,
            dashboard_address=":0",
        )
