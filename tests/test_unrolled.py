"""Kernels generated per layout (tinynet.compiled.unrolled) against the generic kernels: the
same training, bit for bit, for every activation, depths 1 to 4, every optimizer, both update
orders, shuffling on and off, divergence, and a fit resumed in chunks; one kernel for every
seed and sample count; the cache of sources; and vector code with no call to exp."""

import multiprocessing
import os
import re
from pathlib import Path

import numpy as np
import pytest

import tinynet
from tinynet.compiled import codegen, fused, kit, sources, unrolled
from tinynet.compiled.kit import maths_of
from tinynet.compiled.simd import LANES
from tinynet.losses import MSE
from tinynet.packing import draw, layout

from helpers import COMPILE_NOTICES
from test_backends import same_parameters

pytestmark = [pytest.mark.unrolled, pytest.mark.slow]

CASES = [  # sizes, hidden, output, optimizer, samples, update, shuffle, lr
    ([2, 2, 1], "leaky_relu", "sigmoid", "sgd", 4, "after_backward", True, 0.5),  # 99mlp's family
    ([3, 2], "relu", "tanh", "momentum", 5, "during_backward", True, 0.2),       # depth 1
    ([3, 3, 2], "relu", "identity", "adam", 7, "after_backward", False, 0.05),   # depth 2
    ([2, 3, 3, 1], "tanh", "sigmoid", "sgd", 5, "during_backward", True, 0.3),   # depth 3
    ([2, 2, 2, 2, 1], "sigmoid", "relu", "adam", 6, "during_backward", True, 0.3),  # depth 4
    ([3, 2, 2], "identity", "leaky_relu", "momentum", 6, "after_backward", True, 0.01),
    ([2, 3, 1], "identity", "identity", "sgd", 5, "after_backward", True, 3.0),  # diverges
    ([2, 3, 1], "identity", "identity", "momentum", 5, "after_backward", True, 1.0),  # too
]


def same_history(a, b):
    """Every field of two Histories equal, bit for bit, NaN equal to NaN (a diverged run)."""
    np.testing.assert_array_equal(a.loss, b.loss)
    np.testing.assert_array_equal([a.final_loss, a.diverged_epoch, a.last_wrong_epoch, a.epochs,
                                   a.record_every, a.threshold],
                                  [b.final_loss, b.diverged_epoch, b.last_wrong_epoch, b.epochs,
                                   b.record_every, b.threshold])


def networks(sizes, hidden, output, seeds):
    return [tinynet.mlp(sizes, activation=hidden, output=output, init="lecun_normal", alpha=0.2,
                        seed=seed) for seed in seeds]


def data(case, sizes, samples):
    rng = np.random.default_rng(case)
    return rng.normal(size=(samples, sizes[0])), rng.uniform(0, 1, size=(samples, sizes[-1]))


def train(monkeypatch, generated, call):
    """``call()`` with the generated kernels allowed (``generated``) or not."""
    with monkeypatch.context() as patch:
        if not generated:
            patch.setattr(codegen, "MAX_UNROLLED_WORK", -1)
        return call()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_generated_kernels_train_as_the_generic_ones(case, monkeypatch):
    sizes, hidden, output, optimizer, samples, update, shuffle, lr = CASES[case]
    X, y = data(case, sizes, samples)
    assert codegen.supports(layout(networks(sizes, hidden, output, [0])[0]), 1)
    settings = dict(epochs=30, lr=lr, optimizer=optimizer, shuffle=shuffle, update=update,
                    record_every=3, threshold=0.5)
    seeds = range(60)  # two blocks of 56 lanes, the second with 52 idle
    ensembles, singles = {}, {}
    for generated in (True, False):
        nets = networks(sizes, hidden, output, seeds)
        result = train(monkeypatch, generated,
                       lambda: tinynet.fit_ensemble(nets, X, y, **settings))
        ensembles[generated] = nets, result
        net = networks(sizes, hidden, output, [3])[0]  # one lane; resumed every 7 epochs
        history = train(monkeypatch, generated,
                        lambda: net.fit(X, y, print_every=7, **settings))
        singles[generated] = net, history
    (nets_a, a), (nets_b, b) = ensembles[True], ensembles[False]
    for k in range(len(seeds)):
        same_history(a[k], b[k])
        same_parameters(nets_a[k], nets_b[k])
        if optimizer != "sgd":
            np.testing.assert_array_equal(nets_a[k].optimizer_state.values,
                                          nets_b[k].optimizer_state.values)
    np.testing.assert_array_equal(a.predictions, b.predictions)
    same_history(singles[True][1], singles[False][1])
    same_parameters(singles[True][0], singles[False][0])
    same_history(a[3], singles[True][1])  # a lane of a block, one lane alone, in chunks
    same_parameters(nets_a[3], singles[True][0])
    assert a.diverged.any() == (lr >= 1.0)


def test_a_generated_single_fit_is_an_ensemble_member(monkeypatch, capsys):
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 2, 2, 1], seed=s) for s in range(5)]
    result = tinynet.fit_ensemble(nets, X, y, epochs=200, lr=0.1, record_every=1)
    alone = tinynet.mlp([2, 2, 2, 1], seed=2)
    same_history(result[2], alone.fit(X, y, epochs=200, lr=0.1))
    same_parameters(nets[2], alone)


@pytest.mark.parametrize("samples,epochs,chunk", [(4, 150, 50), (40, 5, 2)])
def test_a_generated_fit_draws_its_orders_in_blocks_of_epochs(samples, epochs, chunk,
                                                              monkeypatch):
    """The fused kernel draws 64 epochs' orders at once for up to 32 samples (one epoch at a
    time above): the same orders as the generic kernel's, across blocks and resumed chunks."""
    X, y = data(samples, [2, 2, 1], samples)
    fits = {}
    for generated in (True, False):
        net = networks([2, 2, 1], "leaky_relu", "sigmoid", [4])[0]
        fits[generated] = net, train(monkeypatch, generated, lambda: net.fit(
            X, y, epochs=epochs, lr=0.3, print_every=chunk, record_every=1))
    same_history(fits[True][1], fits[False][1])
    same_parameters(fits[True][0], fits[False][0])


def test_one_kernel_for_every_seed_count_sample_count_and_epoch_count(tmp_path, monkeypatch,
                                                                       capsys):
    """The kernels are keyed by the maths: 100, 64 and 7 seeds, 4 and 200 samples, any epochs
    and learning rate train on the kernel compiled for the first run (one notice, one file per
    kernel), and still as the generic kernels train them."""
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path))
    unrolled._kernel.cache_clear()
    fused._kernel.cache_clear()
    rng = np.random.default_rng(0)
    many_X, many_y = rng.normal(size=(200, 2)), (rng.random((200, 1)) > 0.5).astype(float)
    X, y = tinynet.data.xor()
    runs = [(100, X, y, 5, 0.1), (64, X, y, 3, 0.3), (7, many_X, many_y, 2, 0.05),
            (7, X, y, 4, 0.2), (100, many_X, many_y, 1, 0.01)]
    for seeds, data_X, data_y, epochs, lr in runs:
        nets = [tinynet.mlp([2, 3, 1], seed=s) for s in range(seeds)]
        tinynet.fit_ensemble(nets, data_X, data_y, epochs=epochs, lr=lr)
        tinynet.mlp([2, 3, 1], seed=seeds).fit(data_X, data_y, epochs=epochs, lr=lr)
    notices = [line for line in capsys.readouterr().err.splitlines()
               if line.startswith(COMPILE_NOTICES[0])]
    assert [line.split(",")[0] for line in notices] == [
        "tinynet: compiling the training of 2-3-1 networks",  # the ensemble's kernel
        "tinynet: compiling the training of one 2-3-1 network"], notices  # the single fit's
    assert len(list(tmp_path.glob("tinynet_kernel_*.py"))) == 2  # the ensemble's, the fit's
    nets = {generated: [tinynet.mlp([2, 3, 1], seed=s) for s in range(7)]
            for generated in (True, False)}
    for generated, members in nets.items():
        train(monkeypatch, generated, lambda: tinynet.fit_ensemble(members, many_X, many_y,
                                                                   epochs=2, lr=0.05))
    for a, b in zip(nets[True], nets[False]):
        same_parameters(a, b)


def test_supports_follows_the_work_of_a_step():
    small, big = tinynet.mlp([2, 16, 1]), tinynet.mlp([2, 16, 16, 1])
    assert codegen.step_work(layout(small), 1) == 3 * (2 * 16 + 16 * 1) == 144
    assert codegen.supports(layout(small), 1) and not codegen.supports(layout(small), 2)
    assert not codegen.supports(layout(big), 1)


def test_sources_are_written_once_and_named_by_their_text(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path))
    X, y = tinynet.data.xor()
    for _ in range(2):
        tinynet.fit_ensemble([tinynet.mlp([2, 2, 1], seed=s) for s in range(3)], X, y,
                             epochs=5, lr=0.1)
    files = sorted(tmp_path.glob("tinynet_kernel_*.py"))
    assert len(files) == 1
    text = files[0].read_text()
    net = tinynet.mlp([2, 2, 1])
    assert text == unrolled.source(layout(net), maths_of(net, MSE()), False, unrolled.LANES)
    assert "Do not edit" in text and "sizes [2, 2, 1]" in text


def test_the_default_kernel_is_vector_code_without_a_call_to_exp(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path))  # compiled here, so its assembly
    X, y = tinynet.data.xor()                                # is at hand
    tinynet.fit_ensemble([tinynet.mlp([2, 2, 2, 1], seed=s) for s in range(100)], X, y,
                         epochs=2, lr=0.01, shuffle=True)
    (kernel,) = [module.fit_block for name, module in sources._LOADED.items()
                 if module.__file__.startswith(str(tmp_path))]
    assembly = kernel.inspect_asm(kernel.signatures[0])
    assert re.search(r"vmulpd\s+%[yz]mm", assembly)  # packed float64 multiplies: SIMD lanes
    called = set(re.findall(r"movabsq\s+\$([A-Za-z_][\w.]*)", assembly))
    assert not {name for name in called if "exp" in name.lower()}, called


def test_a_bce_kernel_is_vector_code_without_a_call_to_log(tmp_path, monkeypatch):
    """BCE's two logs a sample are tinynet.compiled.scalars.vector_log: inlined and vectorised,
    no call into the C library's log, which would make the lanes' loop scalar (the kernel's
    log10 is numba's own, for integers to text)."""
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path))
    X, y = tinynet.data.xor()
    tinynet.fit_ensemble([tinynet.mlp([2, 2, 2, 1], seed=s) for s in range(100)], X, y,
                         epochs=2, lr=0.01, shuffle=True, loss="bce")
    (kernel,) = [module.fit_block for name, module in sources._LOADED.items()
                 if module.__file__.startswith(str(tmp_path))]
    assembly = kernel.inspect_asm(kernel.signatures[0])
    assert re.search(r"vmulpd\s+%[yz]mm", assembly)
    called = set(re.findall(r"movabsq\s+\$([A-Za-z_][\w.]*)", assembly))
    assert not called & {"log", "log1p"}, called


def longest_scalar_run(assembly: str) -> int:
    """The most scalar float64 instructions (``vmovsd``, ``vmulsd``, ``vaddsd``, ``vsubsd``) in
    a row in ``assembly``: a loop over the lanes that the compiler left scalar and unrolled."""
    longest = run = 0
    for line in assembly.splitlines():
        if not line.startswith("\t") or line.startswith("\t."):
            continue  # labels and directives
        run = run + 1 if re.match(r"\tv(mov|mul|add|sub)sd\s", line) else 0
        longest = max(longest, run)
    return longest


@pytest.fixture(scope="module")
def generic_kit(tmp_path_factory):
    """The kit that trained a 2-32-1 ensemble and a 2-32-1 fit on the generic kernels,
    compiled in a folder of its own, so that its assembly and LLVM IR are at hand."""
    folder = tmp_path_factory.mktemp("kernels")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TINYNET_KERNEL_DIR", str(folder))
        X, y = tinynet.data.xor()
        like = tinynet.mlp([2, 32, 1], seed=0)
        tinynet.fit_packed(like, draw(like, range(2)), X, y, seeds=range(2),
                           epochs=2, lr=0.01, shuffle=False)
        like.fit(X, y, epochs=2, lr=0.01, batch_size=2)
    (module,) = [module for module in sources._LOADED.values()
                 if module.__file__.startswith(str(folder))]
    return module


def test_the_generic_kernels_lane_loops_are_vector_code(generic_kit):
    """A lane loop whose trip count is the constant LANES and whose body is small is unrolled
    whole by LLVM before it vectorises, and then stays scalar where it loads from one array
    and stores to another (the backward pass's copy of dX into dA ran as 64 scalar load/store
    pairs per unit). The passes loop over ``theta.shape[1]`` lanes, so every loop is
    vectorised with a run-time overlap check, as a hand-written loop is."""
    for name in ("train_step_lanes", "forward_layer", "gradients_and_step",
                 "backward_input_then_step"):
        kernel = getattr(generic_kit, name)
        assembly = kernel.inspect_asm(kernel.signatures[0])
        assert re.search(r"vmulpd\s+.*%[yz]mm", assembly), name  # packed multiplies
        assert longest_scalar_run(assembly) < LANES, (name, longest_scalar_run(assembly))


def reference_counts(kernel) -> int:
    """The calls of Numba's NRT_incref and NRT_decref in the body of every compiled version
    of ``kernel`` (its LLVM IR, without the functions it calls, which the IR holds too)."""
    name, total, bodies = kernel.py_func.__name__, 0, 0
    for ir in kernel.inspect_llvm().values():
        for function in re.split(r"\n(?=define )", ir):
            head = re.match(r"define [^@]*@([^(]*)\(", function)
            symbol = head.group(1) if head else ""  # mangled: holds len(name) and name
            if (f"{len(name)}{name}B" in symbol and "cpython" not in symbol
                    and "cfunc" not in symbol):
                bodies += 1
                body = function.split("\n}\n", 1)[0]
                total += len(re.findall(r"call void @NRT_(?:incref|decref)", body))
    assert bodies, f"no body of {name} in its IR"
    return total


def test_the_functions_a_generic_step_calls_count_no_references(generic_kit):
    """Compiled with reference counts (looping.UNCOUNTED), the lanes' step functions counted
    their array arguments, about 100 atomic adds a step (1.3-1.5x the time at width 2), and
    the one-network step its views (twice the time of a 2-32-1 fit)."""
    counts = {name: reference_counts(getattr(generic_kit, name)) for name in
              ("train_step_lanes", "forward_lanes", "forward_layer", "loss_rows",
               "gradients_and_step", "backward_input_then_step", "train_step")}
    assert counts == dict.fromkeys(counts, 0), counts
    assert reference_counts(generic_kit.fit_network) > 0  # its owner counts: the test can see


def test_seed_counts_that_leave_a_block_part_empty(monkeypatch):
    """385 members: 7 blocks of 56 lanes, the last with 49 members and 7 lanes repeating the
    last member, which must not be copied back."""
    X, y = tinynet.data.xor()
    assert unrolled.LANES == 56
    runs = {}
    for generated in (True, False):
        nets = [tinynet.mlp([2, 2, 1], seed=s) for s in range(385)]
        runs[generated] = nets, train(monkeypatch, generated, lambda: tinynet.fit_ensemble(
            nets, X, y, epochs=3, lr=0.1, record_every=1))
    (nets_a, a), (nets_b, b) = runs[True], runs[False]
    np.testing.assert_array_equal(a.loss, b.loss)
    np.testing.assert_array_equal(a.predictions, b.predictions)
    for net_a, net_b in zip(nets_a, nets_b):
        same_parameters(net_a, net_b)


def test_each_layers_exps_run_in_a_loop_of_their_own():
    """Sigmoid hidden and output layers: every exp sits in a loop over the lanes that holds
    nothing but exps and loads and stores of the work buffer (the spill rows, and what the
    exps read: tinynet.compiled.unrolled), and the comment that says where they come from."""
    net = networks([2, 3, 1], "sigmoid", "sigmoid", [0])[0]
    text = unrolled.source(layout(net), maths_of(net, MSE()), False, 8)
    loops = re.split(r"\n\s*for l in range\(8\):\n", text)
    with_exp = [loop for loop in loops if "vector_exp(" in loop.split("\n\n")[0]]
    assert len(with_exp) >= 3  # the two layers of a step, and the trained outputs
    for loop in with_exp[:2]:
        body = [line.strip() for line in loop.split("\n") if line.startswith(" " * 16)
                and not line.strip().startswith("#")]            # a comment is no code
        assert body and all("vector_exp(" in line or re.fullmatch(
            r"\w+ = work\[\d+ \+ l\]|work\[\d+ \+ l\] = \w+", line) for line in body), body


def test_a_generated_source_names_the_sources_compiled_into_it():
    """Numba's cache checks a kernel's own file only: a change of tinynet.compiled must give
    the generated kernels new files (sources.fingerprint)."""
    net = tinynet.mlp([2, 2, 1])
    net_layout, maths = layout(net), maths_of(net, MSE())
    stamp = sources.fingerprint()
    assert re.fullmatch(r"[0-9a-f]{16}", stamp)
    assert stamp in unrolled.source(net_layout, maths, False, 8)
    assert stamp in fused.source(net_layout, maths, False)


def _ensemble_losses(seeds):
    X, y = tinynet.data.xor()
    return tinynet.fit_ensemble([tinynet.mlp([2, 2, 1], seed=s) for s in seeds], X, y,
                                epochs=20, lr=0.1).final_loss


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_process_trains_on_threads_of_its_own():
    """The blocks run on a thread pool started once per process; a forked child inherits the
    parent's pool object but not its threads, and must start its own, not wait forever."""
    seeds = range(100)  # 2 blocks on 2 cores: the pool is used
    expected = _ensemble_losses(seeds)  # the parent's pool exists from here on
    with multiprocessing.get_context("fork").Pool(1) as pool:
        np.testing.assert_array_equal(pool.apply_async(_ensemble_losses, (seeds,)).get(120),
                                      expected)


def test_the_step_uncut_trains_the_same(monkeypatch):
    """CUT_AT_EXPS=False (the benchmark's "exps not cut" row) writes each lane's step as one
    loop and must train exactly as the cut kernel does: the row compares equal work."""
    X, y = tinynet.data.xor()
    runs = []
    for cut in (True, False):
        monkeypatch.setattr(unrolled, "CUT_AT_EXPS", cut)
        nets = [tinynet.mlp([2, 2, 1], seed=s) for s in range(11)]
        runs.append((nets, tinynet.fit_ensemble(nets, X, y, epochs=30, lr=0.5)))
    net = runs[0][0][0]
    spill = unrolled.buffer_rows(layout(net), maths_of(net, MSE()))["spill"] * 8
    for cut, spilled in ((False, False), (True, True)):    # the spill rows, only when cut
        text = unrolled.source(layout(net), maths_of(net, MSE()), False, 8, cut=cut)
        offsets = [int(at) for at in re.findall(r"work\[(\d+) \+ l\]", text)]
        assert offsets and any(at >= spill for at in offsets) == spilled
    (nets_a, a), (nets_b, b) = runs
    np.testing.assert_array_equal(a.final_loss, b.final_loss)
    for net_a, net_b in zip(nets_a, nets_b):
        same_parameters(net_a, net_b)


def _tinynet_imports(root: Path, name: str) -> list[str]:
    """The tinynet modules (paths under ``root``) that the module ``name`` imports relatively."""
    package = list(Path(name).parent.parts)
    found = []
    for dots, module, names in re.findall(r"^from (\.+)([\w.]*) import ([\w, ]+)",
                                          (root / name).read_text(), re.MULTILINE):
        base = package[:len(package) - (len(dots) - 1)]
        targets = [module] if module else [n.strip() for n in names.split(",")]
        found += ["/".join(base + target.split(".")) + ".py" for target in targets]
    return found


def test_the_fingerprint_covers_every_tinynet_module_a_kernel_imports():
    """What a generated kernel imports from tinynet, and what those modules import from
    tinynet in turn, is what sources.fingerprint hashes (but for Python-only input checks)."""
    root = Path(tinynet.__file__).resolve().parent
    net = tinynet.mlp([2, 2, 1])
    maths = maths_of(net, MSE())
    headers = codegen.module_header("test", layout(net), maths, False, ["x"]) + \
        kit.source(maths)  # the generated kernels and the kit of the generic ones
    todo = []
    for module, names in re.findall(r"^from tinynet\.([\w.]+) import ([\w, ]+)", headers,
                                    re.MULTILINE):
        folder = module.replace(".", "/")
        todo += [f"{folder}/{name.strip()}.py" for name in names.split(",")] \
            if (root / folder).is_dir() else [f"{folder}.py"]
    found = set()
    while todo:
        name = todo.pop()
        if name not in found:
            found.add(name)
            todo += _tinynet_imports(root, name)
    # activations.py imports its input checks from validation.py, which no kernel compiles in
    assert found - {"validation.py"} == set(sources.COMPILED_IN)


def test_a_generated_kernel_serves_any_number_of_samples(tmp_path, monkeypatch):
    """The sample count is the arrays', not the kernel's: 4, 7 and 200 samples train on one
    ensemble kernel and one single-fit kernel; minibatches of any size and any short last
    batch on the generic kernels' one kit."""
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path))
    rng = np.random.default_rng(0)

    def kernels():
        return sorted(path.name for path in tmp_path.glob("tinynet_kernel_*.py"))

    for samples in (4, 7, 200):
        X, y = rng.normal(size=(samples, 2)), rng.uniform(size=(samples, 1))
        tinynet.fit_ensemble([tinynet.mlp([2, 2, 1], seed=s) for s in range(3)], X, y,
                             epochs=2, lr=0.1)
        tinynet.mlp([2, 2, 1]).fit(X, y, epochs=2, lr=0.1)
    assert len(kernels()) == 2
    for samples, batch_size in ((8, 4), (200, 4), (6, 4), (7, 2), (200, 64)):
        X, y = rng.normal(size=(samples, 2)), rng.uniform(size=(samples, 1))
        tinynet.mlp([2, 2, 1]).fit(X, y, epochs=2, lr=0.1, batch_size=batch_size)
    assert len(kernels()) == 3
