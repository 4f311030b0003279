"""The study the XOR command's arguments describe: its arms and setups, made (and so
checked) from the parsed arguments before anything trains (:func:`design`)."""

from __future__ import annotations

import argparse
from dataclasses import asdict, replace

from .. import data
from .arguments import DEFAULT_INIT
from .arms import DEFAULT_SETUP, Arm, Setup, classification_setup, spec_name
from .failed import check_folder
from .hyperparameters import chosen_spec, given
from .outputs import check_output_names
from .presets import get_preset
from .task import OwnData, Task

__all__ = ["design"]

SETUP_FLAGS = ("hidden", "activation", "lr", "epochs", "seeds", "first_seed", "backend",
               "batch_size", "warmup", "decay")
"""The arguments that set a field of the same name of the setup."""


def design(parser: argparse.ArgumentParser,
           args: argparse.Namespace) -> tuple[list[Arm], list[Setup]]:
    """The arms and setups to run, made (and so checked) from ``args``; every refusal is
    one line through ``parser.error`` (exit 2)."""
    try:
        arms, setups = _design(parser, args)
    except (ValueError, TypeError, ModuleNotFoundError) as error:  # the last: a data extra
        parser.error(str(error))
    check_output_names(parser, args, [setup.shape for setup in setups])
    if args.save_failed is not None:
        try:
            check_folder(args.save_failed, [setup.shape for setup in setups],
                         [arm.name for arm in arms], setups[0].seed_range)
        except (ValueError, OSError) as error:
            parser.error(f"--save-failed {args.save_failed}: {error}")
    return arms, setups


def _design(parser: argparse.ArgumentParser,
            args: argparse.Namespace) -> tuple[list[Arm], list[Setup]]:
    """:func:`design` before the checks of the files it will write."""
    preset = None if args.preset is None else get_preset(args.preset)
    if preset is not None:
        for name in preset.sets:
            if getattr(args, name) is not None:
                parser.error(f"--{name.replace('_', '-')} cannot be combined with --preset "
                             f"{preset.name}, which sets it")
    if args.seed_ranges is not None and args.first_seed is not None:
        parser.error("--first-seed cannot be combined with --seed-ranges, which lists the "
                     "first seed of every range")
    for name in ("plot", "gallery", "curves", "save_failed"):
        if args.seed_ranges is not None and getattr(args, name) is not None:
            parser.error(f"--{name.replace('_', '-')} cannot be combined with --seed-ranges; "
                         "with --seed-ranges, use --json or --csv")
    base = DEFAULT_SETUP if preset is None else preset.base
    if preset is None and (isinstance(args.data, OwnData) or args.data in data.CLASSIFICATION):
        base = classification_setup(args.data)
    setup = replace(base, task=_task(parser, args, base, preset),
                    **{**{name: value for name in SETUP_FLAGS
                          if (value := getattr(args, name)) is not None},
                       **_activation(args, base)})
    made = args.hyperparameters
    many = setup.task.classification
    default_loss = "cross_entropy" if many else "mse"
    loss = chosen_spec(args, made, "loss", args.loss or default_loss) or args.loss
    optimizer = chosen_spec(args, made, "optimizer", args.optimizer or "sgd") or args.optimizer
    if preset is not None:
        arms, setups = preset.design(setup, args.shuffle, args.bias_init, args.update, loss,
                                     optimizer)
    else:
        shuffle = many if args.shuffle is None else args.shuffle
        arms = [Arm(spec, args.output_init, shuffle, bias_init=args.bias_init,
                    update=args.update or "after_backward", loss=loss or default_loss,
                    optimizer=optimizer or "sgd")
                for spec in args.init or ["he_normal" if many else DEFAULT_INIT]]
        setups = [setup]
    if (args.workers is not None or args.scheduler is not None) and \
            any(setup.backend != "numba" for setup in setups):
        parser.error("--workers and --scheduler train on the numba backend (bit for bit as in "
                     "process); --backend numpy runs in this process only")
    if args.seed_ranges is not None and len(setups) > 1:
        parser.error(f"--seed-ranges needs one shape, but --preset {args.preset} has "
                     f"{len(setups)}")
    if args.evaluate_every is not None and not many:
        parser.error(f"--evaluate-every {args.evaluate_every}: evaluates on a test set; give "
                     f"--data {' or '.join(data.CLASSIFICATION)}")
    seeds = setups[0].seeds  # every setup of a preset has the same seeds
    if args.gallery_seeds is not None and args.gallery_seeds > seeds:
        parser.error(f"--gallery-seeds {args.gallery_seeds}: more than the study's {seeds} "
                     f"seeds; expected a number from 1 to {seeds}")
    return arms, setups


def _activation(args: argparse.Namespace, base: Setup) -> dict[str, object]:
    """The setup's fields the activation's hyperparameter flags set: leaky_relu's slope is
    the setup's ``alpha`` (``--leaky-relu-alpha``, ``--alpha``); another class's fields make
    a spec, ``activation="softplus(beta=2.0)"``. A flag of a class that is not the hidden
    activation is refused (ValueError)."""
    chosen = spec_name(args.activation or base.activation)
    spec = chosen_spec(args, args.hyperparameters, "activation", chosen)
    if spec is None:
        return {}
    if chosen == "leaky_relu":
        return {h.field: value for h, value in given(args, args.hyperparameters, "activation")}
    return {"activation": spec}


def _task(parser: argparse.ArgumentParser, args: argparse.Namespace, base: Setup,
          preset: object) -> Task:
    """The task --data, --samples, --noise and --accuracy describe, from ``base``'s (another
    data set: from that one's own defaults); a batch of ``base`` larger than it is refused."""
    task = {name: value for name, value in (("data", args.data), ("n", args.samples),
                                            ("noise", args.noise), ("accuracy", args.accuracy))
            if value is not None}
    if task.get("data", base.task.data) != base.task.data:
        # another data set: its own defaults, not the base's
        task = {"n": None, "noise": None, "accuracy": None, **task}
    task = Task(**{**asdict(base.task), **task})
    if args.batch_size is None and base.batch_size > task.samples:
        parser.error(f"the batch size {base.batch_size} of "
                     f"{'--preset ' + preset.name if preset else '99mlp'} is more than the "
                     f"{task.samples} samples of the data; give --batch-size")
    return task
