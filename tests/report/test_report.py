"""The HTML report: its content, and how it renders in headless Chromium."""

import base64
import html
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from treelens._report._page import render_report

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]

# Recorded into the DOM after load: whether each picture decoded, and every error
# or console.error the page raised.  Inserted into a copy of the report only.
_PROBE = """<script>
window.__errors = [];
window.addEventListener("error", function (e) {
  window.__errors.push(String(e.message || (e.target && e.target.alt) || "resource error"));
}, true);
var __consoleError = console.error;
console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, " "));
  __consoleError.apply(console, arguments);
};
window.addEventListener("load", function () {
  var images = Array.prototype.map.call(document.images, function (img) {
    return {alt: img.alt, width: img.naturalWidth, ok: img.complete && img.naturalWidth > 0};
  });
  var pre = document.createElement("pre");
  pre.id = "treelens-probe";
  pre.textContent = JSON.stringify({
    images: images, errors: window.__errors, text: document.body.innerText.length
  });
  document.body.appendChild(pre);
});
</script>"""

_CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--enable-logging=stderr",
    "--v=0",
]


def chromium_binary():
    """Path of Chromium, or None.  `make test` installs Debian's chromium."""
    for name in (
        os.environ.get("TREELENS_CHROMIUM"),
        "chromium",
        "chromium-browser",
        "google-chrome",
    ):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def run_chromium(binary, tmp_path, *args):
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run(
        [binary, *_CHROMIUM_FLAGS, f"--user-data-dir={profile}", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=90,
    )


@pytest.fixture(scope="module")
def report_html():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    y = y.rename("species")
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, y
    )
    return render_report(model, X.iloc[::3], y.iloc[::3], title="Iris forest")


def test_report_shows_the_shap_dependence_of_the_column_that_moves_it_most(
    report_html,
):
    import shap

    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(
        X, y.rename("species")
    )
    values = shap.TreeExplainer(model).shap_values(X.iloc[::3])  # rows, cols, classes
    top = FEATURES[int(np.argmax(np.abs(values).mean(axis=(0, 2))))]
    assert 'alt="SHAP dependence"' in report_html
    assert f"exact SHAP value of {top} for output 2" in report_html


def test_report_sections_and_self_contained(report_html):
    for anchor in (
        "model",
        "importance",
        "mdi-note",
        "nodes",
        "pictures",
        "counterfactuals",
    ):
        assert f'id="{anchor}"' in report_html
    for words in (
        "Accuracy",
        "held-out MDI",
        "permutation",
        "How MDI is computed",
        "When it misleads",
        "Tree diagram",
        "Partition",
        "Decision regions",
    ):
        assert words in report_html, words
    # The region picture says how its features and reference row were chosen.
    assert "the view most evenly split between classes" in report_html
    # Nothing is fetched: no external scripts, styles or pictures.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", report_html)
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', report_html)
    assert len(images) >= 4
    for data in images:
        assert base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n")


def assert_renders(chromium, page: str, tmp_path) -> dict:
    """Open ``page`` in headless Chromium with the probe: no error, every
    picture decoded.  Returns what the probe recorded."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("<head>", "<head>" + _PROBE, 1), encoding="utf-8")
    result = run_chromium(
        chromium, tmp_path, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()
    )
    found = re.search(r'<pre id="treelens-probe">(.*?)</pre>', result.stdout, re.DOTALL)
    assert found, result.stderr[-2000:]
    state = json.loads(html.unescape(found.group(1)))
    assert state["errors"] == []
    assert len(state["images"]) == page.count("<img ")
    assert state["images"] and all(image["ok"] for image in state["images"]), state
    return state


def test_report_renders_in_headless_chromium(chromium, report_html, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(report_html, encoding="utf-8")
    state = assert_renders(chromium, report_html, tmp_path)
    assert state["text"] > 500

    shot = tmp_path / "report.png"
    result = run_chromium(
        chromium,
        tmp_path,
        f"--screenshot={shot}",
        "--window-size=1200,1600",
        page.as_uri(),
    )
    assert shot.exists(), result.stderr[-2000:]
    # The page as served carries no script, so Chromium logs no console message.
    assert ":CONSOLE" not in result.stderr
    from PIL import Image

    with Image.open(shot) as picture:
        pixels = np.asarray(picture.convert("RGB"), dtype=np.int16)
    assert pixels.shape[:2] == (1600, 1200)
    not_white = (pixels < 245).any(axis=2).mean()
    assert 0.02 < not_white < 0.9, not_white
    colours = np.unique(pixels.reshape(-1, 3)[::7], axis=0).shape[0]
    assert colours > 50, colours


def test_report_note_says_which_to_trust(report_html):
    assert "Which to trust" in report_html
    assert "debiased MDI" in report_html
    assert "Debiased MDI" in report_html
