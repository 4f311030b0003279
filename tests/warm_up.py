"""Compile, in a process of its own, the kernels that the fast suite's later tests train on, so
that the suite's first compile of each runs on the second core while the tests run on the
first (tests/conftest.py starts it with the run and stops it at the end).

Numba caches what it compiles on disk, in the folder the tests use, and a test that needs a
kernel loads it from there; a test that gets to a kernel first compiles it itself, as it
would without this process, so a warm-up that is slow or fails changes no result, only how
long the run takes. The kernels are the generic ones, as the tests outside ``unrolled`` use
them (``codegen.MAX_UNROLLED_WORK = -1``): one per set of activations, loss and optimizer,
whatever the layout.
"""

from tinynet.compiled import codegen
from tinynet.xor import Arm, Setup, run_study

ARMS = [  # the tests that first train each, late in the run: test_fixes, test_optimizers
    Arm("normal", loss="bce"),
    Arm("normal", optimizer="adam"),
    Arm("normal", optimizer="momentum(momentum=0.5)"),
]


def main() -> None:
    codegen.MAX_UNROLLED_WORK = -1
    for arm in ARMS:
        run_study([arm], Setup(seeds=2, epochs=2))


if __name__ == "__main__":
    main()
