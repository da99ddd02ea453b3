"""The command line shows the warnings of a command once each, after it ends."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import resource, warnings
    # A regression (showing each warning while still recording them) grows the
    # list of warnings without end: fail with MemoryError, not by filling the
    # machine.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    from treelens._cli._app import _notes
    from treelens._exceptions import MissingValuesWarning
    with _notes():
        warnings.warn("first of its kind", UserWarning)
        warnings.warn("rows have   no value", MissingValuesWarning)
        warnings.warn("rows have no value", MissingValuesWarning)
    print("done")
    """
)


def test_other_warnings_are_shown_once_and_notes_once():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "done"
    assert done.stderr.count("UserWarning: first of its kind") == 1
    assert done.stderr.count("treelens: note: rows have no value") == 1


def test_treelens_warnings_are_notes_not_python_warnings():
    """A treelens warning names the first line outside treelens, typer's under
    the command line: it is shown as a note instead."""
    script = textwrap.dedent(
        """
        import warnings
        from treelens._cli._app import _notes
        from treelens._exceptions import OutOfBagWarning
        with _notes():
            warnings.warn("50 of 143 rows have no out-of-bag tree", OutOfBagWarning)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == "treelens: note: 50 of 143 rows have no out-of-bag tree\n"
