"""``python -m tinynet.xor``: the XOR bench from a shell (see :mod:`tinynet.xor.cli`)."""

from .cli import command

if __name__ == "__main__":
    command(prog="python -m tinynet.xor")
