"""Studies on an executor (tinynet.xor.blocks): on a local Dask cluster started and closed
here, and on a process pool, a study is bit for bit the in-process one, for any block size
and when a worker dies mid-study; a failing block names its arm and seeds in one line; the
CLI runs on a cluster it starts (--workers) or one it is pointed at (--scheduler)."""

import concurrent.futures
import json
import logging
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import fields, replace

import numpy as np
import pytest

from helpers import checkout_environment, default_stop_signals
from dask.distributed import Client, LocalCluster

import tinynet
from tinynet.results import EnsembleResult
from tinynet.xor import Arm, Setup, Task, classification_setup, get_preset, run_seed_ranges, \
    run_study
from tinynet.xor.blocks import BLOCK_SEEDS, BlockError, block_size, blocks
from tinynet.xor.cli import main
from tinynet.xor.cluster import DASK_MISSING

pytestmark = [pytest.mark.unrolled, pytest.mark.slow]  # the default kernels, on the workers as here

ARMS = [Arm("normal"), Arm("he_leaky", shuffle=True)]
SETUP = Setup(seeds=320, epochs=2000)


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes, as `dask worker --nthreads 1` would start."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client


def assert_same_study(here, there):
    """Every per-seed array and every summary equal, bit for bit (the times aside: a task
    with a test set reports each arm's seconds at the end of its row)."""
    def report(study):
        text = study.report()
        return re.sub(r" +[\d,]+\.\d$", "", text, flags=re.M) \
            if study.setup.task.classification else text

    assert report(here) == report(there)
    for a, b in zip(here.results, there.results):
        for name in ("trained", "solved", "outcomes"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        for field in fields(EnsembleResult):
            if field.name == "evaluation" and a.ensemble.evaluation is not None:
                for name in ("epochs", "train_loss", "train_accuracy", "test_loss",
                             "test_accuracy"):
                    np.testing.assert_array_equal(getattr(a.ensemble.evaluation, name),
                                                  getattr(b.ensemble.evaluation, name))
                continue
            np.testing.assert_array_equal(getattr(a.ensemble, field.name),
                                          getattr(b.ensemble, field.name))
        assert a.held_out_quartiles == b.held_out_quartiles
        assert a.test_accuracy == b.test_accuracy and a.test_loss == b.test_loss
        assert a.final_loss_quartiles == b.final_loss_quartiles


@pytest.fixture(scope="module")
def here():
    return run_study(ARMS, SETUP, progress=False, record_every=100)


@pytest.mark.parametrize("block_seeds", [64, 192])
def test_a_study_on_the_cluster_is_the_study_in_process(client, here, block_seeds):
    there = run_study(ARMS, SETUP, progress=False, record_every=100, executor=client,
                      block_seeds=block_seeds)
    assert_same_study(here, there)


def test_a_drawn_task_on_the_generic_kernel_is_the_same_too(client):
    setup = Setup(task=Task("circles", n=64), hidden=(8, 8), activation="relu", batch_size=16,
                  lr=0.1, epochs=30, seeds=192)
    arms = [Arm("he_normal", shuffle=True)]
    assert_same_study(run_study(arms, setup, progress=False),
                      run_study(arms, setup, progress=False, executor=client, block_seeds=64))


@pytest.mark.parametrize("hidden", [8, 16], ids=["lanes", "members as single fits"])
def test_a_digits_study_on_the_cluster_is_the_study_in_process(client, hidden):
    """Test accuracy and every evaluation bit for bit, on the lanes and on single fits (a
    64-16 layer in batches of 32 calls BLAS: tinynet.compiled.backend.calls_blas)."""
    setup = replace(classification_setup("digits"), hidden=(hidden,), epochs=2, seeds=160)
    arms = [Arm("he_normal", loss="cross_entropy", shuffle=True),
            Arm("normal(std=0.01)", loss="cross_entropy", shuffle=True)]
    here = run_study(arms, setup, evaluate_every=1)
    assert here.results[0].ensemble.evaluation.test_accuracy.shape == (160, 2)
    assert_same_study(here, run_study(arms, setup, evaluate_every=1, executor=client,
                                      block_seeds=64))


def test_a_process_pool_gives_the_same_study(here):
    with concurrent.futures.ProcessPoolExecutor(
            2, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = run_study(ARMS, SETUP, progress=False, record_every=100, executor=pool,
                          block_seeds=128)
    assert_same_study(here, there)


def test_a_worker_killed_mid_study_costs_only_a_retry(client):
    """Kill one worker process (SIGKILL) a second into training a block: the scheduler runs
    that block again, and the study equals the in-process one. Blocks of 64 seeds x 1,000,000
    epochs take 2.7 s on one core of a fast machine (250,000 took 0.7 s there: the blocks were
    done before the kill)."""
    setup = Setup(seeds=256, epochs=1_000_000)
    arms = [Arm("normal")]
    outcome = {}
    run = threading.Thread(target=lambda: outcome.update(study=run_study(
        arms, setup, progress=False, executor=client, block_seeds=64)))
    pids = client.run(os.getpid)
    run.start()
    deadline = time.monotonic() + 300

    def executing() -> dict:
        return client.run(lambda dask_worker: dask_worker.state.executing_count)

    while not any(executing().values()):
        assert time.monotonic() < deadline, "no block started"
        time.sleep(0.05)
    time.sleep(1.0)
    busy = next(address for address, count in executing().items() if count)
    os.kill(pids[busy], signal.SIGKILL)
    killed_mid_run = run.is_alive()
    run.join(timeout=600)
    assert killed_mid_run and not run.is_alive()
    assert pids[busy] not in client.run(os.getpid).values()  # that process is gone
    started = client.run_on_scheduler(lambda dask_scheduler: [
        key for key, _, finish, *_ in dask_scheduler.transition_log
        if str(key).startswith("train_block") and finish == "processing"])
    assert len(started) > len(set(started)), "no block was run a second time"
    assert_same_study(run_study(arms, setup, progress=False), outcome["study"])


class ReversedExecutor(concurrent.futures.Executor):
    """Runs nothing until ``expected`` tasks are submitted, then runs them in this process in
    reverse order, completing each future as it goes: the last block finishes first."""

    def __init__(self, expected: int):
        self.expected, self.calls = expected, []

    def submit(self, fn, *args):
        future = concurrent.futures.Future()
        self.calls.append((future, fn, args))
        if len(self.calls) == self.expected:
            for pending, call, arguments in reversed(self.calls):
                pending.set_result(call(*arguments))
        return future


def test_blocks_that_finish_in_reverse_order_are_put_back_in_seed_order(here):
    there = run_study(ARMS, SETUP, progress=False, record_every=100,
                      executor=ReversedExecutor(expected=2 * 5), block_seeds=64)
    assert_same_study(here, there)


def test_sweeps_seed_ranges_and_presets_take_the_executor(client):
    setup = Setup(seeds=128, epochs=300)
    for run in (lambda **kw: get_preset("notes").run(setup, progress=False, **kw),
                lambda **kw: run_seed_ranges(ARMS, setup, (0, 1000), progress=False, **kw)):
        alone, there = run(), run(executor=client, block_seeds=64)
        for a, b in zip(alone.studies, there.studies):
            assert_same_study(a, b)


def loaded_kernels() -> list[tuple[str, int, int]]:
    """In this process, each generated kernel: its module, how many signatures were loaded
    from the cache, how many compiled."""
    return [(name, sum(module.fit_block.stats.cache_hits.values()),
             sum(module.fit_block.stats.cache_misses.values()))
            for name, module in list(sys.modules.items())
            if name.startswith("tinynet_kernel_") and hasattr(module, "fit_block")]


def test_fresh_workers_load_their_kernels_from_the_cache(client):
    """After one study has compiled (or loaded) the kernels, new worker processes load them
    from the disk cache: on each, every kernel it used was loaded, none compiled. The new
    processes are a second cluster's (``client.restart()`` waited 120 s for a worker that never
    came back, on a busy CI machine)."""
    setup = Setup(seeds=128, epochs=10)
    run_study(ARMS[:1], setup, progress=False, executor=client, block_seeds=64)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as fresh:
        run_study(ARMS[:1], setup, progress=False, executor=fresh, block_seeds=64)
        used = [kernels for kernels in fresh.run(loaded_kernels).values() if kernels]
    assert used, "no worker trained a block"
    assert all(hits >= 1 and compiled == 0 for kernels in used for _, hits, compiled in kernels)


def test_a_failing_block_names_its_arm_and_seeds_in_one_line(client, restore_registry):
    @tinynet.init.register("only_here")
    def only_here(shape, rng):  # registered in this process, unknown to the workers
        return rng.normal(size=shape)

    with pytest.raises(BlockError, match=r"^arm 'only_here', seeds 64-127: UnknownNameError: "
                                         r"unknown initializer 'only_here'") as error:
        run_study([Arm("only_here")], Setup(seeds=64, first_seed=64, epochs=10),
                  progress=False, executor=client, block_seeds=64)
    assert "\n" not in str(error.value)


def test_blocks_cover_the_seeds_once_in_order():
    cut = blocks(ARMS[0], replace(SETUP, seeds=300, first_seed=7), 128)
    assert [(b.setup.first_seed, b.setup.seeds) for b in cut] == [(7, 128), (135, 128),
                                                                   (263, 44)]
    assert str(cut[1]) == "arm 'normal', seeds 135-262"


@pytest.mark.parametrize("settings,message", [
    ({"block_seeds": 100}, r"block_seeds must be a multiple of 64 \(.*\), got 100"),
    ({"block_seeds": 32}, "block_seeds must be an integer >= 64"),
    ({"record_every": 0}, "record_every must be an integer from 1 to 9007199254740992"),
    ({"setup": replace(SETUP, backend="numpy")}, "trains on the numba backend"),
])
def test_bad_settings_are_refused_before_anything_is_sent(settings, message):
    executor = ReversedExecutor(expected=1)
    with pytest.raises(ValueError, match=message):
        run_study(ARMS, settings.pop("setup", SETUP), progress=False, executor=executor,
                  **settings)
    assert not executor.calls


def test_block_seeds_without_an_executor_is_refused():
    with pytest.raises(ValueError, match="without one it has no use"):
        run_study(ARMS, SETUP, progress=False, block_seeds=128)


def test_the_default_block_gives_every_worker_two_blocks_up_to_a_limit():
    assert block_size(100, 2) == 64        # 100 seeds on 2 workers: 2 blocks
    assert block_size(1000, 2) == 256      # 4 blocks
    assert block_size(100_000, 2) == BLOCK_SEEDS
    assert block_size(10, 8) == 64


def test_a_thread_pool_is_refused():
    with concurrent.futures.ThreadPoolExecutor(1) as pool, \
            pytest.raises(TypeError, match="got a ThreadPoolExecutor"):
        run_study(ARMS, SETUP, progress=False, executor=pool)


def test_an_executor_must_submit():
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor or a "
                                        "dask.distributed.Client, got 3"):
        run_study(ARMS, SETUP, progress=False, executor=3)


def test_results_of_different_runs_do_not_concatenate(here):
    longer = replace(here.results[0].ensemble, epochs=1)
    with pytest.raises(ValueError, match=r"parts\[1\] ran with \{'epochs': 1, "):
        EnsembleResult.concatenate([here.results[0].ensemble, longer])
    with pytest.raises(ValueError, match="at least one"):
        EnsembleResult.concatenate([])


@pytest.mark.parametrize("arguments", [
    ["--seeds", "128", "--epochs", "500", "--init", "normal,he_leaky"],
    ["--seeds", "64", "--epochs", "500", "--seed-ranges", "0,1000"],
])
def test_the_cli_on_a_scheduler_prints_what_it_prints_in_process(client, capsys, arguments):
    main(arguments)
    alone = capsys.readouterr().out
    main([*arguments, "--scheduler", client.scheduler.address, "--block-seeds", "64"])
    assert capsys.readouterr().out == alone


def test_the_cli_starts_a_local_cluster_with_the_imported_initializers(tmp_path):
    """--workers 2 with an initializer from an --import module in the working folder: the
    workers get the module, and the results equal the in-process run's."""
    (tmp_path / "mine.py").write_text(
        "import tinynet\n\n\n@tinynet.init.register('mine')\n"
        "def mine(shape, rng):\n    return rng.normal(0.0, 0.7, size=shape)\n")
    arguments = [sys.executable, "-m", "tinynet.xor", "--import", "mine", "--init", "mine",
                 "--seeds", "128", "--epochs", "500"]
    environment = checkout_environment(tmp_path)
    alone = subprocess.run([*arguments, "--json", "alone.json"], capture_output=True,
                           text=True, env=environment, timeout=300, cwd=tmp_path)
    clustered = subprocess.run([*arguments, "--json", "cluster.json", "--workers", "2",
                                "--progress"], capture_output=True, text=True,
                               env=environment, timeout=300, cwd=tmp_path)
    assert alone.returncode == 0 and clustered.returncode == 0, clustered.stderr
    assert clustered.stdout == alone.stdout
    assert "2-2-2-1: 2 of 2 blocks of up to 64 seeds done" in clustered.stderr

    def results(name: str) -> list:
        return [{k: v for k, v in r.items() if k != "seconds"}
                for r in json.loads((tmp_path / name).read_text())["results"]]
    assert results("cluster.json") == results("alone.json")


@pytest.mark.parametrize("stop, status, word", [
    (signal.SIGINT, 130, "interrupted"),                        # Ctrl-C
    (getattr(signal, "SIGHUP", None), 129, "terminated"),       # the terminal closed
], ids=["ctrl-c", "hang-up"])
def test_ctrl_c_or_a_hang_up_during_a_local_cluster_run_is_one_line(tmp_path, stop, status,
                                                                    word):
    """SIGINT or SIGHUP to the whole process group, as a terminal sends them (Ctrl-C, closed),
    while the workers train: the CLI closes its cluster and says what it wrote; no worker, nor
    multiprocessing's resource tracker, prints a traceback."""
    run = subprocess.Popen([sys.executable, "-m", "tinynet.xor", "--seeds", "256", "--epochs",
                            # any length stops at Ctrl-C; 2,000,000 epochs ended in 9 s, before
                            # the first progress line (every 10 s), on a fast machine
                            str(10**12), "--workers", "2", "--block-seeds", "64", "--progress",
                            "--json", str(tmp_path / "out.json")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True, env=checkout_environment(),
                           # the signals' defaults: a suite started in the background by a
                           # shell inherits them ignored, and the CLI would keep them so
                           preexec_fn=default_stop_signals)
    deadline = time.monotonic() + 120
    while not re.search(r"[0-3] of 4 blocks", line := run.stderr.readline()):  # training
        assert line and time.monotonic() < deadline, "no progress line while training"
    os.killpg(run.pid, stop)
    out, err = run.communicate(timeout=120)
    assert run.returncode == status
    assert "Traceback" not in err and "resource_tracker" not in err, err
    assert err.strip().endswith(f"{word}: nothing was written")
    assert not (tmp_path / "out.json").exists()


@pytest.fixture
def lone_cluster():
    """A local cluster of its own (one worker), for tests that spoil its worker."""
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client


def cli_error(arguments: list[str], capsys) -> str:
    """The one line the CLI ends with, status 2, for ``arguments`` (a tiny study). How soon
    is the tests' monkeypatched WORKERS_TIMEOUT's business, not a wall-clock assert."""
    with pytest.raises(SystemExit) as exit:
        main(["--seeds", "64", "--epochs", "10", *arguments])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_a_scheduler_without_workers_ends_with_one_line(capsys, monkeypatch):
    monkeypatch.setattr("tinynet.xor.cluster.WORKERS_TIMEOUT", 2.0)
    with LocalCluster(n_workers=0, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        err = cli_error(["--scheduler", cluster.scheduler_address], capsys)
    assert f"--scheduler {cluster.scheduler_address}: no worker joined within 2 s" in err


def test_a_worker_without_tinynet_is_named_and_refused(lone_cluster, capsys):
    def forget_tinynet() -> None:  # the worker's imports of tinynet now fail, as uninstalled
        import sys
        for name in [name for name in sys.modules if name.split(".")[0] == "tinynet"]:
            sys.modules[name] = None
        sys.modules["tinynet"] = None

    lone_cluster.run(forget_tinynet)
    (worker,) = lone_cluster.scheduler_info()["workers"]
    err = cli_error(["--scheduler", lone_cluster.scheduler.address], capsys)
    assert (f"1 of 1 workers cannot train as this process would: {worker} cannot run tinynet "
            "(ModuleNotFoundError") in err


def test_a_worker_with_edited_tinynet_code_is_refused(lone_cluster, capsys):
    """A version string would not tell an edited copy from this one; the code's hash does."""
    lone_cluster.run(lambda: setattr(__import__("tinynet.xor.blocks", fromlist=["_"]),
                                     "_package_hash", lambda: "edited"))
    (worker,) = lone_cluster.scheduler_info()["workers"]
    err = cli_error(["--scheduler", lone_cluster.scheduler.address], capsys)
    assert f"{worker} runs other code of tinynet; give every worker this tinynet" in err


OTHER_CODE = "0123456789abcdef"
"""The tinynet code hash a spoiled worker claims: another copy of tinynet than this one."""


def spoil_code_hash(client) -> None:
    """Make every worker of ``client`` report :data:`OTHER_CODE` as its tinynet code hash from
    now on, as a worker with another copy of tinynet would: the start-up check is past."""
    client.run(lambda: setattr(__import__("tinynet.xor.blocks", fromlist=["_"]),
                               "_package_hash", lambda: OTHER_CODE))


def test_a_block_trained_with_other_code_stops_the_study_naming_worker_and_hashes(
        lone_cluster):
    """A worker that joins after the start-up check with another tinynet: its block's own
    hash gives it away, and the study stops instead of mixing its results in."""
    from tinynet.xor.blocks import _package_hash
    spoil_code_hash(lone_cluster)
    (worker,) = lone_cluster.scheduler_info()["workers"]
    with pytest.raises(BlockError) as error:
        run_study([Arm("normal")], Setup(seeds=64, epochs=10), progress=False,
                  executor=lone_cluster, block_seeds=64)
    assert str(error.value) == (
        f"arm 'normal', seeds 0-63: worker {worker} ran other tinynet code (hash "
        f"{OTHER_CODE[:12]}) than this process (hash {_package_hash()[:12]}); give every "
        "worker this tinynet")


def test_the_cli_checks_every_block_not_only_the_workers_at_the_start(lone_cluster, capsys,
                                                                      monkeypatch):
    """The workers pass the start-up check, then (as a late worker with other code would)
    train with another tinynet: the CLI ends with status 1 and one line, and prints no
    table."""
    from tinynet.xor import cluster
    checked = cluster.check_workers

    def check_then_spoil(parser, client, *args) -> None:
        checked(parser, client, *args)
        spoil_code_hash(client)

    monkeypatch.setattr(cluster, "check_workers", check_then_spoil)
    (worker,) = lone_cluster.scheduler_info()["workers"]
    with pytest.raises(SystemExit) as exit:
        main(["--seeds", "64", "--epochs", "10", "--scheduler", lone_cluster.scheduler.address])
    assert exit.value.code == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert f"worker {worker} ran other tinynet code (hash {OTHER_CODE[:12]})" in err


def test_an_import_module_edited_since_the_workers_imported_it_is_sent_again(lone_cluster,
                                                                            tmp_path, capsys,
                                                                            monkeypatch,
                                                                            restore_registry):
    """The cluster lives on; the user edits the --import module: the workers run the new
    source (its initializer registered over the old one), and the study is the in-process
    one with the edited module, not the old one's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "mine_edited.py"
    module.write_text("import tinynet\n\n\n@tinynet.init.register('mine_edited')\n"
                      "def mine_edited(shape, rng):\n    return rng.normal(0, 0.7, size=shape)\n")
    tiny = ["--seeds", "64", "--epochs", "300", "--import", "mine_edited", "--init",
            "mine_edited"]

    def run(*cluster: str) -> str:
        main([*tiny, *cluster])
        return capsys.readouterr().out

    def forget() -> None:  # as a new Python would start: the module not imported yet
        monkeypatch.delitem(sys.modules, "mine_edited")
        tinynet.init.registry._REGISTRY.pop("mine_edited")

    cluster = ["--scheduler", lone_cluster.scheduler.address]
    old = run(*cluster)
    forget()
    module.write_text(module.read_text().replace("0.7", "3.25"))  # another size: no stale .pyc
    new_here = run()
    forget()
    new_there = run(*cluster)
    assert new_there == new_here != old


def test_without_dask_the_cluster_flags_say_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails
    with pytest.raises(SystemExit) as exit:
        main(["--seeds", "64", "--workers", "2"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and DASK_MISSING in err


@pytest.mark.parametrize("arguments,message", [
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "cannot be combined"),
    (["--workers", "0"], f"--workers must be from 1 to {os.cpu_count()} (this machine's cores"),
    (["--block-seeds", "64"], "give --workers or --scheduler"),
    (["--workers", "2", "--block-seeds", "0"], "--block-seeds must be an integer >= 64, got 0"),
    (["--workers", "2", "--block-seeds", "100"], "--block-seeds must be a multiple of 64"),
    (["--scheduler", "tcp://127.0.0.1:1"], "cannot reach it"),
])
def test_bad_cluster_flags_are_one_line(arguments, message, capsys, monkeypatch):
    monkeypatch.setattr("tinynet.xor.cluster.CONNECT_TIMEOUT", "1s")
    with pytest.raises(SystemExit) as exit:
        main(["--seeds", "64", "--epochs", "10", *arguments])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
