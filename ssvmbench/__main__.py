"""``python -m ssvmbench`` = the ``ssvmbench`` command."""

import sys

from ssvmbench.cli import main

sys.exit(main())
