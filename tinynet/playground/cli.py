"""``python -m tinynet.playground`` (or ``tinynet-playground``): start the playground's server,
print its address, open it in the browser, and stop at Ctrl-C (or SIGTERM)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import webbrowser

from .server import LOOPBACK, Playground

__all__ = ["main"]


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
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be from 0 to 65535, got {args.port}")
    if args.host not in LOOPBACK:
        print(f"warning: serving on {args.host}: anyone who can reach this machine there can "
              "use the playground and run studies on it", file=sys.stderr)
    try:
        server = Playground(args.host, args.port)
    except OSError as error:
        print(f"error: cannot listen on {args.host}:{args.port}: {error.strerror}",
              file=sys.stderr)
        return 1
    print(f"tinynet playground at {server.url} (Ctrl-C stops it)", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop, as Ctrl-C
    try:
        if not args.no_browser:  # in a thread: a text browser would wait for the server
            threading.Thread(target=_open, args=(server.url,), daemon=True).start()
        server.serve_forever()
    except KeyboardInterrupt:
        print("\ntinynet playground stopped", flush=True)
    finally:
        server.server_close()
    return 0


def _open(url: str) -> None:
    if not webbrowser.open(url):
        print("(no browser found here: open the address in one)", flush=True)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
