"""`python -m incastlab.cli`: the ``incast`` command."""

import sys

from incastlab.cli import main

sys.exit(main())
