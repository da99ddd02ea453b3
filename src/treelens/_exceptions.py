"""Exceptions raised by treelens.

Every error that treelens raises on bad input is a :class:`TreelensError` and also
a :class:`ValueError` or :class:`TypeError`, so code that already catches the
built-in exceptions keeps working.  Messages follow one form: what was wrong, what
was expected, what was given.
"""

from __future__ import annotations

__all__ = [
    "BackgroundError",
    "InputError",
    "NotFittedError",
    "OutOfBagWarning",
    "OutputTooLargeError",
    "TreelensError",
    "UnsupportedModelError",
]


class TreelensError(Exception):
    """Base class of every exception raised by treelens."""


class InputError(TreelensError, ValueError):
    """An argument has the right type but a wrong value, shape or content."""


class NotFittedError(TreelensError, ValueError):
    """The model given has not been fitted yet."""


class UnsupportedModelError(TreelensError, TypeError):
    """The model given is of a kind treelens cannot read, or uses an unsupported option."""


class BackgroundError(InputError):
    """The background data of interventional SHAP values is missing or does not
    fit the model."""


class OutputTooLargeError(InputError):
    """The result asked for would not fit in the memory budget."""


class OutOfBagWarning(UserWarning):
    """Some rows were drawn into every tree's bootstrap sample, so no tree can
    score them out of bag; out-of-bag figures leave them out."""
