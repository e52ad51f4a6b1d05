"""The checks of the reproductions, one module per paper group: each reads an experiment's runs
and grades the paper's claims by :mod:`incastlab.reproductions.findings`, with the tables and
figures of its verdict. :mod:`incastlab.reproductions.reproduce` names which experiment uses
which (``CHECKS`` for sweeps, ``RUNNERS`` for the job model's experiments)."""
