"""The validation room: the simulator refereed by this machine's real Linux TCP.

Three studies, each an ``incast validate`` subcommand, each keeping its kernel runs under
``docs/validation`` so that a rerun with ``--skip-real`` re-simulates them without root:

- the validation grid (``incast validate``): synchronized reads on 100 Mbps, N = 1 … 32,
  two ports, two RTOmins, CUBIC and BBR (:mod:`.grid`, :mod:`.runs`, :mod:`.sim`,
  :mod:`.table`, :mod:`.report`, :mod:`.figure`);
- the key-value store's incast (``incast validate kv``, :mod:`.kv`, :mod:`.kv_report`);
- the MapReduce shuffle's RTOmin cost (``incast validate shuffle``, :mod:`.shuffle`,
  :mod:`.shuffle_report`).

What the simulator is told about the testbed is the testbed's own description
(:mod:`incastlab.real.testbed.simulator`); the TCP a profile stands for is the engine's.
"""
