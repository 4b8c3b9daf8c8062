"""`python -m gam_desktop.cli` is `gam-add`."""

import sys

from gam_desktop.cli.add import add_main

sys.exit(add_main())
