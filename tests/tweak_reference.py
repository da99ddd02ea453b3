"""Exhaustive feature tweaking, written as plainly as possible, for the tests.

Every candidate is built one by one, with scalar code walking each tree's nodes,
and the source model's own ``predict`` is asked about each candidate.  It shares
no code with treelens' search beyond the resolved options (epsilon, constraints,
cost weights).
"""

from __future__ import annotations

from typing import Any

import numpy as np

F32 = np.float32


def _cast(v: float) -> float:
    return float(F32(v))


def _walk(tree: Any, x: np.ndarray) -> int:
    node = 0
    while tree.children_left[node] != -1:
        f, thr = tree.feature[node], tree.threshold[node]
        node = (
            tree.children_left[node]
            if _cast(x[f]) <= thr
            else tree.children_right[node]
        )
    return int(node)


def _path_box(tree: Any, leaf: int, n_features: int) -> tuple[list[float], list[float]]:
    lower, upper = [-np.inf] * n_features, [np.inf] * n_features
    parent = {}
    for node in range(tree.n_nodes):
        if tree.children_left[node] != -1:
            parent[int(tree.children_left[node])] = (node, True)
            parent[int(tree.children_right[node])] = (node, False)
    node = leaf
    while node in parent:
        p, went_left = parent[node]
        f, thr = int(tree.feature[p]), float(tree.threshold[p])
        if went_left:
            upper[f] = min(upper[f], thr)
        else:
            lower[f] = max(lower[f], thr)
        node = p
    return lower, upper


def _land(v, lo, hi, flo, fhi):
    """Nearest float32 c with lo < c <= hi and flo <= c <= fhi when v's cast misses (lo, hi]."""
    c = _cast(v)
    if c <= lo:
        n = F32(lo)
        while float(n) <= lo or float(n) < flo:
            n = np.nextafter(n, F32(np.inf))
        return float(n)
    if c > hi:
        n = F32(hi)
        while float(n) > hi or float(n) > fhi:
            n = np.nextafter(n, F32(-np.inf))
        return float(n)
    return v


def _candidate(x, lower, upper, eps, rc, mode, cost_weights):
    """Scalar build of one candidate; None when the box is unreachable."""
    n = len(x)
    out = list(map(float, x))
    in_group = set()
    for g in rc.one_hot:
        in_group.update(int(j) for j in g)
    for j in range(n):
        lo_b, hi_b = float(rc.lower[j]), float(rc.upper[j])
        flo, fhi = lo_b, hi_b
        if rc.increase_only[j] or rc.immutable[j]:
            flo = max(flo, x[j])
        if rc.decrease_only[j] or rc.immutable[j]:
            fhi = min(fhi, x[j])
        if rc.integer[j]:
            flo, fhi = np.ceil(flo), np.floor(fhi)
        if j in in_group:
            continue
        L, U, e = lower[j], upper[j], eps[j]
        if L == np.inf or U == -np.inf:
            # The far side of a split at an infinite threshold (a split that only
            # separates missing values): no finite value reaches it.
            return None
        constrained = np.isfinite(L) or np.isfinite(U)
        inside = L < _cast(x[j]) <= U and flo <= x[j] <= fhi
        sl, su = L + e, U - e
        if sl > su:
            sl = su = (L + U) / 2
        if mode == "paper" and constrained:
            if np.isfinite(L) and np.isfinite(U):
                point = sl if abs(x[j] - sl) <= abs(x[j] - su) else su
            else:
                point = sl if np.isfinite(L) else su
        else:
            point = x[j]
        if rc.integer[j]:
            kmin, kmax = max(np.floor(L) + 1, flo), min(np.floor(U), fhi)
            if kmin > kmax:
                return None
            out[j] = float(min(max(np.rint(point), kmin), kmax))
            continue
        if mode == "minimal" and inside:
            continue
        a, b = max(sl, flo), min(su, fhi)
        if a <= b:
            v = min(max(point, a), b)
        else:
            a, b = max(L, flo), min(U, fhi)
            if not (a < b or (a == b and a > L)):
                return None
            v = min(max(point, a), b)
        out[j] = _land(v, L, U, flo, fhi)
    for g in rc.one_hot:
        g = [int(j) for j in g]
        ok0 = [lower[j] < 0 <= upper[j] and out_f(rc, x, j, 0) for j in g]
        ok1 = [lower[j] < 1 <= upper[j] and out_f(rc, x, j, 1) for j in g]
        can = [
            ok1[i] and all(ok0[m] for m in range(len(g)) if m != i)
            for i in range(len(g))
        ]
        if not any(can):
            return None
        cur = int(np.argmax([x[j] for j in g]))
        if can[cur]:
            hot = cur
        else:
            w = [cost_weights[j] if cost_weights is not None else 1.0 for j in g]
            hot = min((w[i], i) for i in range(len(g)) if can[i])[1]
        for i, j in enumerate(g):
            out[j] = 1.0 if i == hot else 0.0
    if not np.isfinite(out).all():  # an empty box such as (inf, inf]
        return None
    return np.array(out)


def out_f(rc, x, j, v):
    flo, fhi = float(rc.lower[j]), float(rc.upper[j])
    if rc.increase_only[j] or rc.immutable[j]:
        flo = max(flo, x[j])
    if rc.decrease_only[j] or rc.immutable[j]:
        fhi = min(fhi, x[j])
    return flo <= v <= fhi


def scalar_cost(name, weights, x, c):
    d = [float(c[j] - x[j]) for j in range(len(x))]
    if name in ("l1", "mad", "weighted_l1"):
        return float(np.sum([weights[j] * abs(d[j]) for j in range(len(d))]))
    if name in ("l2", "weighted_l2"):
        return float(np.sqrt(np.sum([(weights[j] * d[j]) ** 2 for j in range(len(d))])))
    if name in ("l0", "weighted_l0"):
        return float(sum(weights[j] for j in range(len(d)) if d[j] != 0))
    if name in ("linf", "weighted_linf"):
        return float(max([weights[j] * abs(d[j]) for j in range(len(d))] + [0.0]))
    if name == "cosine":
        if all(v == 0 for v in d):
            return 0.0
        nx, nc = np.linalg.norm(x), np.linalg.norm(c)
        if nx == 0 or nc == 0:
            return 1.0
        return max(0.0, 1.0 - float(np.dot(x, c)) / (nx * nc))
    raise ValueError(name)


def source_predict(model, X):
    """The model's own predictions, asked of its library directly (not through
    treelens): a scikit-learn style ``predict`` (an IsolationForest's
    ``score_samples``), or for a library Booster its ``predict`` (XGBoost on a
    DMatrix), whose probabilities become class indices as the library's
    wrappers turn them into labels."""
    import json

    X = np.asarray(X)
    module = type(model).__module__.split(".")[0]
    if module == "xgboost" and type(model).__name__ == "Booster":
        import xgboost

        output = model.predict(xgboost.DMatrix(X, feature_names=model.feature_names))
        objective = json.loads(model.save_config())["learner"]["objective"]["name"]
    elif module == "lightgbm" and type(model).__name__ == "Booster":
        output = model.predict(X)
        objective = str(model.dump_model(num_iteration=1).get("objective", ""))
    elif module == "catboost":
        # Labels come as a column, and the generic CatBoost class gives raw scores.
        loss = str(model.get_all_params()["loss_function"])
        if loss in ("Logloss", "CrossEntropy", "MultiClass"):
            return np.ravel(model.predict(X, prediction_type="Class"))
        return model.predict(X, prediction_type="RawFormulaVal")
    elif type(model).__name__ == "IsolationForest":
        return model.score_samples(X)
    else:
        return model.predict(X)
    output = np.asarray(output)
    if objective.startswith(("binary", "multi:softprob", "multiclass")):
        return (output > 0.5).astype(int) if output.ndim == 1 else output.argmax(1)
    if objective.startswith("multi:softmax"):
        return output.astype(int)
    return output


def _predict_one(model, row):
    return source_predict(model, row[None, :])[0]


def reference_tweak(model, forest, x, problem_target, eps, rc, cost, mode):
    """Return (found, x_cf, cost, tree, leaf) for one row by exhaustive search."""
    x = np.asarray(x, dtype=np.float64)
    pred = _predict_one(model, x)
    tgt = problem_target

    def meets(p):
        if tgt.kind == "class":
            return p == tgt.label
        if tgt.kind == "other":
            return p != pred
        return tgt.low <= p <= tgt.high

    if tgt.kind != "other" and meets(pred):
        return True, x.copy(), 0.0, -1, -1
    classes = list(forest.classes_) if forest.classes_ is not None else None
    best = (False, None, np.inf, -1, -1)
    for t, tree in enumerate(forest.trees):
        leaf_x = _walk(tree, x)
        if forest.kind != "boosting":
            if classes is not None:
                if int(np.argmax(tree.value[leaf_x])) != classes.index(pred):
                    continue
            elif tgt.low <= tree.value[leaf_x, 0] <= tgt.high:
                continue
        for leaf in range(tree.n_nodes):
            if tree.children_left[leaf] != -1:
                continue
            if forest.kind != "boosting":
                if classes is not None:
                    cls = int(np.argmax(tree.value[leaf]))
                    wanted = (
                        cls == tgt.index
                        if tgt.kind == "class"
                        else cls != classes.index(pred)
                    )
                else:
                    wanted = tgt.low <= tree.value[leaf, 0] <= tgt.high
            else:
                up = _boost_up(forest, tgt, pred, classes, int(forest.tree_output[t]))
                diff = tree.value[leaf, 0] - tree.value[leaf_x, 0]
                wanted = diff > 0 if up else diff < 0
            if not wanted:
                continue
            lower, upper = _path_box(tree, leaf, len(x))
            cand = _candidate(
                x, lower, upper, eps, rc, mode, cost.weights if cost.separable else None
            )
            if cand is None:
                continue
            c = (
                cost(x, cand[None, :])[0]
                if cost.function is not None
                else scalar_cost(cost.name, cost.weights, x, cand)
            )
            if not meets(_predict_one(model, cand)):
                continue
            if c < best[2]:
                best = (True, cand, c, t, leaf)
    return best


def _boost_up(forest, tgt, pred, classes, output):
    if classes is None:
        return pred < tgt.low
    if forest.n_outputs == 1:
        want = tgt.index if tgt.kind == "class" else 1 - classes.index(pred)
        return want == 1
    if tgt.kind == "class":
        return output == tgt.index
    return output != classes.index(pred)
