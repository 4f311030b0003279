"""``python -m tinynet.xor``: the XOR bench from a shell (see :mod:`tinynet.xor.cli`). The
module calls :func:`~tinynet.xor.cli.main` itself, so that the command line reaches the bench
in two calls: ``main``, then :func:`~tinynet.xor.run_study`."""

from .cli import main, whole_process

if __name__ == "__main__":
    with whole_process():
        main(prog="python -m tinynet.xor")
