"""The papers' experiments, reproduced in one command (``incast reproduce``).

- :mod:`~incastlab.reproductions.reproduce`: the experiment folders (``experiments/``: sweep
  specs and the paper's numbers), running them, and the verdict each writes;
- :mod:`~incastlab.reproductions.checks`: one module per paper group, grading the paper's
  claims against the stored runs;
- :mod:`~incastlab.reproductions.findings`: the one grading rule (agrees, shape only,
  disagrees) and the helpers the checks share;
- :mod:`~incastlab.reproductions.papers`: the papers the experiments cite, in full.

The user's own tools (``incast mitigate``, ``incast compare``) live in :mod:`incastlab.studies`.
"""
