"""What the compiled backend runs, as text: :func:`kernel_source`.

``net.fit`` (``backend="numba"``, the default) and every ensemble and study do not run
:meth:`tinynet.Layer.forward` line by line: they run a kernel that numba compiled from
generated Python. For per-sample steps of a small layout that kernel is written out from
:mod:`tinynet.step` itself (:mod:`tinynet.compiled.tracing`): the straight-line step, each
group of lines under a comment naming the layer and the line of ``tinynet/step.py`` it comes
from, and each definition's lines under one naming the definition. Reading it is reading
what runs::

    >>> print(tinynet.kernel_source(tinynet.mlp([2, 2, 1]), loss="bce"))

Other layouts (minibatches, wider layers) train on the generic kernels, which loop over a
layout's table with the words of :mod:`tinynet.compiled.single` and
:mod:`tinynet.compiled.lanes`. Their epoch loop (:mod:`tinynet.compiled.epochs`), step
(:mod:`tinynet.compiled.looping`) and the network's activations, loss and optimizer are
written into a module generated for the network's maths, its *kit*: :func:`kernel_source`
returns the kit's text then, after a comment saying which of its functions trains. A network
with residual blocks trains on the kit's text followed by :mod:`tinynet.compiled.stream`'s
functions (the blocks as one loop).
"""

from __future__ import annotations

from .losses import Loss, check_output, get_loss
from .network import Network
from .optimizers import Optimizer, get_optimizer
from .results import UPDATES
from .validation import check_choice, check_instance, check_int

__all__ = ["kernel_source"]


def kernel_source(net: Network, *, loss: str | Loss = "mse", optimizer: str | Optimizer = "sgd",
                  batch_size: int = 1, update: str = "after_backward",
                  ensemble: bool = False) -> str:
    """The Python source of the compiled kernel that trains ``net`` with these settings:
    :func:`tinynet.fit` (``ensemble=False``) or :func:`tinynet.fit_ensemble`,
    :func:`tinynet.fit_packed` and the studies of :mod:`tinynet.xor` (``ensemble=True``),
    on the default backend, ``"numba"``. The text is the kernel's file, byte for byte (its
    name in the kernel cache is a hash of it), and its kernels compile and train as the
    cached ones do; for the generic kernels, the kit's file after a first comment line that
    names the library function that runs it. Nothing is compiled here.

    ``loss``, ``optimizer``, ``batch_size`` and ``update`` are as in :func:`tinynet.fit`;
    what a kernel reads when it runs (the seeds, samples, epochs, learning rate, the
    hyperparameters' values) is not in the text. The NumPy backend runs
    :mod:`tinynet.step` itself, and has no kernel."""
    from .compiled import codegen, epochs, fused, kit, unrolled   # imports no numba
    from .packing import layout

    check_instance("net", net, Network, "a tinynet Network")
    batch_size = check_int("batch_size", batch_size, minimum=1)
    during = check_choice("update", update, UPDATES) == "during_backward"
    if not isinstance(ensemble, bool):
        raise TypeError(f"ensemble must be True or False, got {ensemble!r}")
    loss, optimizer = get_loss(loss), get_optimizer(optimizer)
    check_output(loss, net.layers[-1].activation)
    kit.check(net, loss, optimizer)
    maths = kit.maths_of(net, loss, optimizer)
    if net.residuals:
        from .compiled import stream
        from .compiled.blockruns import structure_of
        fit = stream.entry_name("fit_stream", during)
        runner = (f"{stream.entry_name('fit_stream_members', during)} (each member its own "
                  f"{fit})" if ensemble else fit)
        return (f"# This module's {runner} trains this network (residual blocks: "
                "tinynet.compiled.stream):\n"
                + stream.module_source(maths, structure_of(net)))
    net_layout = kit.layout_for(layout(net), maths)
    if codegen.supports(net_layout, batch_size):
        if ensemble:
            return unrolled.source(net_layout, maths, during, unrolled.LANES,
                                   unrolled.CUT_AT_EXPS)
        return fused.source(net_layout, maths, during)
    runner = (f"{epochs.lane_entry(during)} (its blocks: train_block"
              f"{'_during' if during else ''})" if ensemble else "fit_network")
    if ensemble and _calls_blas(net.sizes, batch_size):
        runner = "fit_members (each member its own fit_network: its single fit calls BLAS)"
    return (f"# This kit's {runner} trains this network (a layout or batch size the generated "
            f"kernels do not take: tinynet.compiled.codegen.supports):\n" + kit.source(maths))


def _calls_blas(sizes: list[int], batch_size: int) -> bool:
    """:func:`tinynet.compiled.backend.calls_blas`, which imports Numba: only asked for an
    ensemble the generated kernels do not take."""
    from .compiled import backend
    return backend.calls_blas(sizes, batch_size)
