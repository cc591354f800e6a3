"""``python -m lance_ns.server --impl dir --prop root=/data --port 2333``."""

import sys

from .command import main

if __name__ == "__main__":
    sys.exit(main())
