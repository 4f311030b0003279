"""``python -m tinynet.playground`` (or ``tinynet-playground``): start the playground's server,
print its address, open it in the browser, and stop at Ctrl-C (or SIGTERM, or SIGHUP: its
terminal closed; unless started with SIGHUP ignored, as ``nohup`` does, to outlive it)."""

from __future__ import annotations

import argparse
import ipaddress
import sys
import threading
import webbrowser

from ..data import CLASSIFICATION, DATASETS, Split, read_split
from ..xor.imports import import_user_modules
from ..xor.interrupts import stop_signals_as_interrupt
from .server import Playground

__all__ = ["main", "own_data"]


def main(argv: list[str] | None = None) -> int:
    """Serve the playground until Ctrl-C; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m tinynet.playground",
        description="A page that trains many seeds of two initializers side by side, on "
                    "tinynet's compiled kernels, and compares them.")
    parser.add_argument("--port", type=int, default=0,
                        help="the port to listen on (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default: 127.0.0.1, this machine "
                             "only); any other lets others on the network run studies here")
    parser.add_argument("--no-browser", action="store_true",
                        help="print the address without opening a browser")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        metavar="MODULE",
                        help="import MODULE first (a module name, or a .py file's path): the "
                             "initializers, activations, losses and optimizers it registers "
                             "are then in the page's menus, and its trainer imports it too; "
                             "repeatable")
    parser.add_argument("--data", action="append", default=[], metavar="FILE",
                        help="your own data set, a .npz (X, y, X_test, y_test) or .csv file "
                             "(feature columns, label, split: train or test), offered in the "
                             "page's data menu by the file's name and learned as the digits "
                             "are (a softmax output, loss cross_entropy); repeatable")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be from 0 to 65535, got {args.port}")
    try:
        import_user_modules(args.imports)
    except ValueError as error:  # one line, naming the --import argument
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    try:
        own = own_data(args.data)
    except (OSError, ValueError) as error:  # one line, naming the file
        print(f"{parser.prog}: error: --data: {error}", file=sys.stderr)
        return 2
    try:
        server = Playground(args.host, args.port, tuple(args.imports), own)
    except OSError as error:
        print(f"error: cannot listen on {args.host}:{args.port}: {error.strerror}",
              file=sys.stderr)
        return 1
    if not ipaddress.ip_address(server.server_address[0]).is_loopback:
        print(f"warning: serving on {args.host}: anyone who can reach this machine there can "
              "use the playground and run studies on it", file=sys.stderr)
    try:
        # SIGTERM (a service manager's stop) and SIGHUP (its terminal closed) as Ctrl-C; a
        # SIGHUP ignored at the start (nohup) stays ignored. The address is printed once they
        # are: a signal sent as soon as it appears stops the command as Ctrl-C does.
        with stop_signals_as_interrupt():
            print(f"tinynet playground at {server.url} (Ctrl-C stops it)", flush=True)
            if not args.no_browser:  # in a thread: a text browser would wait for the server
                threading.Thread(target=_open, args=(server.url,), daemon=True).start()
            server.serve_forever()
    except KeyboardInterrupt:
        print("\ntinynet playground stopped", flush=True)
    finally:
        server.server_close()
    return 0


def own_data(paths: list[str]) -> dict[str, Split]:
    """The data sets of the ``--data`` files, by their file names
    (:func:`tinynet.data.read_split`); raise ValueError for a name the data menu has already
    (a built-in data set's, or another file's)."""
    own: dict[str, Split] = {}
    for path in paths:
        split = read_split(path)
        if split.name in own or split.name in DATASETS or split.name in CLASSIFICATION:
            raise ValueError(f"{path!r}: the data menu has a data set named {split.name!r} "
                             "already; rename the file")
        own[split.name] = split
    return own


def _open(url: str) -> None:
    if not webbrowser.open(url):
        print("(no browser found here: open the address in one)", flush=True)
