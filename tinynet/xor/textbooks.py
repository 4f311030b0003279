"""The textbooks' initialization experiments, each shown in its book for one seed, run here
over many seeds on the digits and MNIST-1D (:mod:`tinynet.data`), as studies of
:mod:`tinynet.xor` (test accuracy per seed, Fisher and Mann–Whitney, Holm over both):

* :data:`DLFS`: *Deep Learning from Scratch* (Saito 2016), §6.2: five hidden layers of 100,
  sigmoid or ReLU, weights of std 0.01, "Xavier" (the book's: std 1/√n_in) or He
  (√(2/n_in)), minibatch SGD at lr 0.01 in batches of 128; and its activation histograms at
  initialization (Figs. 6-10 to 6-14: inputs N(0, 1) of shape 1,000 × 100 through five
  layers of 100, no biases), pooled over seeds: :func:`init_histograms`.
* :data:`NIELSEN`: Nielsen, *Neural Networks and Deep Learning*, ch. 3, "Weight
  initialization": weights and biases N(0, 1) against weights N(0, 1/n_in) (biases N(0, 1)),
  one sigmoid hidden layer of 30 or 100, minibatches of 10 at lr 0.1, 30 epochs; how many
  epochs sooner the second reaches a test accuracy (:func:`epochs_to`, :func:`sooner`).
* :data:`MNIST1D_MLP`: MNIST-1D's MLP (Greydanus & Kobak 2020, about 68 % test accuracy in
  the paper's table): 40-100-100-10 ReLU, Adam at lr 0.01, batches of 100 in data order,
  6,000 steps (150 epochs), PyTorch's default weights.

Where a book's setting cannot be followed it says so in :attr:`Experiment.differs`.
``examples/textbooks.py`` runs them all and writes the committed results and the docs page.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from .. import dense
from ..network import mlp
from ..stats import holm, median_interval, wilson_interval
from .arms import Arm, Setup, classification_setup
from .bands import quartiles
from .bench import run_study
from .report import Study

__all__ = ["Experiment", "DLFS", "NIELSEN", "MNIST1D_MLP", "EXPERIMENTS", "run_experiment",
           "curves", "init_histograms", "HISTOGRAM_ARMS", "epochs_to", "sooner"]


@dataclass(frozen=True)
class Experiment:
    """One book's experiment: its ``arms``, the ``setups`` it runs them on (by a name such as
    ``"digits, relu"``), how often each seed is evaluated (``evaluations`` per run), where it
    comes from (``source``) and where it cannot follow the book (``differs``)."""

    name: str
    title: str
    source: str
    arms: dict[str, list[Arm]]
    setups: dict[str, Setup]
    evaluations: int = 20
    differs: tuple[str, ...] = ()
    targets: dict[str, float] = field(default_factory=dict)

    def arms_of(self, cell: str) -> list[Arm]:
        """The arms of setup ``cell``: those of its activation, or of every cell."""
        return self.arms.get(cell.split(", ")[-1], self.arms.get("all"))


def _cross_entropy(init: str, label: str, **more) -> Arm:
    return Arm(init, loss="cross_entropy", shuffle=more.pop("shuffle", True), label=label,
               **more)


DLFS_INITS = {"sigmoid": ["normal(std=0.01)", "lecun_normal", "he_normal"],
              "relu": ["normal(std=0.01)", "lecun_normal", "he_normal"]}
"""The book trains each activation from std 0.01, its Xavier (std 1/√n_in, which tinynet
names ``lecun_normal``) and He."""

DLFS_LABELS = {"normal(std=0.01)": "std 0.01", "lecun_normal": "Xavier (std 1/√n_in)",
               "he_normal": "He (std √(2/n_in))", "normal": "std 1"}

DLFS = Experiment(
    name="dlfs", title="Deep Learning from Scratch, §6.2",
    source="Saito, Deep Learning from Scratch (O'Reilly Japan 2016), §6.2 and "
           "ch06/weight_init_compare.py",
    arms={activation: [_cross_entropy(init, DLFS_LABELS[init]) for init in inits]
          for activation, inits in DLFS_INITS.items()},
    setups={f"{data}, {activation}": replace(classification_setup(data), hidden=(100,) * 5,
                                             activation=activation, lr=0.01, batch_size=128,
                                             epochs=epochs, seeds=100)
            for data, epochs in (("digits", 40), ("mnist1d", 16))
            for activation in ("sigmoid", "relu")},
    differs=("MNIST is replaced by the digits and MNIST-1D (offline); the book's 2,000 steps "
             "of 128 by about 500: 40 epochs of the digits' 1,442, 16 of MNIST-1D's 4,000",
             "each epoch visits every sample once in a shuffled order (the book draws each "
             "batch at random, with repeats between batches)"))

NIELSEN = Experiment(
    name="nielsen", title="Nielsen, Neural Networks and Deep Learning, ch. 3",
    source="Nielsen, Neural Networks and Deep Learning (2015), ch. 3, \"Weight "
           "initialization\", network2.py",
    arms={"all": [_cross_entropy("normal", "N(0, 1)", bias_init="normal"),
                  _cross_entropy("lecun_normal", "N(0, 1/n_in)", bias_init="normal")]},
    setups={f"{data}, {hidden} hidden": replace(classification_setup(data), hidden=(hidden,),
                                                activation="sigmoid", lr=0.1, batch_size=10,
                                                epochs=30, seeds=500)
            for data in ("digits", "mnist1d") for hidden in (30, 100)},
    evaluations=30,
    differs=("a softmax output with cross-entropy, where network2 has sigmoid outputs with "
             "cross-entropy on each", "no L2 regularization (the book's λ = 5)",
             "the digits and MNIST-1D in place of MNIST"),
    targets={"digits": 0.9, "mnist1d": 0.4})

MNIST1D_MLP = Experiment(
    name="mnist1d_mlp", title="MNIST-1D's MLP",
    source="Greydanus & Kobak, Scaling down deep learning with MNIST-1D (2020; ICML 2024), "
           "its table and notebooks/models.py, train.py",
    arms={"all": [_cross_entropy("torch_linear_default", "PyTorch's default", shuffle=False,
                                 optimizer="adam"),
                  _cross_entropy("he_normal", "He (std √(2/n_in))", shuffle=False,
                                 optimizer="adam")]},
    setups={"mnist1d, relu": replace(classification_setup("mnist1d"), hidden=(100, 100),
                                     activation="relu", lr=0.01, batch_size=100, epochs=150,
                                     seeds=100)},
    evaluations=30,
    differs=("no skip connection: the paper's MLP adds the second layer's output to its input "
             "(h + relu(W₂h + b₂)), a residual block tinynet does not have yet; this is the "
             "plain MLP of the same 15,210 parameters",
             "biases start at 0 (PyTorch draws them from U(±1/√n_in))",
             "6,000 steps where the paper's loop runs 6,001"))

EXPERIMENTS = {experiment.name: experiment for experiment in (DLFS, NIELSEN, MNIST1D_MLP)}
"""Every experiment, by name."""


def run_experiment(experiment: Experiment, seeds: int | None = None,
                   epochs: int | None = None, progress: bool = False,
                   cells: list[str] | None = None) -> dict:
    """Run every setup of ``experiment`` (or those named in ``cells``), with ``seeds`` and
    ``epochs`` in place of the experiment's if given: per setup, the study as its JSON
    (:meth:`Study.to_dict`), the curves (:func:`curves`), the seconds, and for an experiment
    with ``targets`` the epochs each seed took to reach its data set's (:func:`sooner`)."""
    found = {}
    for cell, setup in experiment.setups.items():
        if cells is not None and cell not in cells:
            continue
        setup = replace(setup, **{name: value for name, value in (("seeds", seeds),
                                                                  ("epochs", epochs))
                                  if value is not None})
        every = max(1, setup.epochs // experiment.evaluations)
        started = time.perf_counter()
        study = run_study(experiment.arms_of(cell), setup, progress=progress,
                          evaluate_every=every)
        found[cell] = {"study": study.to_dict(), "curves": curves(study),
                       "seconds": round(time.perf_counter() - started, 2)}
        target = experiment.targets.get(setup.task.data)
        if target is not None:
            found[cell]["target"] = target
            found[cell]["epochs_to_target"] = {
                r.arm.name: epochs_to(r.ensemble.evaluation.test_accuracy,
                                      r.ensemble.evaluation.epochs, target)
                for r in study.results}
    return found


def curves(study: Study) -> dict[str, dict]:
    """Per arm: the epochs it was evaluated after, and the first quartile, median and third
    quartile over seeds of its test accuracy, test loss and training loss at each (seeds
    that diverged left out: NaN)."""
    found = {}
    for r in study.results:
        evaluation = r.ensemble.evaluation
        entry = {"epochs": evaluation.epochs.tolist()}
        for name in ("test_accuracy", "test_loss", "train_loss"):
            entry[name] = [[None if np.isnan(v) else round(float(v), 6) for v in row]
                           for row in quartiles(getattr(evaluation, name))]
        found[r.arm.name] = entry
    return found


def epochs_to(accuracies: np.ndarray, epochs: np.ndarray, target: float) -> list[int | None]:
    """Per seed (row of ``accuracies`` (S, E), evaluated after ``epochs`` (E,)), the first
    epoch after which its test accuracy reached ``target``; None if it never did."""
    reached = np.nan_to_num(accuracies, nan=-1.0) >= target
    first = np.argmax(reached, axis=1)
    return [int(epochs[index]) if row[index] else None for row, index in zip(reached, first)]


def sooner(a: list[int | None], b: list[int | None]) -> dict:
    """How many epochs sooner arm b reached the target than arm a, seed by seed (the same
    seed's shuffle order in both): the seeds where both did, the median of a − b with its
    distribution-free 95 % interval (:func:`~tinynet.stats.median_interval`), and the
    two-sided Wilcoxon signed-rank p-value (1 if every difference is 0); and per arm how
    many seeds reached it, with the Wilson interval."""
    from scipy.stats import wilcoxon  # only when an experiment is summarised
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    differences = [x - y for x, y in pairs]
    reached = {name: (sum(v is not None for v in values), len(values))
               for name, values in (("a", a), ("b", b))}
    summary = {"pairs": len(pairs),
               "reached": {name: [k, n, *wilson_interval(k, n)] for name, (k, n)
                           in reached.items()}}
    if len(differences) >= 6:
        summary["median"] = float(np.median(differences))
        summary["interval"] = list(median_interval(differences))
        summary["p"] = 1.0 if not any(differences) else float(wilcoxon(differences).pvalue)
    return summary


def adjust(summaries: list[dict]) -> None:
    """Holm's adjustment over the family of :func:`sooner` summaries, written into each as
    ``p_holm`` (those without a test are left out of the family)."""
    tested = [s for s in summaries if "p" in s]
    for s, adjusted in zip(tested, holm([s["p"] for s in tested])):
        s["p_holm"] = adjusted


HISTOGRAM_ARMS = (("sigmoid", "normal"), ("sigmoid", "normal(std=0.01)"),
                  ("sigmoid", "lecun_normal"), ("relu", "normal(std=0.01)"),
                  ("relu", "lecun_normal"), ("relu", "he_normal"))
"""The book's Figs. 6-10 to 6-14: (activation, initializer) of each row."""

HISTOGRAM_BINS = np.linspace(0.0, 1.0, 31)
"""The book's 30 bins over [0, 1] (``plt.hist(a.flatten(), 30, range=(0, 1))``)."""


def init_histograms(activation: str, init: str, seeds: int = 100, layers: int = 5,
                    width: int = 100, samples: int = 1000) -> dict:
    """The book's activation histograms at initialization, over ``seeds`` seeds: inputs
    N(0, 1) (``samples`` × ``width``, drawn once with ``default_rng(0)``) through ``layers``
    layers of ``width`` units with ``activation``, weights from ``init``, no biases. Per
    layer: the counts in :data:`HISTOGRAM_BINS` summed over seeds (values outside [0, 1]
    are not counted, as in the book), their fraction of all values, and the quartiles over
    seeds of each seed's standard deviation of the layer's activations."""
    X = np.random.default_rng(0).standard_normal((samples, width))
    counts = np.zeros((layers, len(HISTOGRAM_BINS) - 1), dtype=np.int64)
    stds = np.empty((seeds, layers))
    for seed in range(seeds):
        net = mlp([width] * (layers + 1), activation=activation, output=activation,
                  init=init, seed=seed)
        outputs = X
        for index, layer in enumerate(net.layers):
            _, outputs = dense.forward(outputs, layer.W, layer.b, layer.activation)
            counts[index] += np.histogram(outputs, HISTOGRAM_BINS)[0]
            stds[seed, index] = float(np.std(outputs))
    return {"counts": counts.tolist(), "values": seeds * samples * width,
            "std_quartiles": np.percentile(stds, [25, 50, 75], axis=0).T.round(6).tolist()}
