"""`gam-serve --gam-dir DIR`: the memory as an OpenAI-compatible endpoint for other apps."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import SecretStr

from gam_desktop import appdirs, keystore
from gam_desktop.cli.common import entry_point, reason, recover_hint, settings_for, whole
from gam_desktop.engine.api import (
    EmbeddingChoice,
    EmbeddingSettings,
    LLMSettings,
    MemoryFolder,
    Workflow,
    same_server,
)
from gam_desktop.serve.app import ServeConfig, create_app
from gam_desktop.serve.auth import (
    DEFAULT_PORT,
    MAX_BODY,
    TOKEN_ENV,
    Token,
    is_loopback,
    resolve_token,
)
from gam_desktop.serve.connections import serve
from gam_desktop.serve.retrieval import ReadOptions


def serve_parser(prog: str = "gam-serve") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve a GAM memory as an OpenAI-compatible endpoint: each request gets "
        "the memory's relevant passages, goes to the configured LLM, and the turn is saved "
        "and learned from.",
    )
    parser.add_argument("--gam-dir", required=True, help="the memory folder")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    parser.add_argument("--port", type=whole(0, 65535), default=DEFAULT_PORT)
    parser.add_argument(
        "--token",
        help=f"the bearer token to require (default: ${TOKEN_ENV}, "
        "else one kept in the OS keychain)",
    )
    parser.add_argument(
        "--model", help="the upstream model (default: $CHAT_AGENT_MODEL or $OPENAI_MODEL)"
    )
    parser.add_argument("--base-url", help="the upstream endpoint (default: $OPENAI_BASE_URL)")
    parser.add_argument("--timeout", type=float, help="seconds per upstream call (default 120)")
    parser.add_argument(
        "--model-map",
        action="append",
        default=[],
        metavar="NAME=MODEL",
        help="serve the client's model NAME with the upstream MODEL "
        "(repeatable; 'gam' is always the configured model)",
    )
    parser.add_argument("--max-body", type=whole(1024), default=MAX_BODY, help="bytes")
    parser.add_argument("--top-k", type=whole(1, 50), default=5, help="passages per request")
    parser.add_argument(
        "--no-learn", action="store_true", help="do not save turns or learn facts from them"
    )
    return parser


@entry_point("gam-serve")
def serve_main(argv: Sequence[str] | None = None, prog: str = "gam-serve") -> int:
    """`prog`: the command as the user typed it (`gam-desktop serve` in the packaged app)."""
    args = serve_parser(prog).parse_args(argv)
    root = Path(args.gam_dir)
    if not MemoryFolder(root).is_memory():
        print(f"{prog}: {root} is not a GAM memory (no .gam_meta.json)", file=sys.stderr)
        return 2
    try:
        config = _config(args, root, prog)
    except ValueError as exc:
        print(f"{prog}: {reason(exc)}", file=sys.stderr)
        return 2
    if config.learn and Workflow(gam_dir=root, settings=config.settings).interrupted():
        # every turn would fail (logged only) until the half-done operation is recovered
        print(
            f"{prog}: warning: turns will not be saved: {recover_hint(args.gam_dir)}",
            file=sys.stderr,
        )
    app, _endpoint = create_app(config)
    if not config.loopback_only:
        print(
            f"{prog}: warning: listening on {args.host}, reachable from other machines",
            file=sys.stderr,
        )
    print(f"{prog}: {root} at http://{_shown(args.host)}:{args.port}/v1", file=sys.stderr)
    serve(app, args.host, args.port)
    return 0


def _config(args: argparse.Namespace, root: Path, prog: str) -> ServeConfig:
    settings = upstream_settings(settings_for("chat", _llm_args(args)))
    token = resolve_token(args.token)
    tell_token(prog, token)
    return ServeConfig(
        gam_dir=root,
        settings=settings,
        embeddings=embedding_settings(settings),
        token=token.value,
        model_map=dict(_pair(item) for item in args.model_map),
        max_body=args.max_body,
        loopback_only=is_loopback(args.host),
        read=ReadOptions(top_k=args.top_k),
        learn=not args.no_learn,
    )


def upstream_settings(settings: LLMSettings) -> LLMSettings:
    """The upstream's key: the environment's, else the one the app keeps in the keychain
    for that endpoint."""
    if settings.api_key is not None:
        return settings
    try:
        kept = keystore.get_key(settings.base_url)
    except keystore.KeychainUnavailable:
        kept = None
    return settings.model_copy(update={"api_key": SecretStr(kept)}) if kept else settings


def embedding_settings(
    chat: LLMSettings, env: Mapping[str, str] | None = None, choice: Path | None = None
) -> EmbeddingSettings:
    """Search by meaning as the app does it: what its Settings chose (`choice`, by default
    appdirs.embeddings_file()), the environment's GAM_EMBEDDING* variables on top. An
    embedding endpoint that is not the chat's server has its key from the environment,
    else from the keychain (where the app keeps it under that endpoint)."""
    env = os.environ if env is None else env
    chosen = EmbeddingChoice.read(choice or appdirs.embeddings_file())
    own = chosen.base_url.strip()
    kept = None
    if own and not same_server(own, chat.base_url) and not env.get("GAM_EMBEDDING_API_KEY"):
        try:
            kept = keystore.get_key(own)
        except keystore.KeychainUnavailable:
            kept = None
    return EmbeddingSettings.from_env(chat, env, choice=chosen, stored_key=kept)


def _llm_args(args: argparse.Namespace) -> argparse.Namespace:
    return argparse.Namespace(
        model=args.model, base_url=args.base_url, workers=None, timeout=args.timeout
    )


def _pair(item: str) -> tuple[str, str]:
    name, sep, model = item.partition("=")
    if not sep or not name.strip() or not model.strip():
        raise ValueError(f"--model-map {item!r}: expected NAME=MODEL")
    return name.strip(), model.strip()


def tell_token(program: str, token: Token) -> None:
    """The token a person needs to configure a client: shown unless they gave it."""
    if token.source in ("flag", "environment"):
        return
    where = {
        "keychain": "kept in the keychain",
        "generated": "new, kept in the keychain",
        "session": "for this session only (no keychain)",
    }[token.source]
    print(f"{program}: token ({where}): {token.value}", file=sys.stderr)


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host
