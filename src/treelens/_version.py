"""The version of treelens."""

__version__ = "0.1.0"
