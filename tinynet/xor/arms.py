"""What a study compares and what it holds fixed: its arms (:class:`Arm`) and the setup they
share (:class:`Setup`), which includes the task they learn (:class:`~tinynet.xor.task.Task`).
Both check their values when they are made, so a study that starts training has nothing left
to refuse. :func:`build_network` makes an arm's network from a seed."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .. import init, packing
from ..activations import ACTIVATIONS, Activation, get_activation
from ..init.registry import from_spec, parse_spec
from ..losses import get_loss
from ..network import Network, check_residual, mlp
from ..optimizers import get_optimizer
from ..results import UPDATES
from ..validation import MAX_EPOCHS, check_backend, check_bool, check_choice, \
    check_float, check_hidden, check_instance, check_int, check_memory, check_probability, \
    check_schedule, check_seed
from .task import XOR, OwnData, Task

__all__ = ["Arm", "Setup", "DEFAULT_SETUP", "build_network", "network_sizes", "arm_parameters",
           "activation_of", "spec_name", "setup_dict", "arm_dict", "classification_setup"]


def spec_name(spec: str) -> str:
    """The name a spec starts with: ``"softplus"`` of ``"softplus(beta=2.0)"``."""
    return spec.split("(")[0].strip()


def activation_of(spec: str, alpha: float = 0.01, what: str = "activation") -> Activation:
    """The activation a setup's ``spec`` names: a name of
    :data:`~tinynet.activations.ACTIVATIONS` (built in or registered), made as
    :func:`~tinynet.activations.get_activation` makes it (``alpha``: leaky_relu's slope), or
    a name with parameters, ``"softplus(beta=2.0)"``, as a registered class's fields. (A
    leaky_relu's slope is the setup's ``alpha``, not a parameter of the spec.)"""
    if not isinstance(spec, str) or "(" not in spec:
        check_choice(what, spec, ACTIVATIONS, kind=what)
        return get_activation(spec, alpha)
    name, values = parse_spec(spec, what, "softplus(beta=2.0)")
    if name == "leaky_relu":
        raise ValueError(f"{what} {spec!r}: leaky_relu's slope is the setup's alpha; give "
                         f"activation='leaky_relu' and alpha={values.get('alpha', 0.01)!r}")
    return from_spec(spec, what, ACTIVATIONS, "softplus(beta=2.0)")


@dataclass(frozen=True)
class Arm:
    """One configuration of a study: the hidden layers' initializer, the output layer's
    initializer (None: the same), whether every epoch shuffles the samples, how the biases
    start, when each layer is updated, the loss and the optimizer; and, where an arm differs
    from the study's setup in them, its learning rate and hidden layers.

    Initializers are registered names, with parameters if needed (``"normal(std=0.5)"``).
    ``bias_init`` is None for zero biases (as in the notes) or an initializer name that draws
    them (see :class:`tinynet.Layer`). ``update`` is ``"after_backward"`` (as in the notes'
    formulas) or ``"during_backward"`` (see :func:`tinynet.fit`). ``loss`` is a name of
    :data:`tinynet.losses.LOSSES` (built in or registered): ``"mse"`` (the notes'),
    ``"bce"``, or one with parameters, ``"huber(delta=0.5)"``; ``optimizer`` an optimizer spec
    (:func:`tinynet.optimizers.get_optimizer`): ``"sgd"`` (the notes'), ``"momentum"``,
    ``"adam"``, or one with hyperparameters, ``"momentum(momentum=0.95)"``. Both are resolved
    by name through the registries (so a registered class of the user's works as a built-in
    one) and kept as their ``repr`` writes them: a name, which pickles to a cluster's workers
    as text. ``lr`` and ``hidden``, if given, replace the setup's
    learning rate and hidden layer widths for this arm alone (:meth:`Setup.for_arm`), so that
    one study can compare, say, Adam at its own learning rate, or a wider network, with the
    setup's network (None: the setup's); so does ``warmup``, the steps of its learning rate's
    warmup. ``residual`` (a name of :data:`tinynet.network.RESIDUALS`, or None for a chain),
    with ``norm`` and ``branch``, groups the setup's hidden layers after the first into
    residual blocks of ``branch`` layers (:func:`network_sizes`). ``label`` names the arm in
    reports (default: made from the settings); ``reported_rate`` is the success rate the notes
    reported for this arm, if any.
    """

    init: str
    output_init: str | None = None
    shuffle: bool = False
    label: str = ""
    reported_rate: float | None = None
    bias_init: str | None = None
    update: str = "after_backward"
    loss: str = "mse"
    optimizer: str = "sgd"
    lr: float | None = None
    hidden: tuple[int, ...] | None = None
    residual: str | None = None
    norm: str | None = None
    branch: int = 1
    warmup: int | None = None

    def __post_init__(self) -> None:
        specs = {"init": self.init}
        for name in ("output_init", "bias_init"):
            if getattr(self, name) is not None:
                specs[name] = getattr(self, name)
        for name, spec in specs.items():
            if not isinstance(spec, str):
                raise TypeError(f"{name} must be a registered initializer name such as "
                                f"'he_leaky', got {spec!r} of type {type(spec).__name__}")
            init.get(spec)  # an unknown name or parameter fails here, before any training
        object.__setattr__(self, "shuffle", check_bool("shuffle", self.shuffle))
        check_choice("update", self.update, UPDATES)
        object.__setattr__(self, "loss", repr(get_loss(self.loss)))
        object.__setattr__(self, "optimizer", repr(get_optimizer(self.optimizer)))
        if self.lr is not None:
            object.__setattr__(self, "lr", check_float("lr", self.lr, minimum=0.0,
                                                       inclusive=False))
        if self.hidden is not None:
            object.__setattr__(self, "hidden", check_hidden(self.hidden))
        self._check_blocks()
        if not isinstance(self.label, str):
            raise TypeError(f"label must be a string, got {self.label!r}")
        if self.reported_rate is not None:
            check_probability("reported_rate", self.reported_rate)

    def _check_blocks(self) -> None:
        """``residual`` a name of :data:`tinynet.network.RESIDUALS` or None, ``norm`` and
        ``branch`` only with it and as :func:`tinynet.network.check_residual` allows them,
        ``warmup`` None or a number of steps."""
        if self.residual is not None:
            kind, norm, branch = check_residual(self.residual, self.norm, self.branch)
            object.__setattr__(self, "residual", kind)
            object.__setattr__(self, "norm", norm)
            object.__setattr__(self, "branch", branch)
        elif self.norm is not None or self.branch != 1:
            raise ValueError(f"norm={self.norm!r} and branch={self.branch!r} are a residual "
                             "block's: give residual= (a name of tinynet.network.RESIDUALS) "
                             "with them")
        if self.warmup is not None:
            object.__setattr__(self, "warmup", check_int("warmup", self.warmup, minimum=0))

    @property
    def name(self) -> str:
        """``label``, or a name made from the settings."""
        if self.label:
            return self.label
        name = self.init if self.output_init is None else f"{self.init} / out {self.output_init}"
        if self.bias_init is not None:
            name += f", biases {self.bias_init}"
        if self.update != "after_backward":
            name += f", updated {self.update.replace('_', ' ')}"
        if self.loss != "mse":
            name += f", {self.loss} loss"
        if self.optimizer != "sgd":
            name += f", {self.optimizer}"
        if self.lr is not None:
            name += f", lr {self.lr:g}"
        if self.hidden is not None:
            name += f", hidden {','.join(map(str, self.hidden))}" if self.hidden else \
                ", no hidden layer"
        if self.residual is not None:
            norm = f", {self.norm}-norm" if self.norm else ""
            name += f", {self.residual} blocks of {self.branch}{norm}"
        if self.warmup is not None:
            name += f", warmup {self.warmup:,}"
        return name + (", shuffled" if self.shuffle else "")


@dataclass(frozen=True)
class Setup:
    """What every arm of a study shares: the task (default: XOR's four points), the network's
    hidden layers and activations, and how it trains (SGD on the arm's loss, ``batch_size``
    samples a step). Defaults: 99mlp as the notes describe it, with the shape that fits their
    reported rates best (two hidden LeakyReLU layers of 2), per-sample SGD.

    ``activation`` and ``output`` are registered activation names, or a name with parameters
    (``"softplus(beta=2.0)"``: :func:`activation_of`); ``alpha`` is leaky_relu's slope.
    ``warmup`` and ``decay``: the learning rate's schedule, as :func:`tinynet.fit` takes
    them (:mod:`tinynet.schedules`)."""

    hidden: tuple[int, ...] = (2, 2)
    activation: str = "leaky_relu"
    alpha: float = 0.01
    output: str = "sigmoid"
    lr: float = 0.01
    epochs: int = 20_000
    seeds: int = 100
    first_seed: int = 0
    backend: str = "numba"
    task: Task = XOR
    batch_size: int = 1
    warmup: int = 0
    decay: str = "constant"

    def __post_init__(self) -> None:
        checked = dict(
            hidden=check_hidden(self.hidden),
            alpha=check_float("alpha", self.alpha, minimum=0.0, inclusive=True),
            lr=check_float("lr", self.lr, minimum=0.0, inclusive=False),
            epochs=check_int("epochs", self.epochs, minimum=1, maximum=MAX_EPOCHS),
            seeds=check_int("seeds", self.seeds, minimum=1),
            first_seed=check_seed("first_seed", self.first_seed),
            backend=check_backend(self.backend),
            **dict(zip(("warmup", "decay"), check_schedule(self.warmup, self.decay))))
        for name, value in checked.items():  # plain Python values (NumPy scalars would not
            object.__setattr__(self, name, value)  # survive JSON)
        activation_of(self.activation, self.alpha)
        output = activation_of(self.output, self.alpha, "output activation")
        if isinstance(self.task, Task) and self.task.classification != output.over_units:
            raise ValueError(
                f"task {self.task.name!r} has {self.task.outputs} output"
                f"{'s' * (self.task.outputs > 1)}: give output="
                f"{'softmax' if self.task.classification else 'sigmoid'!r}, not "
                f"{self.output!r}" + (" (and arms with loss='cross_entropy')"
                                      if self.task.classification else ""))
        check_seed("last seed (first_seed + seeds - 1)", self.first_seed + self.seeds - 1)
        check_instance("task", self.task, Task, "a tinynet.xor Task")
        object.__setattr__(self, "batch_size", check_int("batch_size", self.batch_size,
                                                         minimum=1, maximum=self.task.samples))
        check_memory(f"one network of {self.shape} (its parameters and their gradients)",
                     16 * self.parameters, "use narrower hidden layers")

    @classmethod
    def from_dict(cls, values: dict) -> "Setup":
        """The setup that ``dataclasses.asdict`` (and so a study's JSON) wrote as ``values``."""
        values = dict(values)
        if "hidden" in values:
            values["hidden"] = tuple(values["hidden"])
        if isinstance(values.get("task"), dict):
            values["task"] = Task(**values["task"])
        return cls(**values)

    def for_arm(self, arm: "Arm") -> "Setup":
        """This setup as ``arm`` trains on it: with the arm's learning rate, hidden layers and
        warmup where it gives them (:attr:`Arm.lr`, :attr:`Arm.hidden`, :attr:`Arm.warmup`)."""
        changed = {name: getattr(arm, name) for name in ("lr", "hidden", "warmup")
                   if getattr(arm, name) is not None}
        return replace(self, **changed) if changed else self

    @property
    def seed_range(self) -> range:
        """The seeds every arm trains from: ``seeds`` of them from ``first_seed``."""
        return range(self.first_seed, self.first_seed + self.seeds)

    @property
    def sizes(self) -> list[int]:
        """Layer sizes, the task's inputs first (2 for the 2-D sets) and its outputs last (1,
        or one per class: :attr:`Task.outputs`)."""
        return [self.task.inputs, *self.hidden, self.task.outputs]

    @property
    def parameters(self) -> int:
        """P, the number of weights and biases of the network (:func:`tinynet.packing.count`)."""
        return packing.count(self.sizes)

    @property
    def shape(self) -> str:
        """The layer sizes as a name, such as ``"2-2-2-1"``."""
        return "-".join(map(str, self.sizes))

    def describe(self, seeds: bool = True, shape: str | None = None) -> str:
        """One line: task, shape (or ``shape``), activations, lr, batch size (if not 1),
        epochs, seeds (unless ``seeds`` is False), backend."""
        alpha = f" alpha={self.alpha:g}" if self.activation == "leaky_relu" else ""
        seed_range = (f"{self.seeds} seeds ({self.first_seed}-"
                      f"{self.first_seed + self.seeds - 1}), " if seeds else "")
        batch = f", batches of {self.batch_size}" if self.batch_size > 1 else ""
        parts = [*([f"warmup {self.warmup:,} steps"] if self.warmup else []),
                 *([f"{self.decay} decay"] if self.decay != "constant" else [])]
        schedule = f" ({', then '.join(parts)})" if parts else ""
        return (f"{self.task.describe()}, {shape or self.shape} ({self.activation}{alpha} hidden, "
                f"{self.output} output), lr {self.lr:g}{schedule}{batch}, {self.epochs:,} "
                "epochs, "
                f"{seed_range}backend {self.backend}")


def setup_dict(setup: Setup) -> dict:
    """``dataclasses.asdict(setup)`` as a study's JSON writes it: your own data
    (:class:`~tinynet.xor.task.OwnData`) as its description, which names the arrays' hash;
    the task's ``test``, which is None once the task is made, left out."""
    values = asdict(setup)
    values["task"].pop("test")
    for name in ("warmup", "decay"):        # a study without a schedule writes what it always
        if values[name] == Setup.__dataclass_fields__[name].default:  # wrote
            del values[name]
    if isinstance(setup.task.data, OwnData):
        values["task"]["data"] = repr(setup.task.data)
    return values


def arm_parameters(setup: Setup, arm: Arm | None = None) -> int:
    """P, the number of parameters of ``arm``'s network on ``setup`` (as the arm trains on
    it): :attr:`Setup.parameters`, and for an arm of residual blocks (the same dense layers:
    :func:`network_sizes`) each block's LayerNorm gain and bias and its trained α too."""
    if arm is None or arm.residual is None:
        return setup.for_arm(arm).parameters if arm is not None else setup.parameters
    sizes = network_sizes(setup, arm)
    blocks, width = len(sizes) - 3, sizes[1]
    norms = 2 * width * blocks if arm.norm else 0
    trained = blocks if arm.residual in ("rezero", "fixup") else 0
    return setup.for_arm(arm).parameters + norms + trained


def arm_dict(arm: Arm) -> dict:
    """``dataclasses.asdict(arm)`` as a study's JSON writes it, with its ``name``; a residual
    block's settings and the warmup only where the arm gives them, so that a study without
    them writes what it always wrote."""
    values = asdict(arm)
    for name in ("residual", "norm", "branch", "warmup"):
        if values[name] == Arm.__dataclass_fields__[name].default:
            del values[name]
    return {**values, "name": arm.name}


DEFAULT_SETUP = Setup()
"""The setup a study runs unless told otherwise: 99mlp as the notes describe it."""


def classification_setup(name: str | OwnData) -> Setup:
    """The setup a study of data set ``name`` (of :data:`tinynet.data.CLASSIFICATION`, or your
    own data) starts from: one hidden ReLU layer of 100, a softmax output (with
    cross-entropy, the arms' default loss there), minibatches of 32 (all the samples, if
    fewer) at lr 0.1, shuffled, 10 epochs; the options given change it."""
    task = Task(name)
    return Setup(task=task, hidden=(100,), activation="relu", output="softmax", lr=0.1,
                 epochs=10, batch_size=min(32, task.samples))


def build_network(setup: Setup, arm: Arm, seed: int) -> Network:
    """The network ``arm`` trains from ``seed`` in a study of ``setup``, as initialised (its
    shape :meth:`Setup.for_arm`'s)."""
    setup = setup.for_arm(arm)
    blocks = {} if arm.residual is None else dict(residual=arm.residual, norm=arm.norm,
                                                  branch=arm.branch)
    return mlp(network_sizes(setup, arm), activation=activation_of(setup.activation, setup.alpha),
               output=activation_of(setup.output, setup.alpha), init=arm.init,
               output_init=arm.output_init, alpha=setup.alpha,
               bias_init=0.0 if arm.bias_init is None else arm.bias_init, seed=seed, **blocks)


def network_sizes(setup: Setup, arm: Arm) -> list[int]:
    """The sizes :func:`tinynet.mlp` builds ``arm``'s network from, on ``setup`` (as the arm
    trains on it): the setup's, or for an arm of residual blocks, the setup's hidden layers
    after the first grouped into blocks of ``arm.branch`` (2-16x9-1 with ``branch=2``: a layer
    of 16, four blocks of two layers, the output), so that a plain arm and a residual one of
    a study have the same layers."""
    sizes = setup.for_arm(arm).sizes
    if arm.residual is None:
        return sizes
    hidden = sizes[1:-1]
    square = len(hidden) - 1
    if square < arm.branch or square % arm.branch or len(set(hidden)) != 1:
        raise ValueError(f"arm {arm.name!r} groups the hidden layers after the first into "
                         f"blocks of {arm.branch}: give hidden layers of one width, 1 + a "
                         f"multiple of {arm.branch} of them; got {tuple(hidden)}")
    return [sizes[0], *hidden[:1 + square // arm.branch], sizes[-1]]
