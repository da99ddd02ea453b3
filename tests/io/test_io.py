"""Model and data loading, and atomic writes."""

import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

from treelens import InputError
from treelens._io._files import (
    UnsafeModelError,
    atomic_write,
    check_output_path,
    load_data,
    load_model,
    named_by_columns,
)

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


class _Custom:
    """A type skops does not trust."""

    def __init__(self) -> None:
        self.value = 1


@pytest.fixture(scope="module")
def iris_model():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X.columns = FEATURES
    return DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y), X, y


def test_skops_model_loads_with_default_trust(tmp_path, iris_model):
    model, X, _ = iris_model
    path = tmp_path / "model.skops"
    skops.io.dump(model, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_skops_with_untrusted_type_is_refused_until_trusted(tmp_path):
    path = tmp_path / "custom.skops"
    skops.io.dump({"thing": _Custom()}, path)
    with pytest.raises(UnsafeModelError, match=r"test_io\._Custom"):
        load_model(path)
    name = skops.io.get_untrusted_types(file=path)[0]
    assert load_model(path, trusted=[name])["thing"].value == 1


def test_pickle_is_refused_without_trust_and_never_run(tmp_path, iris_model):
    marker = tmp_path / "created-by-unpickling"
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(_Opener(str(marker))))
    with pytest.raises(UnsafeModelError, match="arbitrary code"):
        load_model(path)
    assert not marker.exists()
    # The same file does run code once trusted: the refusal above was real.
    load_model(path, trust_pickle=True)
    assert marker.exists()


def test_pickle_sniffed_whatever_its_name(tmp_path, iris_model):
    path = tmp_path / "model.skops"
    path.write_bytes(pickle.dumps(iris_model[0]))
    with pytest.raises(UnsafeModelError):
        load_model(path)


class _Opener:
    """Unpickling this creates a file: proof that unpickling runs code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


@pytest.mark.parametrize(
    "content", [b"PK\x03\x04 not really a zip", b"\x00\x01garbage", b""]
)
def test_corrupt_model_file(tmp_path, content):
    path = tmp_path / "model.skops"
    path.write_bytes(content)
    with pytest.raises(InputError, match="model.skops"):
        load_model(path)


def test_missing_and_directory_model_paths(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_model(tmp_path / "absent.skops")
    with pytest.raises(InputError, match="is a directory"):
        load_model(tmp_path)


def test_load_data_matches_columns_by_name(tmp_path, iris_model):
    _, X, y = iris_model
    frame = X[FEATURES[::-1]].assign(species=y)
    frame.to_parquet(tmp_path / "d.parquet")
    frame.to_csv(tmp_path / "d.csv", index=False)
    for name in ("d.parquet", "d.csv"):
        got, target = load_data(
            tmp_path / name, feature_names=FEATURES, target="species"
        )
        assert list(got.columns) == FEATURES
        np.testing.assert_allclose(got.to_numpy(), X.to_numpy())
        np.testing.assert_array_equal(target.to_numpy(), y.to_numpy())


def test_load_data_lists_missing_and_extra_columns(tmp_path, iris_model):
    _, X, _ = iris_model
    X.drop(columns=["petal_width"]).assign(extra=1.0).to_csv(
        tmp_path / "d.csv", index=False
    )
    with pytest.raises(
        InputError, match=r"missing \['petal_width'\], unexpected \['extra'\]"
    ):
        load_data(tmp_path / "d.csv", feature_names=FEATURES)


def test_load_data_names_unparseable_value(tmp_path, iris_model):
    _, X, _ = iris_model
    bad = X.astype(object)
    bad.iloc[3, 1] = "wide"
    bad.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(InputError, match=r"'sepal_width'.*'wide' at data row 3"):
        load_data(tmp_path / "d.csv", feature_names=FEATURES)


def test_load_data_without_model_names_is_positional(tmp_path, iris_model):
    _, X, _ = iris_model
    X.to_csv(tmp_path / "d.csv", index=False)
    names = [f"x{i}" for i in range(4)]
    got, _ = load_data(tmp_path / "d.csv", feature_names=names, has_feature_names=False)
    assert got.shape == (150, 4)
    with pytest.raises(InputError, match="expects 3"):
        load_data(tmp_path / "d.csv", feature_names=names[:3], has_feature_names=False)


def test_load_data_unknown_target_and_suffix(tmp_path, iris_model):
    _, X, _ = iris_model
    X.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(InputError, match="Target column 'label'"):
        load_data(tmp_path / "d.csv", feature_names=FEATURES, target="label")
    (tmp_path / "d.xlsx").write_bytes(b"x")
    with pytest.raises(InputError, match="expected .csv"):
        load_data(tmp_path / "d.xlsx", feature_names=FEATURES)


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "out.txt"
    atomic_write(path, "first")
    atomic_write(path, b"second")
    assert path.read_text() == "second"
    assert os.listdir(tmp_path) == ["out.txt"]
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_atomic_write_interrupted_leaves_file_untouched(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old content")

    def writer(stream):
        stream.write(b"half of the new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, writer)
    assert path.read_text() == "old content"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_output_path_checks(tmp_path, unwritable_dir):
    source = tmp_path / "data.csv"
    source.write_text("a\n1\n")
    with pytest.raises(InputError, match="is a directory"):
        check_output_path(tmp_path)
    with pytest.raises(InputError, match="is an input file"):
        check_output_path(tmp_path / "." / "data.csv", inputs=[source])
    with pytest.raises(InputError, match="does not exist"):
        check_output_path(tmp_path / "no" / "out.html")
    with pytest.raises(InputError, match="Cannot write"):
        check_output_path(source / "out.html")
    with pytest.raises(InputError, match="Cannot write"):
        check_output_path(unwritable_dir / "out.html")
    assert source.read_text() == "a\n1\n"


def test_data_frame_columns_are_float_and_booleans_stay_booleans(tmp_path):
    pd.DataFrame({"a": [1, 2], "b": [True, False]}).to_csv(
        tmp_path / "d.csv", index=False
    )
    got, _ = load_data(tmp_path / "d.csv", feature_names=["a", "b"])
    assert got.dtypes.to_dict() == {"a": np.float64, "b": bool}
    assert got["b"].tolist() == [True, False]


def test_discarding_the_writes_in_progress_leaves_the_destination_as_it_was(tmp_path):
    # What the command line does on Ctrl-C before it exits at once.
    from treelens._io._files import atomic_write, discard_temporary_files

    target = tmp_path / "out.html"
    target.write_text("old")

    def content(stream):
        stream.write(b"new")
        assert len(list(tmp_path.iterdir())) == 2  # the temporary file exists
        discard_temporary_files()
        assert [p.name for p in tmp_path.iterdir()] == ["out.html"]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, content)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.html"]


def test_load_data_refuses_text_that_is_not_utf8(tmp_path, iris_model):
    _model, X, _ = iris_model
    path = tmp_path / "latin1.csv"
    text = X.head(3).assign(ville="Besançon").to_csv(index=False)
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(InputError) as info:
        load_data(path, feature_names=FEATURES, target="ville")
    message = str(info.value)
    assert "must be UTF-8 text; got byte 0xe7" in message
    assert "UnicodeDecodeError" not in message and "position" not in message


def test_corrupt_catboost_file_names_catboost(tmp_path):
    pytest.importorskip("catboost")
    path = tmp_path / "model.cbm"
    path.write_bytes(b"CBM1garbage")
    with pytest.raises(InputError, match="as an XGBoost, LightGBM or CatBoost model"):
        load_model(path)


def test_load_data_matches_names_lightgbm_stored_with_underscores(tmp_path):
    """LightGBM stores "petal length" as "petal_length": the training file
    still matches, spaces read as underscores, and nothing else is renamed."""
    path = tmp_path / "spaces.csv"
    frame = pd.DataFrame(
        {"petal length": [1.0, 2.0], "width": [3.0, 4.0], "label": [0, 1]}
    )
    frame.to_csv(path, index=False)
    X, y = load_data(path, feature_names=["width", "petal_length"], target="label")
    assert list(X.columns) == ["width", "petal_length"]
    assert X["petal_length"].tolist() == [1.0, 2.0] and y.tolist() == [0, 1]
    # A column holding the model's own name keeps it; the other is extra.
    frame.assign(petal_length=5.0).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"unexpected \['petal length'\]"):
        load_data(path, feature_names=["width", "petal_length"], target="label")


def test_extra_column_hints_fit_the_call(tmp_path, iris_model):
    """The hint to name the target column only when none was named; a saved
    index is named as such."""
    _, X, y = iris_model
    path = tmp_path / "d.csv"
    X.assign(species=y, extra=1.0).to_csv(path, index=False)
    with pytest.raises(InputError) as info:
        load_data(path, feature_names=FEATURES, target="species")
    assert "unexpected ['extra']" in str(info.value)
    assert "--target" not in str(info.value)
    X.assign(species=y).to_csv(path)  # the index as a first, unnamed column
    with pytest.raises(InputError, match=r"\['Unnamed: 0'\] .*index=False"):
        load_data(path, feature_names=FEATURES, target="species")


def test_named_by_columns_names_only_models_without_names(iris_model):
    """A model fitted on an array reads a file's columns in file order, so the
    file's names are its features' one for one; a named model keeps its own."""
    import treelens

    named, X, y = iris_model
    assert named_by_columns(named, list("abcd")) is None
    unnamed = DecisionTreeClassifier(max_depth=2, random_state=0)
    unnamed.fit(X.to_numpy(), y)
    assert named_by_columns(unnamed, list("abc")) is None  # another count
    assert named_by_columns(unnamed, ["x0", "x1", "x2", "x3"]) is None
    columns = ["d", "c", "b", "a"]
    forest = named_by_columns(unnamed, columns)
    assert forest.feature_names == tuple(columns) and forest.has_feature_names
    frame = pd.DataFrame(X.to_numpy(), columns=columns)
    np.testing.assert_array_equal(forest.predict(frame), unnamed.predict(X.to_numpy()))
    # A Forest read from a model file (no model behind it) is renamed alike.
    bare = treelens.to_forest(unnamed)
    renamed = named_by_columns(bare, columns)
    assert renamed.feature_names == tuple(columns)
    assert [spec.name for spec in renamed.features] == columns
    np.testing.assert_array_equal(renamed.predict(frame), unnamed.predict(X.to_numpy()))


def test_counterfactuals_of_a_renamed_forest_are_confirmed_by_its_model(iris_model):
    """The Forest named after a file's columns keeps the fitted model behind
    it: every counterfactual found on it is put to the model's own predict,
    given its columns by position (an array, as it was fitted)."""
    import treelens
    from treelens._counterfactual._categorical import fixed_forest
    from treelens._exceptions import CounterfactualCheckWarning

    _, X, y = iris_model
    columns = ["d", "c", "b", "a"]
    rows = pd.DataFrame(X.to_numpy()[:100:25], columns=columns)  # none of class 2
    unnamed = DecisionTreeClassifier(max_depth=2, random_state=0)
    unnamed.fit(X.to_numpy(), y)
    forest = named_by_columns(unnamed, columns)
    assert forest.fitted_model is unnamed
    assert treelens.to_forest(unnamed).fitted_model is None
    # A Forest whose trees changed no longer stands for the model.
    assert fixed_forest(forest, ((0, 1.0),)).fitted_model is None

    predict, given = unnamed.predict, []

    def spy(Z):
        given.append(Z)
        return predict(Z)

    unnamed.predict = spy
    result = treelens.feature_tweak(forest, rows, target=2, cost="l1")
    assert result.found_.all() and given
    assert all(isinstance(Z, np.ndarray) and Z.shape[1] == 4 for Z in given)
    np.testing.assert_array_equal(predict(result.X_cf_.to_numpy()), 2)
    # A model that disagrees with its Forest rejects the Forest's answers.
    unnamed.predict = lambda Z: np.zeros(len(Z), dtype=int)
    with pytest.warns(CounterfactualCheckWarning, match="failed the source model"):
        rejected = treelens.feature_tweak(forest, rows, target=2, cost="l1")
    assert not rejected.found_.any()
