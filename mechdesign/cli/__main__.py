"""``python -m mechdesign.cli``: the command line."""

import sys

from mechdesign.cli import main

sys.exit(main())
