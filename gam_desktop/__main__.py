"""`python -m gam_desktop` opens the desktop app."""

import sys

from gam_desktop.gui.app import main

sys.exit(main())
