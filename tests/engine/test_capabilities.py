"""What a server supports is remembered across runs (per base URL and model, in the app's
data folder: the test's own here), and learned again when a call says it changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gam_desktop import appdirs
from gam_desktop.engine.llm import LLMClient, StructuredOutputError, capabilities
from gam_desktop.engine.llm.tools import Tool, chat_with_tools
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.clirun import run_cli
from tests.documents import document_files
from tests.engine.test_llm_client import memorize


def formats(server) -> list[str | None]:
    return [r["response_format"] for r in server.state.requests]


def test_a_second_run_makes_no_probe_call(tmp_path: Path, llm_server) -> None:
    """Two `gam-add` processes against a server without json_schema or tools: the first pays
    for the rejected json_schema request, the second remembers and makes none."""
    llm_server.state.reject.update({"json_schema", "tools"})
    docs = document_files(tmp_path / "docs", 2)
    memory = tmp_path / "memory"
    first = run_cli(["--gam-dir", str(memory), "--files", str(docs[0]), "-q"], llm_server.base_url)
    assert first.returncode == 0, first.stderr
    assert "json_schema" in formats(llm_server)
    remembered = json.loads(appdirs.capabilities_file().read_text())["servers"]
    assert remembered[0]["supported"]["json_schema"] is False
    asked = len(llm_server.state.requests)
    second = run_cli(["--gam-dir", str(memory), "--files", str(docs[1]), "-q"], llm_server.base_url)
    assert second.returncode == 0, second.stderr
    assert formats(llm_server)[asked:] and "json_schema" not in formats(llm_server)[asked:]


def remember(path: Path, server, supported: dict[str, bool]) -> None:
    """An earlier run's memory of `server` (model "scripted"), and this process using it."""
    entry = {"base_url": server.base_url, "model": "scripted", "supported": supported}
    entry["learned"] = 4_000_000_000  # far from old
    path.write_text(json.dumps({"servers": [entry]}))
    capabilities.remember_in(path)


def test_the_tools_are_remembered_too(tmp_path: Path, settings, llm_server) -> None:
    remember(tmp_path / "caps.json", llm_server, {"tools": False})
    tool = Tool("ping", "Answer the ping", {"type": "object", "properties": {}})
    chat_with_tools(LLMClient(settings), [{"role": "user", "content": "ping"}], [tool], stage="x")
    assert [r["tools"] for r in llm_server.state.requests] == [False]


def test_a_remembered_feature_refused_now_is_probed_again(
    tmp_path: Path, settings, llm_server
) -> None:
    path = tmp_path / "caps.json"
    remember(path, llm_server, {"json_schema": True, "tools": True})
    llm_server.state.reject.add("json_schema")  # the server behind the URL changed
    client = LLMClient(settings)
    memorize(client)
    memorize(client)
    assert formats(llm_server) == ["json_schema", "json_object", "json_object"]
    saved = json.loads(path.read_text())["servers"][0]["supported"]
    assert saved == {"json_schema": False, "json_object": True}  # "tools" is learned again


def test_a_fallback_that_keeps_failing_probes_the_server_again(
    tmp_path: Path, settings, llm_server
) -> None:
    """Down the ladder on an earlier run's word, a reply still invalid after its re-ask:
    the next call tries json_schema again (the server may do better now)."""
    remember(tmp_path / "caps.json", llm_server, {"json_schema": False})
    llm_server.state.faults.append(Fault("garbage", times=2, on_reask=True))
    client = LLMClient(settings)
    with pytest.raises(StructuredOutputError):
        memorize(client)
    memorize(client)
    assert formats(llm_server) == ["json_object", "json_object", "json_schema"]


def test_an_old_or_damaged_memory_is_learned_again(tmp_path: Path, settings, llm_server) -> None:
    path = tmp_path / "caps.json"
    entry = {"base_url": llm_server.base_url, "model": "scripted"}
    old = {**entry, "supported": {"json_schema": False}, "learned": 1.0}
    path.write_text(json.dumps({"servers": [old, "junk", {**entry, "supported": 3}]}))
    capabilities.remember_in(path)
    memorize(LLMClient(settings))
    assert formats(llm_server) == ["json_schema"]
    path.write_text("{not json")
    capabilities.forget_all()
    capabilities.remember_in(path)  # no error: learned as it goes
    memorize(LLMClient(settings))
    assert formats(llm_server)[-1] == "json_schema"
