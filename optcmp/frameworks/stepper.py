"""The stepper contract the run loop drives, and the adapters that implement it.

A :class:`Stepper` is what a run needs from a framework: :meth:`~Stepper.init` (place data,
compile, warm up: untimed), :meth:`~Stepper.ready` (get the next steps ready: untimed),
:meth:`~Stepper.run` (``n`` steps: timed by the loop), :meth:`~Stepper.x_numpy` (the iterate
on the host), :meth:`~Stepper.save` and :meth:`~Stepper.load` (the run's state as a value,
and going back to it) and :meth:`~Stepper.close`. Re-running a block up to the step where a
target was met, replaying a fused block to read an iterate inside it, pausing and resuming
a run: all of that is the loop's business, done with these members and nothing else.

The state is a value the loop holds only where it may go back (:meth:`~Stepper.save`): a
functional stepper (optcmp's reference rule, optax) hands out references to its arrays, an
in-place one (``torch.optim``, Keras variables) copies; between saves the stepper updates its
own state as its framework does best. :class:`Adapter` implements the contract for optcmp's
adapters from smaller hooks (:meth:`Adapter.setup`, :meth:`Adapter.step`,
:meth:`Adapter.run_block`, ...); a library that drives its own loop (scipy) is a
:class:`LoopAdapter` and runs to completion in :meth:`LoopAdapter.minimize`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from optcmp.batching import BatchOrder
from optcmp.frameworks.base import gradient_kind, host_key, run_layout
from optcmp.implementation import Implementation
from optcmp.optimizers.base import NotApplicable, OptimizerSpec, optimizer_info

if TYPE_CHECKING:
    from optcmp.frameworks.base import Backend
    from optcmp.problems.base import Problem


@dataclass
class Block:
    """What :meth:`Stepper.run` reports: ``n`` steps, backend values read off the clock.

    ``fun``/``grad_norm``: full-batch steps' objectives at their starting iterates and gradient
    norms (one per step, a sequence or a backend vector; a single value for one step);
    ``nfev``/``njev``: evaluations per step; ``nit``: the library's own iterations of a
    one-step block (``torch.optim.LBFGS``); ``kept``: the iterates a spanning block kept at its
    observations; ``stopped``: called off the clock, the library's reason for ending by its own
    test, or None.
    """

    n: int
    fun: Any = None
    grad_norm: Any = None
    nfev: int = 1
    njev: int = 1
    kept: Any = None
    nit: int | None = None
    stopped: Callable[[], str | None] | None = None


class Stepper(ABC):
    """The contract a framework implements so that optcmp's loop can time it.

    Attributes the loop reads: :attr:`stochastic` (minibatch steps), :attr:`steps_per_epoch`,
    :attr:`backend` (its ``to_numpy`` reads a block's values), :attr:`execution` (``"step"``:
    one step per :meth:`run`; ``"fused"``: many), :attr:`spans` (a fused minibatch block may
    span observations, keeping the iterates at them), :attr:`span_kept` (how many),
    :attr:`block_max` (most full-batch steps of one fused block) and :attr:`loop` (a library
    that drives its own loop).
    """

    loop: ClassVar[bool] = False
    block_max: ClassVar[int] = 1024
    backend: Backend
    stochastic: bool = False
    evaluates_apart: bool = False
    execution: str = "step"
    spans: bool = False
    span_kept: int = 1
    warmup_time: float = 0.0
    """Seconds :meth:`init` spent warming up (compiling, first-call allocations)."""
    fallback: str = ""
    """Why :meth:`init` ran ``"step"`` where ``"fused"`` was asked for (``""``: it did not)."""

    @abstractmethod
    def init(self, execution: str = "step", why_step: str = "") -> None:
        """Place the data and ``x0``, choose the execution (``"step"``, ``"fused"`` or
        ``"auto"``; ``why_step``: the caller's reason for steps one by one), compile and warm
        up, off the clock."""

    @abstractmethod
    def ready(self, n: int) -> int:
        """Get up to ``n`` next steps ready off the clock; the steps :meth:`run` takes next."""

    @abstractmethod
    def run(self, n: int, first: int | None = None, every: int = 1,
            iterations: int | None = None) -> Block:
        """``n`` steps from the current state, timed by the caller as one (a spanning block
        keeps the iterates after ``first``, ``first + every``, ... steps; ``iterations``
        caps a step that does several of the library's own)."""

    @abstractmethod
    def x_numpy(self) -> np.ndarray:
        """The current iterate, copied to the host as a flat float64 vector (off the clock)."""

    @abstractmethod
    def save(self) -> Any:
        """The run's state now (iterate, optimizer state, step) as a value later steps do not
        change, for :meth:`load`."""

    @abstractmethod
    def load(self, saved: Any) -> None:
        """Go back to a state from :meth:`save`."""

    def close(self) -> None:  # noqa: B027 - most steppers hold nothing another run can take
        """Give back what the run borrowed (once its final iterate is read)."""

    @property
    def steps_per_epoch(self) -> int | None:
        """Minibatches in one pass over the data (stochastic steppers), else ``None``."""
        return None


class Adapter(Stepper):
    """Runs one optimizer spec on one backend: :class:`Stepper` built from hooks.

    :meth:`init` calls :meth:`setup`, :meth:`fuse_blocker`, :meth:`prepare_execution` and
    :meth:`warmup`; :meth:`run` calls :meth:`run_block` (fused) or :meth:`step`; a subclass
    implements :meth:`step` and :meth:`x_numpy`, and :meth:`save`/:meth:`load` where its
    blocks may be run again. :class:`MinibatchAdapter` adds the minibatch sequence.
    """

    fuses_full_batch: ClassVar[bool] = False
    """Whether :meth:`run_block` can run full-batch steps fused (minibatch steps always can)."""
    reads_transposed: ClassVar[bool] = True
    """Whether the run may hold the problem's product-only arrays transposed (:func:`run_layout`)."""
    implementation: str = ""
    framework: ClassVar[str] = ""
    """The framework of the native declaration this adapter runs ("" for the reference rule)."""
    describes: ClassVar[str] = ""
    """:attr:`implementation` before setup, formatted with the declaration's ``name``."""

    def __init__(self, spec: OptimizerSpec, problem: Problem, backend: Backend, x0: np.ndarray,
                 seed: int = 0, *, gradient: str = "auto") -> None:
        self.spec = spec
        self.info = optimizer_info(spec.name)
        #: The optimizer's native declaration for :attr:`framework` (None for the reference).
        self.decl: Any = self.info.native(self.framework) if self.framework else None
        self.implemented_by = Implementation(self.framework or "optcmp", spec.name)
        if self.decl is not None:
            self.implementation = self.describes.format(name=self.decl.name)
            self.implemented_by = Implementation(self.framework, self.decl.name)
            why = self.decl.unsupported(spec.hyperparameters)
            if why is not None:  # another convention than the framework's: skipped, not run
                raise NotApplicable(f"{spec.name} impl='native': {why}")
        self.stochastic = self.info.minibatch(spec.hyperparameters)
        #: The judged iterate is not the one the step's gradient is taken at (``eval_at``).
        self.evaluates_apart = spec.hyperparameters.get("eval_at", "y") != "y"
        self.problem = problem
        self.backend = backend
        self.x0 = np.asarray(x0, dtype=np.float64)
        self.seed = int(seed)
        self.hyper: dict[str, Any] = dict(spec.hyperparameters)
        self.data: dict[str, Any] = {}
        #: the arrays :meth:`setup` placed, and whether all are read in place
        self._placed: tuple[dict[str, Any], bool] | None = None
        #: Data layout chosen at placement (``RunResult.conditions.layout``).
        self.layout, self._transposed = run_layout(backend, problem, self.stochastic)
        if self._transposed and not self.reads_transposed:
            self.layout, self._transposed = "row-major", ()
        #: How minibatch steps gather their rows (``RunResult.conditions.gather``; "": full batch).
        self.gather = "per-step" if self.stochastic else ""
        #: The gradient the steps compute (``RunResult.conditions.gradient``) from the run's setting:
        #: ``"analytic"`` (the problem's gradient against ops, or numpy's) or ``"autodiff"``.
        self.gradient = gradient_kind(backend, problem, gradient)

    @property
    def compiled(self) -> str:
        """How the timed step is compiled (``RunResult.conditions.compiled``): the backend's compiler."""
        return self.backend.compiler

    def _options(self) -> dict[str, Any]:
        """The native's arguments for the resolved hyperparameters (every one explicit)."""
        assert self.decl is not None, f"{type(self).__name__} runs no native declaration"
        return dict(self.decl.options(self.hyper))

    # -- the contract, from the hooks below
    def init(self, execution: str = "step", why_step: str = "") -> None:
        """:meth:`setup`, the execution (fused unless :meth:`fuse_blocker` or ``why_step``
        says why not), :meth:`prepare_execution` and :meth:`warmup`."""
        self.setup()
        why = "" if execution == "step" or self.loop else self.fuse_blocker() or why_step
        self.fallback = why if execution == "fused" else ""
        self.prepare_execution("step" if execution == "step" or self.loop or why else "fused")
        self.warmup_time = self.warmup()

    def ready(self, n: int) -> int:
        """Nothing to get ready: ``n`` steps when fused, else one."""
        return max(1, n) if self.execution == "fused" else 1

    def run(self, n: int, first: int | None = None, every: int = 1,
            iterations: int | None = None) -> Block:
        """:meth:`run_block` when fused, else one :meth:`step`."""
        if self.execution == "fused":
            return self.run_block(n, first, every)
        return self.step()

    def save(self) -> Any:
        """The run's state (see :meth:`Stepper.save`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot save its state")

    def load(self, saved: Any) -> None:
        """Go back to a saved state (see :meth:`Stepper.load`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot load a state")

    @property
    def placement(self) -> str:
        """Whether the steps read the data in the host memory the problem holds
        (``"shared"``: no copy per run) or in the run's own copy (``"copied"``); ``""``: not
        placed by :meth:`~optcmp.frameworks.base.Backend.place`."""
        placed, shared = getattr(self, "_placed", None) or (None, False)
        if placed is None or self.data.keys() != placed.keys():
            return ""
        same = shared and all(self.data[k] is v for k, v in placed.items())
        return "shared" if same else "copied"

    def screen_data(self) -> dict[str, Any] | None:
        """The whole training data as placed, for the run's screen (None before placement)."""
        return self.data or None

    # -- hooks
    def setup(self) -> None:
        """Place data and the iterate on the device, resolve hyperparameters, compile."""
        self.data, shared = self.backend.place_sharing(
            self.problem.train_data, self.layout, self._transposed, keep=host_key(self.problem))
        self._placed = (dict(self.data), shared)

    def prepare_execution(self, execution: str) -> None:
        """Get ready to run ``"step"`` or ``"fused"`` (after :meth:`setup`)."""
        self.execution = execution

    def run_block(self, n: int, first: int | None = None, every: int = 1) -> Block:
        """``n`` steps in as few calls as the adapter can (default: a loop over :meth:`step`)."""
        outs = [self.step() for _ in range(n)]
        last = outs[-1]
        if self.stochastic:
            return Block(n, None, None, last.nfev, last.njev)
        return Block(n, [o.fun for o in outs], [o.grad_norm for o in outs], last.nfev,
                     last.njev)

    def fuse_blocker(self) -> str:
        """Why this run's steps cannot run fused (``""``: they can)."""
        if self.evaluates_apart:
            return (f"the judged iterate (eval_at={self.hyper['eval_at']!r}) is not the one the "
                    "gradient is taken at: the objective is evaluated there after every step")
        if self.stochastic or self.fuses_full_batch:
            return ""
        return f"{type(self).__name__} cannot fuse full-batch steps"

    def warmup(self) -> float:
        """Run the first (tracing/compiling) step untimed, restore the state; its seconds."""
        return 0.0

    @abstractmethod
    def step(self) -> Block:
        """One iteration (timed by the caller), reported as a one-step :class:`Block`."""

    def resolve_learning_rate(self) -> None:
        """Replace ``learning_rate="auto"`` by ``1 / L`` and an epoch schedule by steps."""
        if self.hyper.get("learning_rate") == "auto":
            try:
                L = self.problem.lipschitz()
            except NotImplementedError as exc:
                raise NotApplicable(
                    f"{self.spec.name}: learning_rate='auto' needs the gradient's Lipschitz "
                    f"constant, which problem {self.problem.name!r} does not know; "
                    "give learning_rate as a positive float"
                ) from exc
            self.hyper["learning_rate"] = 1.0 / L
        self.resolve_schedule()

    def resolve_schedule(self) -> None:
        """Replace a ``unit="epoch"`` schedule by its step-based form (one epoch: one step of
        full batch, ``ceil(n_samples / batch_size)`` minibatches), the original kept under
        ``schedule_as_given``."""
        text = self.hyper.get("schedule")
        if not isinstance(text, str):
            return
        from optcmp.optimizers.schedule import parse

        sch = parse(text)
        if sch.unit == "epoch":
            self.hyper["schedule_as_given"] = text  # what the user wrote, next to the step form
            spe = 1
            if self.stochastic:
                spe = BatchOrder(self.problem.n_samples, int(self.hyper["batch_size"]),
                                 False, self.seed).steps_per_epoch
            self.hyper["schedule"] = str(sch.per_step(spe))


class LoopAdapter(Adapter):
    """An adapter whose library drives the loop (scipy): :meth:`minimize`, not :meth:`run`."""

    loop = True

    def step(self) -> Block:  # pragma: no cover - loop adapters are driven by minimize()
        raise TypeError(f"{type(self).__name__} drives its own loop; call minimize()")

    @abstractmethod
    def minimize(self, monitor: Any) -> dict[str, Any]:
        """Run to completion, calling ``monitor.on_iteration`` after every iteration."""


#: Entries (epochs x rows) of the index vector of a fused block that spans epochs: 2**20
#: int64, 8 MB, placed off the clock (the epochs no block has reached are zeros, not drawn;
#: a larger vector costs a run of one epoch its copy). A problem with more than half as
#: many rows cuts its blocks at every epoch (an epoch is then thousands of steps, and a cut
#: costs nothing measurable).
SPAN_INDEX = 1 << 20
#: Most epochs the index vector of one spanning block holds.
SPAN_EPOCHS = 128
#: Bytes of the buffer of iterates one spanning block keeps at its observations (at most 128).
SPAN_KEPT_BYTES = 1 << 26
#: Rows a minibatch step gathers at once, in the epoch's order, when it needs new ones: the
#: copy is spread over that many rows' minibatches, and a run that ends inside an epoch
#: gathers at most one chunk it does not use.
CHUNK_ROWS = 1 << 14


class MinibatchAdapter(Adapter):
    """An adapter with the minibatch sequence of stochastic runs (reference and natives).

    Minibatch ``k`` is rows ``order.bounds(k)`` of epoch ``k // steps_per_epoch``'s row order
    (:class:`~optcmp.batching.BatchOrder`, drawn from the run's seed): the same rows on every
    backend and for every implementation. In :meth:`ready`, off the clock, the epoch's
    index vector is placed on the device; a step that needs new rows gathers the next
    :data:`CHUNK_ROWS` rows in that order, on the clock, and every step takes its contiguous
    slice of them (a view where slices are views). A compiled
    block that :attr:`~Adapter.spans` epochs gathers inside its loop from an index vector of
    :attr:`span_epochs` epochs' row orders, placed by :meth:`ready` off the clock.
    """

    _k: int

    def ready(self, n: int) -> int:
        """Load the epoch a run crosses into; size a fused block within the epoch (or the
        spanned epochs) and place its row orders."""
        if not self.stochastic:
            return super().ready(n)
        self._next_epoch()
        if self.execution != "fused":
            return 1
        n = max(1, min(n, self._fusable_steps()))
        self._prepare_block(n)
        return n

    def _init_batches(self) -> None:
        """Build the :class:`BatchOrder` from ``batch_size``/``shuffle`` and load epoch 0."""
        if self.problem.n_samples == 0:  # data-free problems have no minibatches
            raise NotApplicable(f"problem {self.problem.name!r} has no training data (no rows "
                                "to draw minibatches from); use a full-batch optimizer")
        self.order = BatchOrder(self.problem.n_samples, int(self.hyper["batch_size"]),
                                bool(self.hyper.get("shuffle", True)), self.seed,
                                drop_last=bool(getattr(self.problem, "drop_last", False)))
        self._epoch_idx: Any = None
        #: the gathered chunk: minibatches [c0, c1) of the epoch, their rows from row r0,
        #: and each minibatch's slice of them where slices are views
        self._chunk = (0, 0, 0)
        self._chunk_rows: dict[str, Any] | None = None
        self._chunk_batches: list[dict[str, Any]] | None = None
        self._chunk_len = max(1, CHUNK_ROWS // self.order.batch_size)
        self._slices_needed = True
        #: how the steps get their rows (``RunResult.conditions.gather``)
        self.gather = f"once per chunk of {CHUNK_ROWS} rows"
        self._all_rows: Any = None
        #: epochs the index vector of a spanning block holds (0: blocks end at every epoch)
        self.span_epochs = 0
        #: most observations one spanning block keeps the iterates of
        self.span_kept = 1
        self._span_at: int | None = None
        self._span_have = 0
        self._span_idx: Any = None
        self._span_host: np.ndarray | None = None
        self._load_epoch(0)

    def _init_span(self, width: int) -> int:
        """Let compiled blocks span epochs where :data:`SPAN_EPOCHS` of them fit the index."""
        n = max(self.order.n_samples, 1)
        epochs = min(SPAN_EPOCHS, SPAN_INDEX // n)
        self.span_epochs = epochs if epochs >= 2 else 0
        self.spans = bool(self.span_epochs)
        self._span_at, self._span_have = None, 0
        self.span_kept = (int(max(1, min(128, SPAN_KEPT_BYTES // (8 * max(width, 1)))))
                          if self.span_epochs else 1)
        return self.span_kept

    def _prepare_block(self, n: int) -> None:
        """Place the row orders of the epochs the next ``n`` steps reach as one index vector
        of :attr:`span_epochs` epochs (one compiled shape; unreached epochs are zeros, epochs
        the previous vector holds are not drawn again)."""
        if not self.span_epochs:
            return
        order = self.order
        rows, spe = order.n_samples, order.steps_per_epoch
        e0 = self._k // spe
        need = min((self._k + max(n, 1) - 1) // spe - e0 + 1, self.span_epochs)
        at, have, prev = self._span_at, self._span_have, self._span_host
        if at == e0 and need <= have:
            return
        keep = (have - (e0 - at) if prev is not None and at is not None and 0 <= e0 - at < have
                else 0)
        idx = np.zeros(self.span_epochs * rows, np.int64)
        if keep:
            assert prev is not None and at is not None
            idx[:keep * rows] = prev[(e0 - at) * rows:(e0 - at + keep) * rows]
        for j in range(keep, max(need, keep)):
            idx[j * rows:(j + 1) * rows] = order.epoch_indices(e0 + j)
        self._span_host, self._span_have = idx, max(need, keep)
        self._span_idx = self.backend.index_array(idx)
        self._span_at = e0

    def _block_rows(self) -> tuple[Any, int]:
        """The index vector of a compiled block and the current step's position in it."""
        spe = self.order.steps_per_epoch
        if self.span_epochs:
            self._prepare_block(1)  # placed already, unless the block is a single step
            assert self._span_at is not None
            return self._span_idx, self._k - self._span_at * spe
        idx = self._epoch_idx if self._epoch_idx is not None else self._all_rows
        return idx, self._k % spe

    def _load_epoch(self, epoch: int) -> None:
        """Place epoch ``epoch``'s row order on the device, off the clock (the steps gather
        its rows on the clock, as a training loop pays for that copy)."""
        self._epoch = epoch
        b, order = self.backend, self.order
        self._epoch_idx = b.index_array(order.epoch_indices(epoch)) if order.shuffle else None
        self._forget_rows()

    def _gather_chunk(self, j: int) -> None:
        """Gather the chunk of rows holding minibatch ``j`` of the epoch, and each
        minibatch's slice of it where slices are views."""
        b, order = self.backend, self.order
        c0 = j - j % self._chunk_len
        c1 = min(c0 + self._chunk_len, order.steps_per_epoch)
        r0, r1 = order.bounds(c0)[0], order.bounds(c1 - 1)[1]
        idx = self._epoch_idx
        rows = b.take_rows(self.data, slice(r0, r1) if idx is None else idx[r0:r1])
        self._chunk, self._chunk_rows = (c0, c1, r0), rows
        self._chunk_batches = None
        if b.slices_are_views:  # each array's slices, then one dict per minibatch
            spans = [slice(lo - r0, hi - r0) for lo, hi in map(order.bounds, range(c0, c1))]
            parts, keys = [[v[s] for s in spans] for v in rows.values()], tuple(rows)
            self._chunk_batches = ([{keys[0]: u, keys[1]: v} for u, v in zip(*parts)]
                                   if len(keys) == 2 else  # the usual pair, without zip()
                                   [dict(zip(keys, p)) for p in zip(*parts)])

    def _forget_rows(self) -> None:
        """Drop the gathered chunk (a new epoch, or the warm-up's end: timed steps gather)."""
        self._chunk, self._chunk_rows, self._chunk_batches = (0, 0, 0), None, None

    def _slice_only_in_blocks(self) -> None:
        """Keep no gathered rows: the fused blocks gather from the index vector themselves."""
        self._slices_needed = False
        self.gather = self.backend.block_gather
        self._forget_rows()

    def _batch(self, k: int | None = None) -> dict[str, Any]:
        """Rows of minibatch ``k`` (default: the next one), gathering its chunk when new."""
        k = self._k if k is None else k
        order = self.order
        j = k % order.steps_per_epoch
        c0, c1, r0 = self._chunk
        if not c0 <= j < c1:
            if not self._slices_needed and self._epoch_idx is not None:
                a, b = order.bounds(k)
                return self.backend.take_rows(self.data, self._epoch_idx[a:b])
            self._gather_chunk(j)
            c0, c1, r0 = self._chunk
        batches = self._chunk_batches
        if batches is not None:
            return batches[j - c0]
        a, b = order.bounds(k)
        assert self._chunk_rows is not None
        return self.backend.take_rows(self._chunk_rows, slice(a - r0, b - r0))

    def _batches(self, k0: int, n: int) -> Iterator[dict[str, Any]]:
        """Minibatches ``k0 .. k0 + n - 1`` (:meth:`_batch`'s), a gathered chunk's slices
        handed out in a run without a call per step."""
        k, end, spe = k0, k0 + n, self.order.steps_per_epoch
        while k < end:
            first = self._batch(k)
            c0, c1, _ = self._chunk
            j, batches = k % spe, self._chunk_batches
            if batches is None or not c0 <= j < c1:
                yield first
                k += 1
                continue
            m = min(c1 - j, end - k)
            for i in range(j - c0, j - c0 + m):
                yield batches[i]
            k += m
            del batches, first  # no reference to this chunk while the next is gathered

    def _warmup_steps(self) -> list[int]:
        """Steps whose minibatches have every shape a run sees: epoch 0's first and last, and
        the first of its last chunk (a chunk of other rows, sliced at full batches)."""
        if not self.stochastic:
            return [0]
        last = self.order.steps_per_epoch - 1
        a, b = self.order.bounds(last)
        steps = {0, last - last % self._chunk_len}
        if b - a != self.order.batch_size:
            steps.add(last)
        return sorted(steps)

    def _step_warmup_steps(self) -> list[int]:
        """:meth:`_warmup_steps` of :meth:`step`, or the first alone where a step is one of a
        fused TensorFlow or JAX block: one compiled program for every batch shape."""
        steps = self._warmup_steps()
        fused = self.execution == "fused" and self.backend.block_gather == "once per block"
        return steps[:1] if fused and self.stochastic else steps

    def _fusable_steps(self) -> int:
        """Minibatches left in the epoch (or in the spanned epochs)."""
        spe = self.order.steps_per_epoch
        return spe * max(self.span_epochs, 1) - self._k % spe

    def _next_batch(self) -> dict[str, Any]:
        """The next minibatch of a stochastic run, the whole data otherwise."""
        return self._batch() if self.stochastic else self.data

    def _next_epoch(self) -> None:
        """Load the next epoch's row order when a run crosses into it (untimed)."""
        epoch = self._k // self.order.steps_per_epoch
        if epoch != self._epoch and self.span_epochs:  # blocks read the span's vector
            self._epoch = epoch
        elif epoch != self._epoch:
            self._load_epoch(epoch)

    @property
    def steps_per_epoch(self) -> int | None:
        """Minibatches per epoch of a stochastic run, else ``None``."""
        return self.order.steps_per_epoch if self.stochastic else None

    def _output(self, fun: Any, grad_norm: Any, nfev: int = 1, njev: int = 1) -> Block:
        """The step's report: a minibatch step reports no full objective."""
        if self.stochastic:
            return Block(1, None, None, nfev, njev)
        return Block(1, fun, grad_norm, nfev, njev)
