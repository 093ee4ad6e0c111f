"""`python -m code_compass_server` is the same program as `code-compass`."""

import sys

from code_compass_server.cli import main

if __name__ == "__main__":  # guarded: parse workers are spawned and re-import __main__
    sys.exit(main())
