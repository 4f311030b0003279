"""A user's own activation, loss and optimizer, defined and registered in a script of their
own (issue 41): softplus, ``my_huber`` (a Huber loss of the user's) and RMSprop, written with
tinynet.maths. Brought in with ``--import`` (a file path or a module name), they are names
like the built-in ones: in the command's choices, its ``--help`` and a flag per field
(``--rmsprop-eps`` beside ``--adam-eps``); in run_study; in the playground (its trainer
process imports the module too); and on a Dask cluster's workers, bit for bit the study
trained here."""

import json
import logging
import re
import subprocess
import sys
import textwrap
import threading
from dataclasses import fields

import numpy as np
import pytest
from helpers import checkout_environment
from playground_server import Served

from tinynet.results import EnsembleResult
from tinynet.xor import Arm, Setup, run_study
from tinynet.xor.cli import main, parse_args

DEFINITIONS = textwrap.dedent('''\
    """A user's definitions: softplus, a Huber loss of their own, RMSprop."""

    from dataclasses import dataclass

    import tinynet
    from tinynet.activations import Activation
    from tinynet.losses import Loss
    from tinynet.maths import exp, log1p, sqrt, where
    from tinynet.optimizers import Optimizer


    @tinynet.activations.register
    @dataclass(frozen=True, repr=False)
    class Softplus(Activation):
        """φ(z) = log(1 + e^(βz)) / β,  φ'(z) = σ(βz)."""

        name = "softplus"
        beta: float = 1.0

        def forward_and_derivative(self, z):
            e = exp(-abs(self.beta * z))
            value = (where(z > 0, self.beta * z, 0.0) + log1p(e)) / self.beta
            return value, where(z >= 0, 1.0, e) / (1.0 + e)


    @tinynet.losses.register
    @dataclass(frozen=True, repr=False)
    class MyHuber(Loss):
        """ℓ = ½ d² if |d| < δ else δ (|d| − ½ δ), d = ŷ − y;  dL/dŷ = clip(d, −δ, δ) / B."""

        name = "my_huber"
        delta: float = 1.0

        def value_and_gradient(self, y_hat, y, batch):
            d = y_hat - y
            inside = abs(d) < self.delta
            term = where(inside, 0.5 * d * d, self.delta * (abs(d) - 0.5 * self.delta))
            slope = where(inside, d, where(d > 0.0, self.delta, -self.delta))
            return term, slope / batch


    @tinynet.optimizers.register
    @dataclass(frozen=True, repr=False)
    class RMSprop(Optimizer):
        """v ← ρ v + (1 − ρ) g²,  p ← p − lr g / (√v + ε)."""

        name = "rmsprop"
        state = ("square_average",)
        ranges = {"rho": (0.0, 1.0), "eps": (0.0, float("inf"))}
        eps: float = 1e-8
        rho: float = 0.99

        def update(self, p, g, lr, square_average):
            average = self.rho * square_average + (1.0 - self.rho) * g * g
            return p - lr * g / (sqrt(average) + self.eps), average
    ''')
"""The user's script."""

CHOICES = ["--activation", "softplus", "--softplus-beta", "2", "--loss", "my_huber",
           "--my-huber-delta", "0.5", "--optimizer", "rmsprop", "--rmsprop-rho", "0.9",
           "--rmsprop-eps", "1e-6", "--lr", "0.05"]
"""The user's three classes, each with a hyperparameter set by its flag."""

TINY = ["--init", "he_normal", "--hidden", "3", "--seeds", "6", "--epochs", "40",
        "--backend", "numpy"]
"""A study small enough for the NumPy backend (nothing compiled)."""

SETUP = dict(hidden=(3,), activation="softplus(beta=2.0)", lr=0.05)
"""The setup CHOICES give."""


def users_arm() -> Arm:
    """The arm CHOICES give (once the script is imported: its names are then known)."""
    return Arm("he_normal", loss="my_huber(delta=0.5)", optimizer="rmsprop(eps=1e-06, rho=0.9)")


@pytest.fixture
def definitions(tmp_path, monkeypatch, restore_registries):
    """The script as ``defs/mydefs.py`` under a working folder ``tmp_path``; the registries
    (``restore_registries``, tests/conftest.py) and ``sys.modules`` as they were after the
    test."""
    (tmp_path / "defs").mkdir()
    (tmp_path / "defs" / "mydefs.py").write_text(DEFINITIONS)
    (tmp_path / "broken.py").write_text("raise RuntimeError('broken on purpose')\n")
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ("mydefs", "broken"):
        sys.modules.pop(name, None)
    if str(tmp_path / "defs") in sys.path:
        sys.path.remove(str(tmp_path / "defs"))


def import_user_module(argument: str):
    """:func:`tinynet.xor.imports.import_user_module` (imported here, so that the command's
    tests run, and fail, on a tinynet without it)."""
    from tinynet.xor.imports import import_user_module

    return import_user_module(argument)


def results_of(argv: list[str], capsys) -> dict:
    """The study ``main(argv)`` writes as JSON to stdout."""
    main([*argv, "--json", "-"])
    return json.loads(capsys.readouterr().out)


def without_seconds(study: dict) -> dict:
    for result in study["results"]:
        result.pop("seconds")
    return study


@pytest.mark.parametrize("form", ["defs/mydefs.py", "./defs/mydefs.py", "mydefs"])
def test_the_users_classes_run_from_the_command_line(form, definitions, capsys, monkeypatch):
    """By path, or by module name (on sys.path), the study is run_study's with the same
    names: the classes and their hyperparameters reached the arm and the setup."""
    if form == "mydefs":
        monkeypatch.syspath_prepend(str(definitions / "defs"))
    study = results_of(["--import", form, *CHOICES, *TINY], capsys)
    arm = study["results"][0]["arm"]
    assert (arm["loss"], arm["optimizer"]) == ("my_huber(delta=0.5)",
                                               "rmsprop(eps=1e-06, rho=0.9)")
    assert study["setup"]["activation"] == "softplus(beta=2.0)"
    expected = run_study([users_arm()], Setup(seeds=6, epochs=40, backend="numpy", **SETUP))
    assert without_seconds(study) == without_seconds(json.loads(expected.to_json()))


def test_the_users_names_and_flags_are_in_the_help(definitions, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--import", "defs/mydefs.py", "--help"])
    text = capsys.readouterr().out
    for flag in ("--softplus-beta", "--my-huber-delta", "--rmsprop-eps", "--rmsprop-rho",
                 "--adam-eps X, --eps X", "--huber-delta", "--leaky-relu-alpha X, --alpha X"):
        assert flag in text
    assert re.search(r"--optimizer \{adam,momentum,rmsprop,sgd\}", text)
    assert re.search(r"--loss \{bce,cross_entropy,huber,mse,my_huber\}", text)
    assert "softplus" in text.split("--activation ACTIVATION", 1)[1].split("\n  --")[0]


@pytest.mark.parametrize("argv, message", [
    (["--optimizer", "adam", "--rmsprop-eps", "1e-6"],
     r"--rmsprop-eps is rmsprop's eps \(an optimizer\); give --optimizer rmsprop, not adam"),
    (["--optimizer", "rmsprop", "--eps", "1e-6"],
     r"--adam-eps \(--eps\) is adam's eps \(an optimizer\); give --optimizer adam, not rmsprop"),
    (["--softplus-beta", "2"], r"--softplus-beta is softplus's beta \(an activation\); give "
                               r"--activation softplus, not leaky_relu"),
    (["--my-huber-delta", "0.5", "--loss", "huber"], r"give --loss my_huber, not huber"),
    (["--optimizer", "rmsprop", "--rmsprop-rho", "1"], r"RMSprop's rho must be in \[0, 1\)"),
    (["--softplus-beta", "nan", "--activation", "softplus"],
     r"Softplus's beta must be a finite number, got nan"),
    (["--alpha", "0.1", "--activation", "relu"], r"--leaky-relu-alpha \(--alpha\) is "
                                                 r"leaky_relu's alpha \(an activation\); give "
                                                 r"--activation leaky_relu, not relu"),
    (["--huber-delta", "0.5"], r"--huber-delta is huber's delta \(a loss\); give --loss "
                               r"huber, not mse"),
    (["--huber-delta", "-1", "--loss", "huber"], r"huber's delta must be positive, got -1"),
    (["--adam-eps", "abc", "--optimizer", "adam"], r"--adam-eps.*expected a number, got 'abc'"),
])
def test_a_flag_of_another_class_is_refused_in_one_line(argv, message, definitions, capsys):
    """Adam's eps and the user's RMSprop's eps are two flags; each belongs to its class."""
    with pytest.raises(SystemExit) as exit:
        main(["--import", "defs/mydefs.py", *argv, *TINY])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err), err


def test_adams_and_rmsprops_eps_are_both_settable(definitions, capsys):
    adam = results_of(["--import", "defs/mydefs.py", "--optimizer", "adam", "--eps", "1e-4",
                       *TINY], capsys)
    rmsprop = results_of(["--import", "defs/mydefs.py", "--optimizer", "rmsprop",
                          "--rmsprop-eps", "1e-4", *TINY], capsys)
    assert adam["results"][0]["arm"]["optimizer"] == "adam(beta1=0.9, beta2=0.999, eps=0.0001)"
    assert rmsprop["results"][0]["arm"]["optimizer"] == "rmsprop(eps=0.0001, rho=0.99)"


@pytest.mark.parametrize("argument, message", [
    ("nothere.py", r"--import nothere\.py: ImportError: no such file 'nothere\.py'"),
    ("./defs/nothere.py", r"--import \./defs/nothere\.py: ImportError: no such file"),
    ("broken.py", r"--import broken\.py: RuntimeError: broken on purpose"),
    ("no_such_module_xyz", r"--import no_such_module_xyz: ModuleNotFoundError"),
])
def test_an_import_that_fails_is_one_line_naming_the_argument(argument, message, definitions,
                                                              capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--import", argument, *TINY])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err), err
    assert "broken" not in sys.modules


def test_a_file_imported_twice_is_the_same_module_and_another_file_of_its_name_is_refused(
        definitions):
    first = import_user_module("defs/mydefs.py")
    assert import_user_module("./defs/mydefs.py") is first
    (definitions / "mydefs.py").write_text("")
    with pytest.raises(ImportError, match="a module 'mydefs' is already imported from"):
        import_user_module("mydefs.py")


def test_the_playground_command_refuses_an_import_that_fails_in_one_line(definitions, capsys):
    from tinynet.playground.cli import main as playground

    assert playground(["--import", "broken.py", "--no-browser"]) == 2
    assert capsys.readouterr().err == ("python -m tinynet.playground: error: --import broken.py: "
                                       "RuntimeError: broken on purpose\n")


@pytest.mark.slow  # the trainer process compiles a kernel of the user's classes
def test_the_playground_offers_and_trains_the_users_classes(definitions):
    """Started with the module (as ``python -m tinynet.playground --import defs/mydefs.py``
    does), the server's menus name the classes, and its trainer process, which imports the
    module too, trains them: the page's study is run_study's here."""
    import_user_module("defs/mydefs.py")
    from tinynet.playground import Playground, read_form

    served = Served.__new__(Served)  # Served, on a server given the module
    served.server = Playground(port=0, modules=("defs/mydefs.py",))
    served.url = served.server.url
    served.thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    served.thread.start()
    try:
        status, options = served.json("api/options")
        menus = options["choices"]
        assert status == 200
        assert "softplus" in menus["activation"] and "my_huber" in menus["loss"] and \
            "rmsprop" in menus["optimizer"]
        fields = {"activation": "softplus", "loss": "my_huber", "optimizer": "rmsprop",
                  "seeds": "8", "epochs": "50", "hidden": "3", "b": ""}
        payload = served.result(fields)
    finally:
        served.close()
    form = read_form(fields)
    study = run_study(form.arms, form.setup, record_every=form.record_every)
    assert without_seconds(payload["study"]) == without_seconds(
        json.loads(json.dumps(study.to_dict())))


@pytest.mark.slow  # starts a Dask cluster and compiles the user's classes' kernel
def test_a_study_of_the_users_classes_on_a_dask_cluster_is_the_one_trained_here(definitions):
    """The module sent to the workers (tinynet.xor.cluster.send_modules, as --import does),
    every per-seed array of the study on the cluster equals the one trained here."""
    from dask.distributed import Client, LocalCluster

    from tinynet.xor.cluster import send_modules

    import_user_module("defs/mydefs.py")
    setup = Setup(seeds=128, epochs=300, **SETUP)
    here = run_study([users_arm()], setup, record_every=50)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        send_modules(client, ["mydefs"])
        there = run_study([users_arm()], setup, record_every=50, executor=client, block_seeds=64)
    assert here.report() == there.report()
    for a, b in zip(here.results, there.results):
        np.testing.assert_array_equal(a.trained, b.trained)
        for field in fields(EnsembleResult):
            np.testing.assert_array_equal(getattr(a.ensemble, field.name),
                                          getattr(b.ensemble, field.name))


@pytest.mark.slow  # starts a local Dask cluster and compiles the user's classes' kernel
def test_the_command_runs_the_users_classes_on_workers_as_here(definitions):
    """``--import ./defs/mydefs.py ... --workers 1``: the same results as without."""
    arguments = [sys.executable, "-m", "tinynet.xor", "--import", "./defs/mydefs.py",
                 *CHOICES, "--init", "he_normal", "--hidden", "3", "--seeds", "128",
                 "--epochs", "300"]
    environment = checkout_environment(definitions)
    alone = subprocess.run([*arguments, "--json", "alone.json"], capture_output=True,
                           text=True, env=environment, timeout=600, cwd=definitions)
    clustered = subprocess.run([*arguments, "--json", "cluster.json", "--workers", "1"],
                               capture_output=True, text=True, env=environment, timeout=600,
                               cwd=definitions)
    assert alone.returncode == 0 and clustered.returncode == 0, clustered.stderr
    assert clustered.stdout == alone.stdout
    assert without_seconds(json.loads((definitions / "cluster.json").read_text())) == \
        without_seconds(json.loads((definitions / "alone.json").read_text()))


def test_a_flag_name_already_taken_gets_its_kind_as_prefix(definitions, capsys):
    """An optimizer named ``first`` with a field ``seed`` would make ``--first-seed``, the
    command's own flag; an optimizer named ``huber`` with a field ``delta``, the Huber loss's
    ``--huber-delta``: each clash is told apart by the kind."""
    (definitions / "clashes.py").write_text(textwrap.dedent('''\
        from dataclasses import dataclass

        import tinynet
        from tinynet.maths import where
        from tinynet.optimizers import Optimizer


        @tinynet.optimizers.register
        @dataclass(frozen=True, repr=False)
        class First(Optimizer):
            name = "first"
            seed: float = 1.0

            def update(self, p, g, lr):
                return p - self.seed * lr * g


        @tinynet.optimizers.register
        @dataclass(frozen=True, repr=False)
        class HuberStep(Optimizer):
            name = "huber"
            delta: float = 1.0

            def update(self, p, g, lr):
                return p - lr * where(abs(g) < self.delta, g,
                                        where(g > 0.0, self.delta, -self.delta))
        '''))
    try:
        parser, args = parse_args(["--import", "clashes.py", "--optimizer", "huber",
                                   "--optimizer-huber-delta", "0.5", "--loss-huber-delta", "2",
                                   "--loss", "huber", "--optimizer-first-seed", "3",
                                   "--first-seed", "7"])
    except SystemExit:
        pytest.fail(capsys.readouterr().err)
    finally:
        sys.modules.pop("clashes", None)
    flags = {h.flags[0]: getattr(args, h.dest) for h in args.hyperparameters}
    assert flags["--optimizer-huber-delta"] == 0.5 and flags["--loss-huber-delta"] == 2.0
    assert flags["--optimizer-first-seed"] == 3.0 and args.first_seed == 7
