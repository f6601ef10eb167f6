"""`python -m judgecam` runs the same command line as the `judgecam` console script."""

import sys

from judgecam.cli import main

sys.exit(main())
