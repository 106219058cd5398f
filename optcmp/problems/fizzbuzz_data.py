"""The FizzBuzz data of :class:`optcmp.problems.FizzBuzzMLP`: numbers, digits, classes, split."""

from __future__ import annotations

from typing import Any

import numpy as np

#: Class names, in the order of the one-hot columns.
CLASSES = ("fizzbuzz", "buzz", "fizz", "number")


def fizzbuzz_labels(numbers: Any) -> np.ndarray:
    """FizzBuzz class of each integer."""
    n = np.asarray(numbers, dtype=np.int64)
    return np.select([n % 15 == 0, n % 5 == 0, n % 3 == 0], [0, 1, 2], default=3).astype(np.int64)


def binary_encode(numbers: Any, n_bits: int) -> np.ndarray:
    """Binary digits of non-negative integers, most significant bit first."""
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
    """The numbers ``low .. high - 1``, their digits and classes, and a seeded train/test split."""
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
