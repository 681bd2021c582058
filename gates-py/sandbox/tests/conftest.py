import sys
from pathlib import Path

# The sandbox modules are scripts run from their own directory (/sandbox inside bwrap), not a package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
