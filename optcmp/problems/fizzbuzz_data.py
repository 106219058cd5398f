"""The FizzBuzz data: the numbers, their binary digits, their classes and the train/test split.

:class:`optcmp.problems.FizzBuzzMLP` is built on these; they are importable from
:mod:`optcmp.problems.fizzbuzz` too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Class names, in the order of the one-hot columns.
CLASSES = ("fizzbuzz", "buzz", "fizz", "number")


def fizzbuzz_labels(numbers: Any) -> np.ndarray:
    """FizzBuzz class of each integer.

    Parameters
    ----------
    numbers : array_like of int, shape (n,)

    Returns
    -------
    ndarray of int64, shape (n,)
        0 for a multiple of 15 ("fizzbuzz"), 1 for another multiple of 5 ("buzz"), 2 for another
        multiple of 3 ("fizz"), 3 otherwise ("number"); see :data:`CLASSES`.
    """
    n = np.asarray(numbers, dtype=np.int64)
    return np.select([n % 15 == 0, n % 5 == 0, n % 3 == 0], [0, 1, 2], default=3).astype(np.int64)


def binary_encode(numbers: Any, n_bits: int) -> np.ndarray:
    """Binary digits of non-negative integers, most significant bit first.

    Parameters
    ----------
    numbers : array_like of int, shape (n,)
        Integers in ``[0, 2**n_bits)``.
    n_bits : int
        Width of the encoding.

    Returns
    -------
    ndarray of float64, shape (n, n_bits)
        0/1 digits; column 0 is the most significant bit.

    Raises
    ------
    ValueError
        A negative number, or one that does not fit in ``n_bits`` bits (the message names it).
    """
    n = np.asarray(numbers, dtype=np.int64)
    if n.size and int(n.min()) < 0:
        raise ValueError(f"binary_encode needs non-negative integers, got {int(n.min())}")
    if n.size and int(n.max()) >= 2**n_bits:
        raise ValueError(f"{int(n.max())} does not fit in n_bits={n_bits} bits "
                         f"(largest is {2**n_bits - 1}); raise n_bits to at least "
                         f"{int(n.max()).bit_length()}")
    shifts = np.arange(n_bits - 1, -1, -1, dtype=np.int64)
    return ((n[:, None] >> shifts[None, :]) & 1).astype(np.float64)


def split_numbers(low: int, high: int, n_bits: int, test_fraction: float, seed: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The numbers ``low .. high - 1``, their digits and classes, and a seeded train/test split.

    Parameters
    ----------
    low, high : int
        The numbers ``low .. high - 1`` (a non-empty range).
    n_bits : int
        Width of the binary encoding (:func:`binary_encode`); every number must fit.
    test_fraction : float
        Fraction of the numbers held out, in ``[0, 1)``.
    seed : int
        Seed of the permutation.

    Returns
    -------
    numbers : ndarray of int64, shape (n,)
    X : ndarray of float64, shape (n, n_bits)
        The binary digits of ``numbers``.
    labels : ndarray of int64, shape (n,)
        :func:`fizzbuzz_labels` of ``numbers``.
    train_idx, test_idx : ndarray of int
        Row indices: the test rows are the first ``round(n * test_fraction)`` of a
        ``numpy.random.default_rng(seed)`` permutation (sorted), the training rows the rest, in
        permutation order.

    Raises
    ------
    ValueError
        A number that does not fit in ``n_bits``, or a ``test_fraction`` that leaves no
        training row.
    """
    numbers = np.arange(low, high, dtype=np.int64)
    X = binary_encode(numbers, n_bits)  # raises when a number does not fit
    labels = fizzbuzz_labels(numbers)
    n = numbers.size
    n_test = int(round(n * float(test_fraction)))
    if n - n_test < 1:
        raise ValueError(f"test_fraction={test_fraction!r} leaves no training rows out of {n}")
    perm = np.random.default_rng(seed).permutation(n)
    test_idx, train_idx = np.sort(perm[:n_test]), perm[n_test:]
    return numbers, X, labels, train_idx, test_idx


__all__ = ["CLASSES", "binary_encode", "fizzbuzz_labels", "split_numbers"]
