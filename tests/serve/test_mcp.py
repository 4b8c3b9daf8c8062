"""gam-mcp (issue 16): the mcp SDK's own client against the server, over stdio (gam-mcp in
its own process) and streamable HTTP (on 127.0.0.1, behind the token)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.launch import main
from gam_desktop.serve.mcp_cli import http_app
from gam_desktop.serve.mcp_server import MemoryServer
from tests.repos import git
from tests.serve.running import running
from tests.serve.test_endpoint import ONCALL

pytestmark = pytest.mark.timeout(180)
TOKEN = "gam-mcp-test-token-0123456789"
NOTE = "# Boiler\n\nThe boiler in the cellar is serviced every October by Nordheat.\n"


@pytest.fixture
def memory(make_workflow) -> Path:
    workflow = make_workflow()
    workflow.add(text=ONCALL)
    return workflow.folder.root


def stdio(memory: Path, base_url: str, *flags: str) -> StdioServerParameters:
    code = "import sys; from gam_desktop.serve.mcp_cli import mcp_main; sys.exit(mcp_main())"
    env = {
        **os.environ,
        "OPENAI_BASE_URL": base_url,
        "OPENAI_MODEL": "scripted",
        "OPENAI_API_KEY": "test-key",
    }
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", code, "--gam-dir", str(memory), *flags],
        env=env,
        cwd=str(Path(__file__).resolve().parents[2]),
    )


def text(result) -> str:
    return "\n".join(part.text for part in result.content if hasattr(part, "text"))


async def exercise(client: Client, memory: Path, allowed: bool) -> None:
    """What a client does with the memory, and what it must be refused."""
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == ({"search", "read", "list", "ask"} | ({"remember"} if allowed else set()))
    found = await client.call_tool("search", {"query": "Acme on-call escalation"})
    first = text(found).splitlines()[0].split(" — ")[0]
    assert not found.is_error and (memory / first).is_file()
    read = await client.call_tool("read", {"path": first})
    assert "Maria Lopez" in text(read) or "Acme" in text(read)
    escape = await client.call_tool("read", {"path": "../../etc/passwd"})
    assert escape.is_error and "'..' is not allowed" in text(escape)
    private = await client.call_tool("read", {"path": ".git/config"})
    assert private.is_error and "private" in text(private)
    listed = await client.call_tool("list", {"path": "/"})
    assert "README.md" in text(listed)
    answer = await client.call_tool("ask", {"question": "Who does the Acme rotation escalate to?"})
    assert not answer.is_error and "Sources:" in text(answer)
    readme = await client.read_resource("gam://readme")
    assert readme.contents[0].text.startswith("#")
    tree = await client.read_resource("gam://tree")
    assert first.split("/")[0] + "/" in tree.contents[0].text
    before = git(memory, "rev-list", "--count", "HEAD")
    remembered = await client.call_tool("remember", {"text": NOTE})
    if allowed:
        assert not remembered.is_error and "Added 1 document" in text(remembered)
        assert int(git(memory, "rev-list", "--count", "HEAD")) == int(before) + 1
        assert git(memory, "log", "-1", "--format=%s").startswith("Added 1 document")
    else:
        assert remembered.is_error
        assert git(memory, "rev-list", "--count", "HEAD") == before


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


@pytest.mark.parametrize("allowed", [False, True], ids=["read-only", "remember"])
def test_stdio(memory: Path, llm_server, allowed: bool) -> None:
    flags = ("--allow-remember",) if allowed else ()
    params = stdio(memory, llm_server.base_url, *flags)

    async def scenario() -> None:
        async with Client(params) as client:
            await exercise(client, memory, allowed)

    run(scenario)


@pytest.mark.parametrize("allowed", [False, True], ids=["read-only", "remember"])
def test_streamable_http(memory: Path, settings: LLMSettings, allowed: bool) -> None:
    server = MemoryServer(memory, settings, allow_remember=allowed)
    with running(http_app(server, TOKEN)) as url:

        async def scenario() -> None:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                transport = streamable_http_client(f"{url}/mcp", http_client=http)
                async with Client(transport) as client:
                    await exercise(client, memory, allowed)

        run(scenario)
        refused = httpx2.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        wrong = httpx2.post(f"{url}/mcp", json={}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401


def test_the_app_executable_runs_gam_mcp_over_stdio(memory: Path, llm_server) -> None:
    """What the packaged app's MCP configuration starts: `gam-desktop mcp --gam-dir DIR` (here
    `python -m gam_desktop`, the same dispatch as the frozen launcher)."""
    params = stdio(memory, llm_server.base_url)
    params.args = ["-m", "gam_desktop", "mcp", "--gam-dir", str(memory)]

    async def scenario() -> None:
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"search", "read", "list", "ask"}
            found = await client.call_tool("search", {"query": "Acme on-call escalation"})
            assert not found.is_error and "Maria Lopez" in text(found)

    run(scenario)


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_the_sub_commands_start_without_qt(tmp_path: Path, command: str) -> None:
    """Chosen before the GUI is imported: no Qt, and stdout left to the protocol."""
    code = (
        "import sys; from gam_desktop.launch import main; code = main(sys.argv[1:]); "
        "sys.exit(10 if 'PySide6' in sys.modules else code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, command, "--gam-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    assert done.returncode == 2, done.stderr  # the folder is not a memory: refused, no Qt
    assert done.stderr.startswith(f"gam-desktop {command}: ")
    assert "is not a GAM memory" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_the_sub_commands_name_themselves_as_typed(capsys, command: str) -> None:
    """`gam-desktop mcp --help` shows `usage: gam-desktop mcp …`, not the name of another
    executable the packaged app does not have."""
    with pytest.raises(SystemExit) as stopped:
        main([command, "--help"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: gam-desktop {command} [-h]")
