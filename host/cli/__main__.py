"""``python -m lutzip.cli``: the same as the ``lutzip`` command."""
import sys

from lutzip.cli import main

sys.exit(main())
