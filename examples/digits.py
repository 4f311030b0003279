"""How often, and how well, does a network learn handwritten digits, per initializer? Test
accuracy over many seeds, with intervals.

    python examples/digits.py --init he_normal --seeds 100
    python examples/digits.py --data mnist1d --init "normal(std=0.01),xavier_normal,he_normal"
    python examples/digits.py --help

Each seed's network (softmax output, cross-entropy, minibatch SGD with shuffled epochs) is
trained side by side with the others on the compiled backend (tinynet.fit_ensemble), then
scored on the data set's fixed test split; tinynet.accuracy summarises and compares the arms.
The data sets come with the extra tinynet[data] (tinynet.data.digits, tinynet.data.mnist1d).
"""

import argparse
import re
import time

import numpy as np

import tinynet
from tinynet import accuracy


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=sorted(tinynet.data.CLASSIFICATION), default="digits")
    parser.add_argument("--init", default="he_normal",
                        help="initializers to compare, comma-separated (default he_normal)")
    parser.add_argument("--seeds", type=int, default=100, help="seeds per initializer")
    parser.add_argument("--hidden", default="100",
                        help="hidden layer widths, comma-separated (default 100)")
    parser.add_argument("--activation", default="relu", help="hidden activation (relu)")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--optimizer", default="sgd")
    return parser.parse_args()


def main() -> None:
    args = arguments()
    split = tinynet.data.CLASSIFICATION[args.data]()
    sizes = [split.X.shape[1], *(int(w) for w in args.hidden.split(",")), split.classes]
    print(f"{split!r}; {'-'.join(map(str, sizes))} networks, {args.activation} hidden layers, "
          f"softmax output, cross-entropy, {args.optimizer} at lr {args.lr}, minibatches of "
          f"{args.batch_size}, {args.epochs} epochs, {args.seeds} seeds per initializer")
    summaries, scores = [], []
    for init in re.split(r",(?![^(]*\))", args.init):  # not at a comma inside (...)
        networks = [tinynet.mlp(sizes, activation=args.activation, output="softmax", init=init,
                                seed=seed) for seed in range(args.seeds)]
        start = time.perf_counter()
        tinynet.fit_ensemble(networks, split.X, split.y, epochs=args.epochs, lr=args.lr,
                             batch_size=args.batch_size, loss="cross_entropy",
                             optimizer=args.optimizer)
        seconds = time.perf_counter() - start
        scores.append(accuracy.held_out_accuracies(networks, split.X_test, split.y_test))
        summaries.append(accuracy.summarise(init, scores[-1], split.classes, seconds))
    print(accuracy.report(summaries, accuracy.compare_all(summaries, scores)))


if __name__ == "__main__":
    np.seterr(all="ignore")  # a diverged seed is an outcome (its accuracy), not a warning
    main()
