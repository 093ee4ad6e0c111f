#!/usr/bin/env python3
"""Build the int8 ONNX embedding model (idempotent); see code_compass_server/embed/build.py."""

import sys

from code_compass_server.embed.build import main

if __name__ == "__main__":
    sys.exit(main())
