"""Run the command line: ``python -m ctx_reference sim`` (see ``ctx_reference.cli``)."""

import sys

from ctx_reference.cli import main

sys.exit(main())
