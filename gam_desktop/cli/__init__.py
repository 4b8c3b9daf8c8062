"""Command-line entry points: `gam-add`, `gam-request`, `gam-chat`, `gam-facts`,
`gam-history`, `gam-rollback`, `gam-research`.

Wires the engine and nothing else: settings from flags and the environment, a tqdm
progress bar, a one-line reason and a non-zero exit code on failure.
"""

from gam_desktop.cli.add import add_main
from gam_desktop.cli.ask import chat_main, request_main
from gam_desktop.cli.common import EX_SOFTWARE
from gam_desktop.cli.facts import facts_main
from gam_desktop.cli.history import history_main, rollback_main
from gam_desktop.cli.research import research_main

__all__ = [
    "EX_SOFTWARE",
    "add_main",
    "chat_main",
    "facts_main",
    "history_main",
    "request_main",
    "research_main",
    "rollback_main",
]
