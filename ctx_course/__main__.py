"""Command line of the course operations: ``python -m ctx_course release|workspace|lab|grade``."""
from .cli import main

raise SystemExit(main())
