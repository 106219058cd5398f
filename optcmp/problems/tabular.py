"""Tabular data for the regression problems: arrays, DataFrame columns and CSV files, checked.

Both regression problems build from your data through these functions: the same bad data is
refused with the same messages.
"""

from __future__ import annotations

import csv
import difflib
import inspect
import io
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np

from optcmp._io import check_memory
from optcmp._memory import aligned_empty
from optcmp.problems.base import Optimum, StoredProblem, read_only


class TabularProblem(StoredProblem):
    """A problem on a design matrix ``A = [X, 1]`` (the intercept column where fitted) and ``y``.

    Subclasses set ``_layout`` and ``_spec`` and define ``from_arrays`` (for :meth:`_from_csv`).
    """

    _spec: dict[str, Any]

    def _set_data(self, X: np.ndarray, y: np.ndarray, fit_intercept: bool,
                  feature_names: Sequence[str] | None, order: Literal["C", "F"] = "C") -> None:
        """Keep ``A`` (in memory order ``order``), ``y`` and the feature names; no optimum or
        Lipschitz constant yet."""
        n, d = X.shape
        self.fit_intercept = bool(fit_intercept)
        self.feature_names = (list(feature_names) if feature_names is not None
                              else [f"x{j}" for j in range(d)])
        A = aligned_empty((n, d + int(fit_intercept)), np.float64, order)
        A[:, :d] = X
        if fit_intercept:
            A[:, d] = 1.0
        yc = aligned_empty(y.shape)
        yc[...] = y
        self._data = read_only({"A": A, "y": yc})
        self._optimum: Optimum | None = None
        self._lipschitz: float | None = None

    def spec(self) -> dict[str, Any]:
        return dict(self._spec)

    @classmethod
    def _from_csv(cls, path: str | os.PathLike[str], features: Sequence[str] | None,
                  targets: Sequence[str] | str | None, delimiter: str,
                  kwargs: dict[str, Any]) -> Any:
        """``from_arrays`` on columns of a CSV file (default: the last one is the target)."""
        path = os.fspath(path)
        header, rows, lines = read_csv(path, delimiter)
        if targets is None:
            targets = header[-1]
        if features is None:
            tl = set([targets] if isinstance(targets, str) else targets)
            features = [h for h in header if h not in tl]
        features, target_list = check_columns(header, features, targets)
        data = csv_matrix(path, header, rows, lines, features + target_list)
        X = data[:, : len(features)]
        y = data[:, len(features)] if isinstance(targets, str) else data[:, len(features):]
        kwargs.setdefault("feature_names", features)
        if "target_names" in inspect.signature(cls.from_arrays).parameters:  # type: ignore[attr-defined]
            kwargs.setdefault("target_names", target_list)
        kwargs.setdefault("name", os.path.splitext(os.path.basename(path))[0])
        prob = cls.from_arrays(X, y, **kwargs)  # type: ignore[attr-defined]
        prob._spec["source"] = f"csv:{os.path.abspath(path)}"
        return prob


def refuse_unknown(func: Any, unknown: dict[str, Any]) -> None:
    """Refuse keyword arguments ``func`` does not take, naming the ones it does."""
    if not unknown:
        return
    allowed = [n for n, p in inspect.signature(func).parameters.items()
               if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    bad = sorted(unknown)
    close = difflib.get_close_matches(bad[0], allowed, 1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise TypeError(f"{func.__qualname__}() got unknown keyword argument(s) {bad}{hint}; it "
                    f"takes {allowed}")


def check_count(name: str, value: Any, lo: int = 1) -> None:
    """Refuse ``value`` unless it is an integer >= ``lo`` (1: positive, 0: non-negative)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        kind = "a positive" if lo == 1 else "a non-negative"
        raise ValueError(f"{name} must be {kind} integer, got {value!r}")


def as_float_matrix(name: str, a: Any, columns: Sequence[str] | None = None) -> np.ndarray:
    """``a`` as a C-contiguous float64 array; non-numeric and complex data are refused."""
    try:
        arr = np.asarray(a)
    except ValueError as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array (every row the same length); "
                         f"got rows of different lengths ({exc})") from None
    if arr.dtype == object or arr.dtype.kind in "mM" or not (
            np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}. Convert or drop "
                         "non-numeric columns.")
    if np.iscomplexobj(arr):
        raise ValueError(f"{name} must be real-valued; got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool; only ``True``/``False`` (numpy's too) are accepted."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {type(value).__name__} {value!r:.80}")


def check_label(name: str, value: Any) -> str:
    """``value`` as a problem's display name: a non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string (shown in tables), got {value!r:.80}")
    return value


def check_finite(name: str, a: np.ndarray, columns: Sequence[str] | None = None) -> None:
    """Refuse NaN and inf: the message counts them and names the first (row, column, label)."""
    bad = ~np.isfinite(a)
    nbad = int(bad.sum())
    if nbad:
        idx = np.argwhere(bad)[0]
        where = f"row {int(idx[0])}"
        if a.ndim == 2:
            col = int(idx[1])
            label = f" ({columns[col]!r})" if columns is not None and col < len(columns) else ""
            where += f", column {col}{label}"
        raise ValueError(f"{name} contains {nbad} non-finite value(s) (NaN or inf); first at "
                         f"{where}. Drop or impute them before building the problem.")


def check_scale(name: str, a: np.ndarray, columns: Sequence[str] | None = None) -> None:
    """Refuse a column whose sum of squares float64 cannot hold (overflow to inf, or underflow
    to 0 from nonzero values): least squares, its gradient, curvature and optimum need it."""
    a2 = a.reshape(a.shape[0], -1)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        ss = np.einsum("ij,ij->j", a2, a2)
    big = ~np.isfinite(ss)
    tiny = (ss == 0) & np.any(a2 != 0, axis=0)
    if not (big.any() or tiny.any()):
        return
    j = int(np.flatnonzero(big | tiny)[0])
    label = f" ({columns[j]!r})" if columns is not None and j < len(columns) else ""
    col = np.abs(a2[:, j])
    i = int(np.argmax(col)) if big[j] else int(np.argmax(np.where(col > 0, -col, -np.inf)))
    if big[j]:
        why = (f"values up to {col[i]:.3g} (row {i}): their sum of squares exceeds what float64 "
               f"can hold ({np.finfo(np.float64).max:.3g})")
    else:
        why = (f"values as small as {col[i]:.3g} (row {i}): their squares underflow to 0 in "
               "float64")
    raise ValueError(
        f"{name} column {j}{label} has {why}, so the objective, its gradient and curvature and "
        "the optimum cannot be computed. Rescale the column (e.g. divide it by its standard "
        "deviation, or change its units)")


def check_names(what: str, names: Sequence[str] | None, n: int, array: str) -> None:
    """``feature_names``/``target_names``: one distinct name per column of ``array``."""
    if names is None:
        return
    if isinstance(names, str):
        raise ValueError(f"{what} must be a list of column names, got the string {names!r}")
    names = list(names)
    if len(names) != n:
        extra = (f"column(s) {list(range(len(names), n))} of {array} have no name"
                 if len(names) < n else f"name(s) {names[n:]} have no column in {array}")
        raise ValueError(f"{what} has {len(names)} name(s) {names} but {array} has {n} "
                         f"column(s): {extra}; give one name per column")
    dups = sorted(str(x) for x, c in Counter(names).items() if c > 1)
    if dups:
        raise ValueError(f"{what} names column(s) {dups} more than once; names must be unique")


def check_columns(available: list[str], features: Sequence[str] | str,
                  targets: Sequence[str] | str) -> tuple[list[str], list[str]]:
    """The feature and target column lists, checked against the available columns."""
    if isinstance(features, str):
        features = [features]
    target_list = [targets] if isinstance(targets, str) else list(targets)
    features = list(features)
    known = set(available)
    unknown = [c for c in features + target_list if c not in known]
    if unknown:
        raise KeyError(f"unknown column(s) {unknown}; available columns: {available}")
    if not target_list:
        raise ValueError("targets is empty: name at least one target column")
    if not features:
        raise ValueError("features is empty: name at least one feature column")
    overlap = sorted(set(features) & set(target_list))
    if overlap:
        raise ValueError(f"column(s) {overlap} are both features and targets")
    return features, target_list


def check_frame_column(name: str, col: Any) -> None:
    """Refuse a DataFrame column whose values are not measurements: categorical (whatever its
    categories' dtype: integer category codes are labels, not numbers), dates, durations, text."""
    if getattr(col.dtype, "name", "") == "category":
        cats = list(col.cat.categories)
        shown = ", ".join(map(repr, cats[:5])) + (", ..." if len(cats) > 5 else "")
        raise ValueError(
            f"column {name!r} is categorical (categories {shown}; dtype "
            f"{col.cat.categories.dtype}): its values are labels, not measurements. Convert it "
            f"explicitly (df[{name!r}].astype(float) if the labels are quantities, or one-hot "
            "encode it) or leave it out of features/targets")
    dt = np.asarray(col).dtype
    if dt.kind in "mM" or not (np.issubdtype(dt, np.number) or np.issubdtype(dt, np.bool_)):
        raise ValueError(f"column {name!r} is not numeric (dtype {col.dtype}); "
                         "convert it or leave it out of features/targets")


def read_csv(path: str, delimiter: str) -> tuple[list[str], list[list[str]], list[int]]:
    """The header, the non-blank data rows and their file line numbers of a CSV file (checked)."""
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise ValueError(f"delimiter must be a single character, got {delimiter!r}")
    text = _read_utf8(path)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = _read_header(path, reader, delimiter)
        # the parsed cells (a Python string each, about 64 bytes) and the float matrix
        n_lines = max(text.count("\n"), 1)
        check_memory(n_lines * len(header) * 72 + 2 * len(text),
                     f"reading {path} ({len(header):,} columns x about {n_lines:,} lines)")
        rows: list[list[str]] = []
        lines: list[int] = []  # file line of each data row (header = line 1)
        for rec in reader:
            if rec and any(cell.strip() for cell in rec):
                rows.append(rec)
                lines.append(reader.line_num)
    except csv.Error as exc:  # e.g. a cell over the csv module's field size limit
        limit = csv.field_size_limit()
        raise ValueError(f"{path}, line {max(reader.line_num, 1)}: cannot be read as CSV ({exc}; a "
                         f"cell may hold at most {limit:,} characters: is it quoted right, or "
                         "not a CSV file?)") from None
    if not rows:
        raise ValueError(f"{path}: no data rows after the header")
    return header, rows, lines


def _read_utf8(path: str) -> str:
    """The text of a UTF-8 file, without a leading byte-order mark."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at position {exc.start}, "
            f"line {line}); save the file as UTF-8") from None
    if text.startswith("\ufeff"):  # a byte-order mark (spreadsheet exports)
        text = text[1:]
    return text


def _read_header(path: str, reader: Iterator[list[str]], delimiter: str) -> list[str]:
    """The column names of the first row: present, split by ``delimiter``, unique."""
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise ValueError(f"{path}: the file is empty; expected a header row") from None
    if len(header) == 1:
        for sep in (";", "\t", "|", ","):
            if sep != delimiter and sep in header[0]:
                raise ValueError(
                    f"{path}: only one column found in the header {header[0]!r}; is the "
                    f"file separated by {sep!r}? (use delimiter={sep!r}; on the command "
                    f"line --delimiter {sep!r})")
    dups = sorted(h for h, c in Counter(header).items() if c > 1)
    if dups:
        raise ValueError(
            f"{path}: duplicate column name(s) {dups} in the header {header}; column names "
            "must be unique")
    return header


def csv_matrix(path: str, header: list[str], rows: list[list[str]], lines: list[int],
               cols: list[str]) -> np.ndarray:
    """The float matrix of columns ``cols`` of the rows: no ragged row, no bad or missing cell."""
    index = {h: i for i, h in enumerate(header)}
    data = np.empty((len(rows), len(cols)))
    for r, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {lines[r]}: {len(row)} fields, the header has {len(header)}")
        for c, name in enumerate(cols):
            cell = row[index[name]].strip()
            if not cell:
                data[r, c] = np.nan  # a missing value, reported below with NaN/inf
                continue
            try:
                if "_" in cell or not cell.isascii():  # float() reads '1_000', '１２', '١٢'
                    raise ValueError(cell)
                data[r, c] = float(cell)
            except ValueError:
                raise ValueError(
                    f"{path}, line {lines[r]}: column {name!r} is not numeric: it holds {cell!r}"
                    f"{_cell_hint(cell)}") from None
    bad = ~np.isfinite(data)
    nbad = int(bad.sum())
    if nbad:
        r0, c0 = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{path}: {nbad} missing or non-finite value(s) (empty, NaN or inf); first at "
            f"line {lines[r0]}, column {cols[c0]!r}. Drop or impute them first.")
    return data


def _cell_hint(cell: str) -> str:
    """Why a cell that looks like a number is refused."""
    if "_" in cell:
        return " (digit separators such as '_' are not read as numbers: write it without them)"
    if not cell.isascii():
        return " (only ASCII digits 0-9 are read as numbers)"
    if "," in cell:
        return " (a decimal comma or a thousands separator? write 1234.5)"
    return ""


def fingerprint(*arrays: np.ndarray) -> str:
    """A short hash of arrays' shapes and bytes, recorded in the spec of a problem built from
    them (two problems with the same fingerprint hold the same data)."""
    import hashlib

    h = hashlib.sha256()
    for a in arrays:
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


__all__ = ["TabularProblem", "as_float_matrix", "check_columns", "check_count", "check_finite",
           "check_frame_column", "check_names", "check_scale", "csv_matrix", "fingerprint", "read_csv",
           "refuse_unknown"]
