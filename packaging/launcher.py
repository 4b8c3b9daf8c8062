"""Entry point of the frozen app (PyInstaller): the app, or `gam-desktop mcp|serve …` for
gam-mcp and gam-serve (the bundle's only executable; see gam_desktop/launch.py)."""

import multiprocessing
import sys

from gam_desktop.launch import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
