"""The command starts fast: ``--help`` and usage errors import no heavy library."""

import os
import subprocess
import sys
import time
from pathlib import Path

import treelens

SRC = str(Path(treelens.__file__).resolve().parent.parent)
HEAVY = (
    "numpy",
    "pandas",
    "scipy",
    "sklearn",
    "skops",
    "matplotlib",
    "jinja2",
    "xgboost",
    "lightgbm",
    "pyarrow",
    "highspy",
    "rich",
)

_PROBE = """
import sys
from treelens._cli._app import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print("HEAVY", ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _run(*args):
    env = {**os.environ, "PYTHONPATH": SRC}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    return done, time.perf_counter() - started


def test_help_and_usage_errors_import_no_heavy_library():
    for args, code in (
        (["--help"], 0),
        (["report", "--help"], 0),
        (["tweak"], 2),
        (["report", "model.skops", "data.csv", "--no-such-option"], 2),
        (["--version"], 0),
    ):
        done, _ = _run(*args)
        assert done.returncode == code, done.stderr
        heavy = done.stderr.strip().splitlines()[-1]
        assert heavy == "HEAVY", (args, heavy)


def test_import_treelens_is_light_and_names_load_on_use():
    code = (
        "import sys, treelens; assert 'numpy' not in sys.modules; "
        "treelens.mdi_importance; assert 'numpy' in sys.modules; "
        "assert 'mdi_importance' in dir(treelens)"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)
