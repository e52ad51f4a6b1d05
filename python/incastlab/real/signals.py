"""Signal handling shared by the real-TCP processes and the commands that run them."""

from __future__ import annotations

import signal


def sigterm_as_interrupt() -> None:
    """Let SIGTERM stop a run the way Ctrl-C does (through KeyboardInterrupt), so that the
    ``finally`` blocks that remove testbeds and close sockets run."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)
