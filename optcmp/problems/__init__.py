"""Backend-agnostic problems."""

from optcmp.problems.base import Optimum, ParamLayout, Problem
from optcmp.problems.fizzbuzz import FizzBuzzMLP
from optcmp.problems.linear_regression import LinearRegression

#: Problems by command-line name; values build the default instance.
PROBLEMS: dict[str, type[Problem]] = {"linear_regression": LinearRegression,
                                      "fizzbuzz": FizzBuzzMLP}

__all__ = ["PROBLEMS", "FizzBuzzMLP", "LinearRegression", "Optimum", "ParamLayout", "Problem"]
