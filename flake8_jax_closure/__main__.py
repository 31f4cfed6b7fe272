"""``python -m flake8_jax_closure``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
