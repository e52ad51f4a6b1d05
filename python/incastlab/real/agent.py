"""What runs inside an emulation namespace: the Rust block server, or the Rust client printing
its raw JSON result. Nothing else is imported (no CLI, no scenario parsing, no rich), so each
of the N servers of a testbed starts in the time the extension module takes to load.

    python -m incastlab.real.agent serve HOST:PORT CC
    python -m incastlab.real.agent bench CONFIG_JSON      # see incastlab.real.bench.config

Lines a server writes to stderr start with ``incast serve:`` so that the emulation can quote
them when the client fails.
"""

from __future__ import annotations

import sys

from incastlab import _core
from incastlab.real.signals import sigterm_as_interrupt

#: The server's limits, as `incast serve` has them by default.
MAX_REQUEST = 64 * 2**20
MAX_CONNS = 1024
IDLE_TIMEOUT_S = 60.0


def serve(listen: str, congestion: str) -> int:
    """Serve until SIGTERM; print ``listening on ADDR`` once bound."""
    sigterm_as_interrupt()

    def ready(addr: str) -> None:
        # Flushed at once: the emulation waits for this line before starting the client.
        print(f"listening on {addr}", flush=True)

    try:
        _core.serve(listen, MAX_REQUEST, MAX_CONNS, IDLE_TIMEOUT_S, True, None, congestion, ready)
    except (ValueError, RuntimeError) as e:
        print(f"incast serve: {e}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def bench(config_json: str) -> int:
    """Run the client once and print its raw JSON result on stdout."""
    try:
        print(_core.bench(config_json))
    except (ValueError, RuntimeError) as e:
        print(f"incast bench: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "serve":
        return serve(argv[1], argv[2])
    if len(argv) == 2 and argv[0] == "bench":
        return bench(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
