import sys

from .launch import run

sys.exit(run())
