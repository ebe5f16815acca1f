"""Regenerate the bank (``--check`` only compares): the maintainer's command, run as a module."""
import sys

from ..drawing.write_bank import main

sys.exit(main())
