"""How often does a tiny network learn XOR? Success rates over many seeds, per initializer.

    python examples/xor.py --init he_leaky --shuffle
    python examples/xor.py --init normal,he_leaky,xavier_normal --seeds 1000 --plot rates.png
    python examples/xor.py --preset notes          # the notes' four runs, side by side
    python examples/xor.py --preset widths         # where initialization starts to matter
    python examples/xor.py --help                  # every option

The same as ``python -m tinynet.xor``: the command lives in tinynet.xor.cli, the bench it runs
in tinynet.xor (studies, sweeps and presets, usable from Python).
"""

from tinynet.xor.cli import main, whole_process

if __name__ == "__main__":
    with whole_process():  # the command as the whole of a process: main, then run_study
        main()
