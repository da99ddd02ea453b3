"""Exceptions and warnings raised by treelens.

Every error that treelens raises on bad input is a :class:`TreelensError` and also
a :class:`ValueError` or :class:`TypeError`, so code that already catches the
built-in exceptions keeps working.  Messages follow one form: what was wrong, what
was expected, what was given.

:class:`SolverError` is the exception to that rule: it reports a failure inside
treelens or its solver, not bad input, and the command line exits 1 on it.
"""

from __future__ import annotations

import os
import sys

__all__ = [
    "BackgroundError",
    "CounterfactualCheckWarning",
    "InputError",
    "MemoryBudgetError",
    "MissingValuesWarning",
    "NotFittedError",
    "OutOfBagWarning",
    "OutputTooLargeError",
    "SchedulerUnreachableError",
    "SolverError",
    "TreelensError",
    "UnsafeModelError",
    "UnsupportedModelError",
    "warn",
]


class TreelensError(Exception):
    """Base class of every exception raised by treelens."""


class InputError(TreelensError, ValueError):
    """An argument has the right type but a wrong value, shape or content."""


class NotFittedError(TreelensError, ValueError):
    """The model given has not been fitted yet."""


class UnsupportedModelError(TreelensError, TypeError):
    """The model given is of a kind treelens cannot read, or uses an unsupported option."""


class MemoryBudgetError(InputError):
    """The memory budget cannot hold the work of even one row."""


class UnsafeModelError(InputError):
    """A model file would run untrusted code when loaded and was refused."""


class SchedulerUnreachableError(TreelensError, ValueError):
    """A Dask scheduler address could not be reached in time."""


class SolverError(TreelensError, RuntimeError):
    """The optimization solver failed on a well-formed problem.

    This is not bad input: it reports a failure of HiGHS or of treelens itself,
    and the command line exits with code 1 on it.
    """


class CounterfactualCheckWarning(UserWarning):
    """A computed counterfactual failed the source model's own check.

    This is a bug in treelens; the row is returned as not found.
    """


class BackgroundError(InputError):
    """The background data of interventional SHAP values is missing or does not
    fit the model."""


class OutputTooLargeError(InputError):
    """The result asked for would not fit in the memory budget."""


class OutOfBagWarning(UserWarning):
    """Some rows were drawn into every tree's bootstrap sample, so no tree can
    score them out of bag; out-of-bag figures leave them out."""


class MissingValuesWarning(UserWarning):
    """Rows with missing values were left out of a picture or a selection.

    The message counts them and names the first; nothing else changes.
    """


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning]) -> None:
    """Issue a warning that names the user's line: the first caller outside treelens.

    A fixed ``stacklevel`` names the right line for one way in only: a warning
    raised in a Display's ``plot`` names the caller of ``plot``, which is the
    user when they call it and treelens itself when ``from_estimator`` does.
    Walking the stack past treelens' own frames (as pandas does) names the
    user's line whichever public function they called.

    Parameters
    ----------
    message : str
    category : type of Warning

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("shown at this line", UserWarning)
    >>> caught[0].filename.startswith(_PACKAGE)
    False
    """
    import warnings

    frame = sys._getframe(1)
    level = 2  # the caller of this function
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
