"""``python -m brainfs.front.cli``: the ``brainfs`` command (what a mount spawns its daemon with)."""

import sys

from . import main

sys.exit(main())
