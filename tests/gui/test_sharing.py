"""Settings ▸ "Let other apps use this memory" (issue 16): the switch starts the endpoint
for the open memory, the URL and token shown are the ones that work, requests served show
in the status bar, closing the app stops it."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import httpx2
import pytest
from PySide6.QtCore import QTimer

from gam_desktop.engine.store.changes import CHAT
from gam_desktop.gui.sharing import SharingDialog, is_enabled, mcp_config
from tests.gui.test_theme import os_scheme, shots_folder

pytestmark = pytest.mark.timeout(120)
TOKEN = "gui-sharing-token-0123456789"
NOTE = "# Boiler\n\nThe boiler in the cellar is serviced every October by Nordheat.\n"


@pytest.fixture
def shared(window, make_workflow, settings, monkeypatch, qtbot):
    monkeypatch.setenv("GAM_SERVE_TOKEN", TOKEN)
    workflow = make_workflow()
    workflow.add(text=NOTE)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    window.store.setValue("sharing/port", port)
    window.open_memory(workflow.folder.root)
    return window


def dialog_of(window) -> SharingDialog:
    sharing = window.sharing
    return SharingDialog(
        sharing.service, window.store, sharing.root, sharing.start, window, sharing.settings()
    )


def test_switching_it_on_serves_the_open_memory(shared, qtbot) -> None:
    window = shared
    kinds: list[str] = []
    window.session.memory_changed.connect(lambda changes: kinds.append(changes.kind))
    dialog = dialog_of(window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.token.text() == TOKEN, timeout=10_000)
    with qtbot.waitSignal(window.sharing.service.state_changed, timeout=30_000) as started:
        dialog.enabled.setChecked(True)
    url = started.args[0]
    assert url.startswith("http://127.0.0.1:") and dialog.url.text() == url
    assert is_enabled(window.store)
    assert '"--gam-dir"' in dialog.config.toPlainText()
    assert str(window.sharing.root) in dialog.config.toPlainText()
    assert '"OPENAI_MODEL": "scripted"' in dialog.config.toPlainText()
    assert "api_key" not in dialog.config.toPlainText().lower()
    headers = {"Authorization": f"Bearer {dialog.token.text()}"}
    assert httpx2.get(f"{url}/models", headers=headers).status_code == 200
    question = {"model": "gam", "messages": [{"role": "user", "content": "Who services it?"}]}
    with qtbot.waitSignal(window.sharing.service.served, timeout=30_000):
        reply = httpx2.post(f"{url}/chat/completions", json=question, headers=headers, timeout=30)
    assert reply.status_code == 200 and reply.headers["x-gam-sources"]
    qtbot.waitUntil(lambda: "1 request answered" in window.status_label.text(), timeout=10_000)
    # the saved turn reaches the views like any operation (History lists it)
    qtbot.waitUntil(lambda: any(k == CHAT for k in kinds), timeout=30_000)
    with qtbot.waitSignal(window.sharing.service.state_changed, timeout=30_000) as stopped:
        dialog.enabled.setChecked(False)
    assert stopped.args[0] == "" and not window.sharing.service.running
    with pytest.raises(httpx2.TransportError):
        httpx2.get(f"{url}/models", headers=headers)


def test_a_client_that_sends_half_a_request_is_timed_out(shared, qtbot, monkeypatch) -> None:
    """The window's endpoint guards its connections as gam-serve does: a request head that
    never ends gets a 408 and the connection is closed (the timeout made short here)."""
    from gam_desktop.gui import sharing
    from gam_desktop.serve import connections

    monkeypatch.setattr(
        sharing, "uvicorn_options", lambda: connections.uvicorn_options(head_timeout=0.5)
    )
    dialog = dialog_of(shared)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.token.text() == TOKEN, timeout=10_000)
    with qtbot.waitSignal(shared.sharing.service.state_changed, timeout=30_000) as started:
        dialog.enabled.setChecked(True)
    port = int(started.args[0].rsplit(":", 1)[1].split("/", 1)[0])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as stalled:
        stalled.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no end
        said = stalled.recv(1024)  # the server's answer, or the 30 s socket timeout
    assert said.startswith(b"HTTP/1.1 408")
    dialog.enabled.setChecked(False)


def test_switched_on_it_starts_with_the_app_and_stops_with_it(shared, qtbot) -> None:
    window = shared
    window.store.setValue("sharing/enabled", True)
    with qtbot.waitSignal(window.sharing.service.state_changed, timeout=30_000):
        window.open_memory(window.sharing.root)  # as at start-up: the last memory opens
    assert window.sharing.service.running
    window.close()
    assert not window.sharing.service.running


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_sharing(shared, qtbot, tmp_path, scheme) -> None:
    with os_scheme(scheme == "dark"):
        try:
            dialog = dialog_of(shared)
            qtbot.addWidget(dialog)
            qtbot.waitUntil(lambda: dialog.token.text() == TOKEN, timeout=10_000)
            with qtbot.waitSignal(shared.sharing.service.state_changed, timeout=30_000):
                dialog.enabled.setChecked(True)
            dialog.show()
            dialog.layout().activate()
            shot = shots_folder(tmp_path) / f"sharing-{scheme}.png"
            assert dialog.grab().save(str(shot)) and shot.stat().st_size > 10_000
            QTimer.singleShot(0, dialog, dialog.close)
        finally:
            shared.sharing.stop()


def test_the_mcp_configuration_starts_the_packaged_app_or_the_console_script(
    tmp_path: Path, settings, monkeypatch
) -> None:
    """The frozen app has no gam-mcp: a client starts the app's own executable with `mcp`."""
    app = "/Applications/GAM Desktop.app/Contents/MacOS/gam-desktop"
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", app)
    server = json.loads(mcp_config(tmp_path, settings))["mcpServers"]["gam-memory"]
    assert server["command"] == app
    assert server["args"] == ["mcp", "--gam-dir", str(tmp_path)]
    assert server["env"]["OPENAI_MODEL"] == settings.model
    monkeypatch.delattr(sys, "frozen")
    server = json.loads(mcp_config(tmp_path))["mcpServers"]["gam-memory"]
    assert Path(server["command"]).name.startswith("gam-mcp")  # gam-mcp.exe on Windows
    assert server["args"] == ["--gam-dir", str(tmp_path)] and "env" not in server
