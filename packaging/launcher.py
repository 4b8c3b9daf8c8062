"""Entry point of the frozen app (PyInstaller): the same main() as `gam-desktop`."""

import multiprocessing
import sys

from gam_desktop.gui.app import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
