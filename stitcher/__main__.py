"""`python -m stitcher`."""

import sys

from stitcher.cli import main

sys.exit(main())
