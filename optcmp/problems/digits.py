"""The digits data: 1,797 images of 8 x 8 pixels (values 0-16) of the digits 0-9.

The UCI "Optical Recognition of Handwritten Digits" test set as scikit-learn's
``load_digits`` ships it (CC BY 4.0), stored here (``digits.npz``, 45 kB) so that no extra
package is needed. :func:`load_digits` scales the pixels to [0, 1] and splits the rows, in a
fixed random order, into 1,437 training and 360 validation rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: Rows of the validation split.
N_VALID = 360


def load_digits() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``((X_train, y_train), (X_valid, y_valid))``: float64 pixels in [0, 1], int64 labels.

    Returns
    -------
    tuple
        1,437 training and 360 validation rows of 64 pixels; the split is a permutation
        drawn from ``numpy.random.default_rng(0)``.
    """
    with np.load(Path(__file__).with_name("digits.npz")) as f:
        X = f["images"].astype(np.float64) / 16.0
        y = f["target"].astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    tr, va = order[:-N_VALID], order[-N_VALID:]
    return (X[tr], y[tr]), (X[va], y[va])


__all__ = ["N_VALID", "load_digits"]
