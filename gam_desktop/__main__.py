"""`python -m gam_desktop` opens the desktop app; `python -m gam_desktop mcp|serve …` runs
gam-mcp or gam-serve (gam_desktop/launch.py)."""

import sys

from gam_desktop.launch import main

sys.exit(main())
