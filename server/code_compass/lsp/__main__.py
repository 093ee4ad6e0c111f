"""`python -m code_compass.lsp` runs the language server over stdio."""

import sys

from code_compass.lsp.server import main

sys.exit(main())
