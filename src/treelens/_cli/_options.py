"""Option groups shared by commands: typer options gathered into small dataclasses.

``tweak``, ``explain`` and ``report`` take the same counterfactual options
(``--cost``, ``--method``, the constraints, ``--time-limit``, ...).  Each option is
defined once here, as a field of :class:`CounterfactualOptions` with its typer
option in :data:`COUNTERFACTUAL_OPTIONS`.  A command declares a single parameter of
the group's type, and :func:`option_group` puts the group's options in its place
on the command line, then hands the command one value::

    @option_group("search", CounterfactualOptions, fields=("cost", "optimal"))
    def explain(model_path: ModelArg, search: CounterfactualOptions = DEFAULT) -> None:
        ...

The command line users see is unchanged: the same option names, in the same
order, with the same defaults (``defaults=`` overrides a field's default for one
command).  :class:`DatasetOptions` does the same for the Parquet-dataset options.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from .._exceptions import InputError
from ._dataset_commands import (
    OutDirOpt,
    ResumeOpt,
    SchedulerOpt,
    TimeoutOpt,
    WorkersOpt,
)

__all__ = [
    "COUNTERFACTUAL_OPTIONS",
    "DATASET_OPTIONS",
    "CounterfactualOptions",
    "DatasetOptions",
    "check_directions",
    "names",
    "option_group",
    "parse_bounds",
]

F = TypeVar("F", bound=Callable[..., Any])


def names(text: str | None) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]``; None -> ``[]``."""
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def parse_bounds(items: Sequence[str]) -> dict[str, tuple[float | None, float | None]]:
    """``["income=0:90000", "age=:65"]`` -> ``{"income": (0.0, 90000.0), ...}``."""
    bounds: dict[str, tuple[float | None, float | None]] = {}
    for item in items:
        name, sep, span = item.partition("=")
        low, sep2, high = span.partition(":")
        try:
            if not (sep and sep2 and name):
                raise ValueError
            bounds[name.strip()] = (
                float(low) if low.strip() else None,
                float(high) if high.strip() else None,
            )
        except ValueError:
            raise InputError(
                f"--bounds must look like FEATURE=LOW:HIGH (either side may be empty); "
                f"got {item!r}."
            ) from None
    return bounds


def check_directions(constraints: Mapping[str, Any]) -> None:
    """Refuse a feature given two of --immutable, --increase-only, --decrease-only.

    Checked on the option values alone, before any file is read; the library
    checks the same again (and everything that needs the model).
    """
    options = ("immutable", "increase_only", "decrease_only")
    for i, first in enumerate(options):
        for second in options[i + 1 :]:
            both = [n for n in constraints.get(first, ()) if n in constraints[second]]
            if both:
                raise InputError(
                    f"Contradictory constraints on feature {both[0]!r}: it is "
                    f"declared both {first.replace('_', '-')} and "
                    f"{second.replace('_', '-')}; expected at most one of "
                    "--immutable, --increase-only and --decrease-only."
                )


@dataclass(frozen=True)
class CounterfactualOptions:
    """The counterfactual options of ``tweak``, ``explain`` and ``report``.

    Each field is the value of the option of the same name (``--no-infer`` is
    ``no_infer``, ``--options`` is ``n_counterfactuals``); a command that does not
    offer an option gets the field's default.
    """

    cost: str = "auto"
    method: str = "auto"
    mode: str = "minimal"
    immutable: str | None = None
    increase_only: str | None = None
    decrease_only: str | None = None
    integer: str | None = None
    bounds: list[str] | None = None
    optimal: bool = False
    time_limit: float = 10.0
    n_counterfactuals: int = 1
    no_infer: bool = False
    min_leaf_samples: int | None = None
    isolation_forest: Path | None = None
    max_anomaly_score: float | None = None
    fill_missing: str | None = None
    fill_missing_all: bool = False
    fill_cost: float | None = None

    def fill(self) -> bool | list[str]:
        """``fill_missing`` of the library: ``--fill-missing-all`` (True), the
        columns of ``--fill-missing``, or False."""
        if self.fill_missing_all and self.fill_missing is not None:
            raise InputError(
                "--fill-missing and --fill-missing-all exclude each other; got "
                f"both (--fill-missing {self.fill_missing})."
            )
        return True if self.fill_missing_all else names(self.fill_missing) or False

    def constraints(self) -> dict[str, Any]:
        """The constraint options as plain lists, refused early when contradictory."""
        constraints: dict[str, Any] = {
            "immutable": names(self.immutable),
            "increase_only": names(self.increase_only),
            "decrease_only": names(self.decrease_only),
            "integer": names(self.integer),
            "bounds": parse_bounds(self.bounds or []),
        }
        check_directions(constraints)
        return constraints

    def search(self) -> str:
        """The search to run: ``--method``, or ``"optimal"`` with ``--optimal``."""
        if self.method not in ("auto", "optimal", "tweak"):
            raise InputError(
                f"--method must be one of auto, optimal, tweak; got {self.method!r}."
            )
        if self.optimal and self.method == "tweak":
            raise InputError(
                "--optimal and --method tweak exclude each other; expected at most "
                "one, got both (--optimal is --method optimal)."
            )
        return "optimal" if self.optimal else self.method


#: The typer option of every field of :class:`CounterfactualOptions`.
COUNTERFACTUAL_OPTIONS: dict[str, Any] = {
    "cost": Annotated[
        str,
        typer.Option(
            "--cost",
            help="auto (L1 in median absolute deviations of DATA), l2, l1, l0, "
            "linf, cosine or mad.",
        ),
    ],
    "method": Annotated[
        str,
        typer.Option(
            "--method",
            help="auto (proven least cost within --time-limit, else the best found "
            "with its gap), optimal, or tweak (feature tweaking).",
        ),
    ],
    "mode": Annotated[
        str, typer.Option("--mode", help="--method tweak: minimal or paper.")
    ],
    "immutable": Annotated[
        str | None, typer.Option("--immutable", metavar="A,B", help="Never change.")
    ],
    "increase_only": Annotated[
        str | None, typer.Option("--increase-only", metavar="A,B")
    ],
    "decrease_only": Annotated[
        str | None, typer.Option("--decrease-only", metavar="A,B")
    ],
    "integer": Annotated[
        str | None, typer.Option("--integer", metavar="A,B", help="Integer-valued.")
    ],
    "bounds": Annotated[
        list[str] | None,
        typer.Option("--bounds", metavar="F=LOW:HIGH", help="Repeatable."),
    ],
    "optimal": Annotated[
        bool,
        typer.Option(
            "--optimal",
            help="Only proven least-cost counterfactuals: the exact search whatever "
            "the model's size (auto answers large models by feature tweaking).",
        ),
    ],
    "time_limit": Annotated[
        float,
        typer.Option("--time-limit", help="auto/optimal: seconds per row."),
    ],
    "n_counterfactuals": Annotated[
        int,
        typer.Option(
            "--options",
            metavar="K",
            min=1,
            help="Different options per row, each proven least-cost given the "
            "earlier ones (one table, an option number per row).",
        ),
    ],
    "no_infer": Annotated[
        bool,
        typer.Option(
            "--no-infer",
            help="Do not infer whole-number, 0/1 and one-hot columns from DATA.",
        ),
    ],
    "min_leaf_samples": Annotated[
        int | None,
        typer.Option(
            "--min-leaf-samples",
            metavar="N",
            min=1,
            help="Plausibility: every reached leaf holds at least N rows of DATA.",
        ),
    ],
    "isolation_forest": Annotated[
        Path | None,
        typer.Option(
            "--isolation-forest",
            metavar="FILE",
            help="Plausibility: a fitted IsolationForest (model file, on the "
            "model's columns; for a pipeline, a Pipeline with its preprocessing "
            "ending in one); counterfactuals stay within --max-anomaly-score.",
        ),
    ],
    "max_anomaly_score": Annotated[
        float | None,
        typer.Option(
            "--max-anomaly-score",
            metavar="S",
            help="With --isolation-forest: largest anomaly score (-score_samples), "
            "in (0, 1]; default: what its predict calls an inlier.",
        ),
    ],
    "fill_missing": Annotated[
        str | None,
        typer.Option(
            "--fill-missing",
            metavar="A,B",
            help="Missing values of these columns may be filled (else they stay "
            "missing): a number from its median in DATA, at --fill-cost each.",
        ),
    ],
    "fill_missing_all": Annotated[
        bool,
        typer.Option(
            "--fill-missing-all", help="Missing values of every column may be filled."
        ),
    ],
    "fill_cost": Annotated[
        float | None,
        typer.Option(
            "--fill-cost",
            metavar="C",
            help="Price of one filled value, added to the cost (default 1, as a "
            "category change).",
        ),
    ],
}


@dataclass(frozen=True)
class DatasetOptions:
    """The options of a command run over a Parquet dataset (``--out-dir`` ...)."""

    out_dir: Path | None = None
    scheduler: str | None = None
    workers: int | None = None
    resume: bool = False
    timeout: float = 10.0


#: The typer option of every field of :class:`DatasetOptions`.
DATASET_OPTIONS: dict[str, Any] = {
    "out_dir": OutDirOpt,
    "scheduler": SchedulerOpt,
    "workers": WorkersOpt,
    "resume": ResumeOpt,
    "timeout": TimeoutOpt,
}

_GROUPS: dict[type, dict[str, Any]] = {
    CounterfactualOptions: COUNTERFACTUAL_OPTIONS,
    DatasetOptions: DATASET_OPTIONS,
}


def option_group(
    parameter: str,
    group: type,
    *,
    fields: Sequence[str] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Callable[[F], F]:
    """Replace the command's ``parameter`` by the options of ``group``.

    Parameters
    ----------
    parameter : str
        Name of the command's parameter that receives the group's value.
    group : CounterfactualOptions or DatasetOptions
        The dataclass of the options.
    fields : sequence of str, optional
        The fields offered as options, in this order; default all of them.  The
        others keep their defaults.
    defaults : mapping, optional
        Defaults of this command that differ from the dataclass's.

    Returns
    -------
    callable
        A decorator for a typer command (put it below ``@app.command()``).
    """
    options = _GROUPS[group]
    all_fields = {f.name: f for f in dataclasses.fields(group)}
    offered = list(all_fields if fields is None else fields)
    overrides = dict(defaults or {})

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        hints = typing.get_type_hints(function, include_extras=True)
        parameters = []
        for p in signature.parameters.values():
            if p.name != parameter:
                parameters.append(p.replace(annotation=hints.get(p.name, p.annotation)))
                continue
            for name in offered:
                default = overrides.get(name, all_fields[name].default)
                parameters.append(
                    inspect.Parameter(
                        name,
                        inspect.Parameter.POSITIONAL_OR_KEYWORD,
                        default=default,
                        annotation=options[name],
                    )
                )

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in offered if name in kwargs}
            fixed = {k: v for k, v in overrides.items() if k not in offered}
            kwargs[parameter] = group(**{**fixed, **values})
            return function(*args, **kwargs)

        new = signature.replace(parameters=parameters)
        wrapper.__signature__ = new  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return wrapper  # type: ignore[return-value]

    return decorate
