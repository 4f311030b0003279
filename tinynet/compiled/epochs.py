"""The compiled kernels' epoch loop, written by running :func:`tinynet.step.train` on words.

:func:`tinynet.step.train` is the epoch loop, written once; NumPy runs it on arrays
(:class:`tinynet.reference.Epochs`). Run on the words here, it writes the loop of every
compiled kernel: its ``for`` loops open blocks of code, its calls write lines, each group
under a comment that names the line of ``tinynet/step.py`` that said it. Two kinds of kernel
keep two kinds of record:

* one network (:class:`OneNetwork`): the kernels generated for a small layout
  (:mod:`tinynet.compiled.fused`) and the kit's ``fit_network`` (:class:`NetworkWords`); its
  record is row 0 of the record's arrays, its last wrong epoch a local until the end;
* a block of networks side by side, one per SIMD lane (:class:`Lanes`): the generated
  ensemble kernels (:mod:`tinynet.compiled.unrolled`) and the kit's ``train_block``
  (:class:`BlockWords`); every lane's record is written by
  :func:`~tinynet.compiled.lanes.record_lanes` and
  :func:`~tinynet.compiled.lanes.diverged_lanes`, loops over the lanes.

Each word is :class:`tinynet.step.EpochWords`' (its docstrings say what each does); here each
writes lines. Each kernel's words say how its batch's samples are read and where its step's lines go
(``batches``, ``add_loss``, ``saw``). A batch's lines (the step's, then ``add_loss``'s and
``saw``'s) are kept in ``body`` and written where the batch's loop ends, so that a kernel can
write them otherwise: :mod:`tinynet.compiled.unrolled` cuts them into loops over the lanes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from .. import step as description
from .render import Writer, said_by

__all__ = ["Epochs", "OneNetwork", "Lanes", "NetworkWords", "BlockWords", "network_source",
           "block_source", "lane_suffix", "lane_entry", "lanes_source", "members_source"]


class Epochs:
    """The words every kernel's loop shares: the loop over the epochs. Lines go to
    ``writer``, a batch's to ``body`` first (see the module's docstring)."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.body: list[str] = []

    def epochs(self) -> Iterator[str]:
        """``for run in range(settings.epochs)``, ``epoch`` the loop's epoch; before it,
        whether the run has a learning-rate schedule (``scheduled``, read by
        :meth:`batch_loop`)."""
        self.writer.write(f"# {said_by()}",
                          "scheduled = settings.warmup + settings.cosine_steps > 0")
        self.writer.open("for run in range(settings.epochs):")
        self.writer.write("epoch = settings.first_epoch + run")
        yield "epoch"
        self.writer.close()

    def written_out(self, step: Callable[[object, object], tuple]) -> Callable[[object, object],
                                                                            tuple]:
        """``step``, which writes the step's lines into ``body``, after a comment naming the
        line of :func:`tinynet.step.train` that calls it."""
        def said(x: object, y: object) -> tuple:
            self.body.append(f"# {said_by()}: tinynet.step.train_step, written out below")
            return step(x, y)
        return said

    def batch_loop(self, start: list[str], header: str, gather: list[str], names: tuple,
                   after: Sequence[str] = ()) -> Iterator[tuple]:
        """A kernel's ``batches``: the ``start`` lines (the epoch's sum at 0), the loop
        ``header``, the lines that read the batch (``gather``); the batch's ``names`` yielded
        for the step; then the batch's lines (:meth:`end_batch`) and ``after``. A kernel's
        ``batches`` returns it (not a generator itself), so that :func:`tinynet.step.train`
        resumes it and the comment names train's line."""
        self.writer.write(f"# {said_by()}", *start)
        self.writer.open(header)
        self.writer.write("if scheduled:  # the batch's rate: tinynet.schedules",
                          "    lr = learning_rate(settings.lr, step_at(settings, n, epoch, start),",
                          "                       settings.warmup, settings.cosine_steps)",
                          *gather)
        yield names
        self.end_batch()
        self.writer.write(*after)
        self.writer.close()

    def end_batch(self) -> None:
        """The batch's lines, where its loop ends."""
        self.writer.write(*self.body)
        self.body.clear()


class OneNetwork(Epochs):
    """The epoch loop's words for one network, ``marks`` the lines that sum
    :func:`~tinynet.verdicts.finite_mark` of ``epoch_loss`` and of every parameter into
    ``marks``, ``write_back`` the lines that put the trained parameters and state where the
    caller reads them. The kernel keeps ``total`` (the epoch's summed loss) and
    ``wrong_epoch`` (the last wrong epoch); its step sets ``wrong`` if an output is on the
    wrong side. Training stops at divergence, so the parameters are as they stopped."""

    def __init__(self, writer: Writer, marks: list[str], write_back: list[str]) -> None:
        super().__init__(writer)
        self.marks, self.write_back = marks, write_back

    def add_loss(self, terms: str, y: object) -> None:
        """``total = total + ℓ`` (``terms``: the name of the batch's summed loss)."""
        self.body += [f"# {said_by()}", f"total = total + {terms}"]

    def saw(self, y_hat: object, y: object, epoch: str) -> None:
        """``wrong_epoch = epoch`` if the step's ``wrong`` is set."""
        self.body += [f"# {said_by()}; the step's loss tested each output (wrong_side)",
                      f"wrong_epoch = {epoch} if wrong else wrong_epoch"]

    def record(self, epoch: str) -> None:
        """The epoch's loss into ``final_loss[0]`` and its slot of ``loss_history[0]``."""
        self.writer.write(f"# {said_by()}", "epoch_loss = total / n",
                          "final_loss[0] = epoch_loss", f"slot = history_slot({epoch}, every)",
                          "if slot >= 0:", "    loss_history[0, slot] = epoch_loss")

    def diverged(self, epoch: str) -> bool:
        """The summed marks, and the stop: ``diverged_epoch[0] = epoch`` and ``break``."""
        self.writer.write(f"# {said_by()}", *self.marks, "if diverged(marks):",
                          f"    diverged_epoch[0] = {epoch}", "    break")
        return False

    def finish(self) -> None:
        """The kernel's ``write_back`` lines and the last wrong epoch."""
        self.writer.write(f"# {said_by()}", *self.write_back,
                          "last_wrong_epoch[0] = wrong_epoch")


class Lanes(Epochs):
    """The epoch loop's words for a block of networks, one per lane, ``theta`` (P, lanes) and
    ``state`` (k, P, lanes) the names of the block's parameters and optimizer state. The
    kernel keeps ``total`` (lanes,), each lane's summed loss, the order's scratch (``order``:
    :func:`tinynet.compiled.lanes.order_scratch`) and the record's (``kept``, ``kept_wrong``,
    ``marks``: :func:`~tinynet.compiled.lanes.record_scratch`; ``kept_state``)."""

    def __init__(self, writer: Writer, theta: str, state: str) -> None:
        super().__init__(writer)
        self.theta, self.state = theta, state
        self.before_record: list[str] = []   # a kernel's lines before the record's
        self.after_finish: list[str] = []    # and after finish's

    def visit(self, epoch: str) -> None:
        """Each lane's order (:func:`tinynet.compiled.lanes.lane_orders`), if shuffled."""
        self.writer.write(f"# {said_by()}", "if settings.shuffle:",
                          f"    lane_orders(seed_hashes, {epoch}, keys, rank, order)")

    def record(self, epoch: str) -> None:
        """The kernel's ``before_record`` lines, then :func:`tinynet.compiled.lanes.
        record_lanes`."""
        self.writer.write(f"# {said_by()}", *self.before_record,
                          f"record_lanes(total, n, {epoch}, every, loss_history, final_loss, "
                          "diverged_epoch)")

    def diverged(self, epoch: str) -> bool:
        """:func:`tinynet.compiled.lanes.diverged_lanes` and ``keep_state``; the stop when
        no lane is running."""
        self.writer.write(f"# {said_by()}; a lane that diverged keeps computing with its "
                          "block, its record stopped and its parameters kept",
                          f"alive = diverged_lanes({self.theta}, total, {epoch}, "
                          "diverged_epoch, last_wrong_epoch, kept, kept_wrong, marks)",
                          f"keep_state({self.state}, kept_state, diverged_epoch, {epoch})",
                          "if alive == 0:", "    break")
        return False

    def finish(self) -> None:
        """Every diverged lane's parameters, last wrong epoch and state put back as they were
        kept, the optimizer's counters spread to every parameter's slot, then the kernel's
        ``after_finish`` lines."""
        self.writer.write(f"# {said_by()}",
                          f"restore_diverged({self.theta}, diverged_epoch, last_wrong_epoch, "
                          "kept, kept_wrong)",
                          f"restore_state({self.state}, kept_state, diverged_epoch)",
                          f"spread_counters({self.state}, COUNTERS)", *self.after_finish)


# --- the generic kernels: the kit's fit_network and train_block ---------------------------

class NetworkWords(OneNetwork):
    """The words of the kit's ``fit_network``, one network of any layout: the epoch's order
    drawn by :func:`tinynet.compiled.orders.epoch_order_into`, each batch copied into ``Xb``
    and ``Yb``, its step a call of the kit's ``train_step``."""

    def __init__(self, writer: Writer) -> None:
        super().__init__(writer, ["marks = finite_mark(epoch_loss)",
                                  "for p in range(theta.shape[0]):",
                                  "    marks += finite_mark(theta[p])"],
                         ["lanes.spread_counters(state.reshape(state.shape[0], state.shape[1], "
                          "1), COUNTERS)"])

    def visit(self, epoch: str) -> None:
        """The network's order (:func:`tinynet.compiled.orders.epoch_order_into`), if
        shuffled."""
        self.writer.write(f"# {said_by()}", "if settings.shuffle:",
                          f"    epoch_order_into(seed, {epoch}, keys, order)")

    def batches(self) -> Iterator[tuple[str, str]]:
        """``total = 0.0``, then the loop over the batches, each copied into Xb and Yb."""
        return self.batch_loop(
            ["total = 0.0"], "for start in range(0, n, batch_size):",
            ["rows = min(batch_size, n - start)", "for r in range(rows):",
             "    Xb[r, :] = X[order[start + r]]", "    Yb[r, :] = Y[order[start + r]]",
             "step_rows(state, lr, hyper, steps)  # the optimizer's part per step"],
            ("Xb[:rows]", "Yb[:rows]"))

    def step(self, x: str, y: str) -> tuple[None, str]:
        """A call of the kit's ``train_step`` on the batch."""
        self.body += [f"# {said_by()}: tinynet.step.train_step, above",
                      "batch_loss, wrong = train_step(theta, grad, state, lr, hyper, steps, "
                      f"layout, {x}, {y}, rows, Zs, As, Ds, dZ, delta, back, threshold, during)"]
        return None, "batch_loss"


class BlockWords(Lanes):
    """The words of the kit's ``train_block``, a block of ``lanes.LANES`` networks of any
    layout: each batch gathered into ``A[0]`` and ``targets`` (rows, n, lanes), its step a call
    of the kit's lanes' step ``step_name``."""

    def __init__(self, writer: Writer, step_name: str) -> None:
        super().__init__(writer, "theta", "state")
        self.step_name = step_name

    def batches(self) -> Iterator[tuple[str, str]]:
        """Each lane's ``total`` at 0, then the loop over the batches, each gathered into
        ``A[0]`` and ``targets``."""
        return self.batch_loop(
            ["for l in range(lanes.LANES):", "    total[l] = 0.0"],
            "for start in range(0, n, batch_size):",
            ["rows = min(batch_size, n - start)",
             "lanes.gather(X, Y, order, start, rows, A, targets)",
             "per_step(state, lr, hyper, steps)  # the optimizer's part per step"],
            ("A[0]", "targets"))

    def step(self, x: str, y: str) -> tuple[None, str]:
        """A call of the kit's lanes' step on the batch."""
        self.body += [f"# {said_by()}: tinynet.step.train_step, {self.step_name} above",
                      f"{self.step_name}(theta, state, hyper, steps, lr, layout, A, D, delta, "
                      "back, targets, rows, acc, batch_loss, threshold, epoch, "
                      "last_wrong_epoch)"]
        return None, "batch_loss"

    def add_loss(self, terms: str, y: object) -> None:
        """Each lane's batch loss into its ``total``."""
        self.body += [f"# {said_by()}", "for l in range(lanes.LANES):",
                      f"    total[l] += {terms}[l]"]

    def saw(self, y_hat: object, y: object, epoch: str) -> None:
        """Nothing but a comment: the one exception to a word writing its own code. The
        lanes' step sets each lane's last wrong epoch in :func:`tinynet.compiled.lanes.
        loss_rows`, in its loop over the outputs, which a loop of its own would repeat."""
        self.body += [f"# {said_by()}: the step's loss_rows set it, in its loop over the "
                      "outputs"]


def _loop(words: Epochs, step: Callable[[str, str], tuple]) -> list[str]:
    """:func:`tinynet.step.train` in ``words``: the lines of the epoch loop."""
    description.train(words, step)
    return words.writer.lines


def network_source(words: NetworkWords | None = None, name: str = "fit_network",
                   layout: str = "layout", scratch: Sequence[str] = ()) -> str:
    """The kit's ``fit_network``: :func:`tinynet.step.train` for one network of any layout, on
    the kit's ``train_step``; or, with ``words`` (whose step calls another step function), the
    function ``name`` taking the layout arguments ``layout``, its further ``scratch`` lines
    after the network's (:func:`tinynet.compiled.single.scratch`)."""
    words = NetworkWords(Writer(1)) if words is None else words
    return f'''@njit(cache=True, error_model="numpy")
def {name}(theta, state, hyper, {layout}, X, Y, seed, settings, record):
    """tinynet.step.train with this network's maths: theta (P,) and the optimizer's state (k, P)
    in place, epochs settings.first_epoch on, written into row 0 of record; the counters
    spread to every parameter's slot at the end."""
    loss_history, final_loss, diverged_epoch, last_wrong_epoch = record
    n = X.shape[0]
    batch_size, lr, threshold, every = (settings.batch_size, settings.lr, settings.threshold,
                                        settings.record_every)
    during = settings.update_during_backward
    grad, Zs, As, Ds, dZ, delta, back, Xb, Yb = single.scratch(theta, layout, X, Y, batch_size)
''' + "".join(f"    {line}\n" for line in scratch) + '''    steps = np.zeros(max(STEP_VALUES, 1))
    keys, order = np.empty(n, dtype=np.uint64), np.arange(n)
    wrong_epoch = last_wrong_epoch[0]
''' + "\n".join(_loop(words, words.step)) + "\n"


def block_source(name: str, step_name: str) -> str:
    """The kit's ``train_block`` for one update order, named ``name``:
    :func:`tinynet.step.train` for a block of networks of any layout, one per lane, on the
    kit's lanes' step ``step_name``."""
    words = BlockWords(Writer(1), step_name)
    return f'''@njit(cache=True, error_model="numpy", inline="always")
def {name}(theta, state, hyper, layout, X, Y, seeds, settings, loss_history, final_loss,
        diverged_epoch, last_wrong_epoch):
    """tinynet.step.train with this network's maths for lanes.LANES networks, theta (P, LANES)
    and the optimizer's state (k, P, LANES) in place, epochs settings.first_epoch on, each
    lane's record continued; a diverged lane's parameters and state put back as they were at
    the end of the epoch it diverged in, where a single fit stops."""
    n = X.shape[0]
    batch_size, lr, threshold, every = (settings.batch_size, settings.lr, settings.threshold,
                                        settings.record_every)
    A, D, delta, back, targets, acc, total, batch_loss = lanes.block_scratch(layout, X, Y,
                                                                             batch_size)
    steps = np.zeros((max(STEP_VALUES, 1), lanes.LANES))
    seed_hashes, keys, rank, order = order_scratch(seeds, n)
    kept, kept_wrong, marks = record_scratch(theta, last_wrong_epoch)
    kept_state = state.copy()
''' + "\n".join(_loop(words, words.step)) + "\n"


def lane_suffix(during: bool) -> str:
    """The suffix of the lanes' functions for an update order: ``"_during"`` for
    ``update="during_backward"``, none after the backward pass."""
    return "_during" if during else ""


def lane_entry(during: bool) -> str:
    """The name of the kit's ensemble entry point for an update order (``during``: update
    during the backward pass): one per order, so that a run compiles its own order alone."""
    return "fit_lanes" + lane_suffix(during)


def lanes_source(during: bool) -> str:
    """The kit's ensemble entry point :func:`lane_entry`, its ``fit_block`` and
    ``train_block`` (:func:`block_source`), on ``train_step_lanes`` of the same order."""
    order = lane_suffix(during)
    return block_source(f"train_block{order}", f"train_step_lanes{order}") + f'''

@njit(cache=True, error_model="numpy")
def fit_block{order}(block, theta, state, hyper, layout, X, Y, seeds, settings, loss_history,
              final_loss, diverged_epoch, last_wrong_epoch, predictions):
    """One block of tinynet.compiled.lanes' LANES networks, with this network's maths."""
    lanes.fit_block_of_members(train_block{order}, forward_lanes, block, theta, state, hyper,
                               layout, X, Y, seeds, settings, loss_history, final_loss,
                               diverged_epoch, last_wrong_epoch, predictions)


@njit(cache=True, parallel=True, error_model="numpy")
def fit_lanes{order}(theta, state, hyper, layout, X, Y, seeds, settings, record, predictions):
    """tinynet.compiled.lanes' blocks of LANES networks, spread over the cores."""
    loss_history, final_loss, diverged_epoch, last_wrong_epoch = record  # arrays, not a tuple,
    for block in prange((theta.shape[1] + lanes.LANES - 1) // lanes.LANES):  # inside prange
        # np.int64: prange's index is int64 where it is typed and uint64 where it is lowered,
        # which would compile fit_block twice
        fit_block{order}(np.int64(block), theta, state, hyper, layout, X, Y, seeds, settings,
                  loss_history, final_loss, diverged_epoch, last_wrong_epoch, predictions)
'''


def members_source() -> str:
    """The kit's ``fit_members``: each member of an ensemble trained by ``fit_network``, its
    own single fit, the members spread over the cores. For layouts whose single fit calls BLAS
    (:data:`tinynet.compiled.single.BLAS_MIN_WORK`), where a product is one GEMM's work and
    the lanes' loops, a network per lane, would do it at a fraction of BLAS's speed; and a
    member is its single fit, bit for bit, by construction."""
    return '''@njit(cache=True, parallel=True, error_model="numpy")
def fit_members(theta, state, hyper, layout, X, Y, seeds, settings, record, predictions):
    """fit_network for every member, theta (S, P) and state (S, k, P) in place, row s of
    record member s's (a member that has diverged stays as it stopped), spread over the
    cores; predictions[s], member s's outputs on X (N, n_out)."""
    loss_history, final_loss, diverged_epoch, last_wrong_epoch = record
    for s in prange(theta.shape[0]):
        if diverged_epoch[s] < 0:
            fit_network(theta[s], state[s], hyper, layout, X, Y, seeds[s], settings,
                        (loss_history[s:s + 1], final_loss[s:s + 1], diverged_epoch[s:s + 1],
                         last_wrong_epoch[s:s + 1]))
    predict_members(theta, layout, X, predictions)


@njit(cache=True, parallel=True, error_model="numpy")
def predict_members(theta, layout, X, predictions):
    """predictions[s], the outputs on X (N, n_out) of the network whose packed parameters are
    theta[s] (theta (S, P)), the members spread over the cores (tinynet.evaluation)."""
    width = max(X.shape[1], layout.table[:, 1].max())
    for s in prange(theta.shape[0]):
        Zs = np.empty((layout.table.shape[0], X.shape[0] * width))
        predictions[s] = forward_network(theta[s], layout, X, Zs, np.empty_like(Zs))
'''
