"""`python -m code_compass` is the same program as `code-compass`."""

import sys

from code_compass.cli import main

sys.exit(main())
