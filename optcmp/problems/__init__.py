"""Backend-agnostic problems."""

from __future__ import annotations

from typing import Any

from optcmp.problems.base import Optimum, ParamLayout, Problem
from optcmp.problems.digits import digits_cnn, digits_mlp, load_digits
from optcmp.problems.fizzbuzz import FizzBuzzMLP
from optcmp.problems.function import FunctionProblem, estimate_optimum, from_function
from optcmp.problems.gradcheck import GradientCheck, GradientError, check_gradient
from optcmp.problems.linear_regression import LinearRegression
from optcmp.problems.logistic_regression import LogisticRegression
from optcmp.problems.mgh import MGHProblem
from optcmp.problems.mgh_functions import MGH_NAMES
from optcmp.problems.native import ModelProblem, from_jax, from_keras, from_torch

#: Problems by command-line name; values build the default instance. One whose spec says
#: ``"source": "generated"`` is rebuilt on a worker from its spec (:func:`problem_from_spec`).
PROBLEMS: dict[str, type[Problem]] = {"linear_regression": LinearRegression,
                                      "fizzbuzz": FizzBuzzMLP,
                                      "logistic_regression": LogisticRegression,
                                      "mgh": MGHProblem}


def problem_from_spec(spec: dict[str, Any]) -> Problem:
    """Build the problem a spec describes, generating its data from the spec's seed.

    Parameters
    ----------
    spec : dict
        Output of ``problem.spec()`` for a registered problem with generated data.

    Returns
    -------
    Problem
        A new problem whose ``spec()`` equals ``spec``.
    """
    name = spec.get("problem")
    cls = PROBLEMS.get(str(name))
    if cls is None:
        raise ValueError(f"unknown problem {name!r} in spec; registered: {', '.join(PROBLEMS)}")
    return cls.from_spec(dict(spec))


def rebuildable(problem: Problem) -> bool:
    """Whether :func:`problem_from_spec` rebuilds ``problem`` (registered class, generated data).

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    bool
    """
    spec = problem.spec()
    return (PROBLEMS.get(str(spec.get("problem"))) is type(problem)
            and spec.get("source") == "generated")


__all__ = ["PROBLEMS", "FizzBuzzMLP", "FunctionProblem", "LinearRegression", "LogisticRegression",
           "MGHProblem", "MGH_NAMES", "Optimum", "GradientCheck", "GradientError", "ParamLayout",
           "Problem", "check_gradient", "estimate_optimum", "from_function",
           "from_jax", "from_keras", "from_torch", "ModelProblem", "digits_cnn", "digits_mlp", "load_digits", "problem_from_spec",
           "rebuildable"]
