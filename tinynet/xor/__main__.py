"""``python -m tinynet.xor``: the XOR bench from a shell (see :mod:`tinynet.xor.cli`)."""

from .cli import main

if __name__ == "__main__":
    main(prog="python -m tinynet.xor")
