"""The guard of one testbed: removes it if the emulating process dies without doing so.

    python -m incastlab.real.guard PID

The emulation starts it before building anything, with a pipe as its standard input that
only the emulation holds. The emulation writes ``done`` there once it has removed its
testbed itself (on success, error, Ctrl-C or SIGTERM). If the pipe ends without ``done``,
the emulation died (SIGKILL, a crash, the OOM killer): the guard kills what runs in the
testbed's namespaces and removes them and its links, within a second or two of the death.
The block servers need no guard: they are sockets of the emulating process and die with it.

It runs in a session of its own, so a Ctrl-C at the terminal (which the emulation handles)
does not reach it. If the guard itself is killed, the next run still removes the leftovers.
"""

from __future__ import annotations

import signal
import sys

from incastlab.real.netns import remove_testbed

DONE = b"done"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    # The emulation's own SIGTERM handling removes its testbed; the guard outlives it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    told = sys.stdin.buffer.read()  # until the emulation closes the pipe or dies
    if DONE not in told:
        remove_testbed(int(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
