"""Puts gates-py on sys.path so the tests import the `gates` package exactly as `python -m gates`
(run with cwd gates-py) does, whatever directory pytest is started from."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
