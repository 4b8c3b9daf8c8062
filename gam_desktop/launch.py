"""`gam-desktop` as one executable for three programs: the app, or, when the first argument
is `mcp` or `serve`, the memory's MCP server (gam-mcp) or its OpenAI-compatible endpoint
(gam-serve), with the same options as those commands.

The packaged app (PyInstaller) has only this executable, and a desktop MCP client (Claude
Desktop, Cursor) starts a command and speaks JSON-RPC over its stdin and stdout. So the
choice is made before anything imports Qt, and nothing but the protocol reaches stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command, rest = (args[0], args[1:]) if args else ("", [])
    if command in ("mcp", "serve"):
        if sys.stderr is None:  # a windowed app started without one: print(file=None),
            # as in `print(..., file=sys.stderr)`, would write into the protocol's stdout
            sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the run)
        prog = f"gam-desktop {command}"  # in --help and messages: the command typed
        if command == "mcp":
            from gam_desktop.serve.mcp_cli import mcp_main

            return mcp_main(rest, prog=prog)
        from gam_desktop.serve.cli import serve_main

        return serve_main(rest, prog=prog)
    from gam_desktop.gui.app import main as app_main

    return app_main(args)
