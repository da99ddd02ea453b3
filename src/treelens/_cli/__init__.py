"""The command line and the demo: a thin layer that parses arguments and calls the
public API and :mod:`treelens._report`, computing nothing itself."""
