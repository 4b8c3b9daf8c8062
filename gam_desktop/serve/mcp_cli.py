"""`gam-mcp --gam-dir DIR`: the memory as an MCP server, over stdio (what desktop clients
start) or streamable HTTP (`--http`, behind the same bearer token as gam-serve)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
from starlette.types import ASGIApp

from gam_desktop.cli.common import entry_point, reason, settings_for, whole
from gam_desktop.engine.api import MemoryFolder
from gam_desktop.serve.auth import (
    DEFAULT_PORT,
    MAX_BODY,
    TOKEN_ENV,
    Guard,
    is_loopback,
    resolve_token,
)
from gam_desktop.serve.cli import embedding_settings, tell_token, upstream_settings
from gam_desktop.serve.connections import serve
from gam_desktop.serve.mcp_server import MemoryServer

MCP_PORT = DEFAULT_PORT + 1
MCP_PATH = "/mcp"


def mcp_parser(prog: str = "gam-mcp") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve a GAM memory to MCP clients: tools search, read, list, ask (and "
        "remember with --allow-remember), resources for the root README and the folder tree.",
    )
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    parser.add_argument(
        "--allow-remember",
        action="store_true",
        help="let clients add text to the memory (read-only without it)",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help=f"streamable HTTP at http://HOST:PORT{MCP_PATH} instead of stdio",
    )
    parser.add_argument("--host", default="127.0.0.1", help="with --http: address (loopback)")
    parser.add_argument("--port", type=whole(0, 65535), default=MCP_PORT)
    parser.add_argument(
        "--token",
        help=f"with --http: the bearer token (default: ${TOKEN_ENV}, "
        "else the one kept in the OS keychain)",
    )
    parser.add_argument("--model", help="the LLM for ask and remember (default: $OPENAI_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint ($OPENAI_BASE_URL)")
    parser.add_argument("--timeout", type=float, help="seconds per LLM call (default 120)")
    return parser


@entry_point("gam-mcp")
def mcp_main(argv: Sequence[str] | None = None, prog: str = "gam-mcp") -> int:
    """`prog`: the command as the user typed it (`gam-desktop mcp` in the packaged app)."""
    args = mcp_parser(prog).parse_args(argv)
    root = Path(args.gam_dir)
    if not MemoryFolder(root).is_memory():
        print(f"{prog}: {root} is not a GAM memory (no .gam_meta.json)", file=sys.stderr)
        return 2
    try:
        llm = argparse.Namespace(
            model=args.model, base_url=args.base_url, workers=None, timeout=args.timeout
        )
        settings = upstream_settings(settings_for("chat", llm))
        embeddings = embedding_settings(settings)
    except ValueError as exc:
        print(f"{prog}: invalid setting: {reason(exc)}", file=sys.stderr)
        return 2
    server = MemoryServer(root, settings, allow_remember=args.allow_remember, embeddings=embeddings)
    if not args.http:  # stdout is the protocol's: everything else goes to stderr
        anyio.run(server.mcp.run_stdio_async)
        return 0
    token = resolve_token(args.token)
    tell_token(prog, token)
    app = http_app(server, token.value, args.host)
    print(f"{prog}: {root} at http://{args.host}:{args.port}{MCP_PATH}", file=sys.stderr)
    serve(app, args.host, args.port)
    return 0


def http_app(server: MemoryServer, token: str, host: str = "127.0.0.1") -> ASGIApp:
    """MCP's streamable HTTP app behind the token, size and Host checks (the token kept out
    of the server's answers too)."""
    server.keep_secret(token)
    app = server.mcp.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return Guard(app, token, max_body=MAX_BODY, loopback_only=is_loopback(host), open_paths=())
