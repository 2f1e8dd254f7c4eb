"""``python -m exo_hl ...`` is the ``exo-hl`` command line."""
import sys

from .cli import main

sys.exit(main())
