"""Settings ▸ "Let other apps use this memory": gam-serve's endpoint inside the app.

`EndpointService` runs the endpoint (gam_desktop.serve) on a uvicorn thread of its own
while the app runs, for the open memory; `SharingDialog` switches it on or off and shows
what a person pastes into another app: the URL, the token, and an MCP client's
configuration. The choice and the port live in QSettings; the token in the keychain
(read off the GUI thread). Requests served show in the status bar.

Signals of EndpointService: `state_changed(str)` (the URL, or "" once stopped),
`failed(str)` (why it could not start), `served(int)` (requests answered so far),
`changed(Changes)` (what a saved turn or a lesson changed, for the views and History).
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gam_desktop.engine.api import EmbeddingSettings, LLMSettings, plural
from gam_desktop.gui.workers import call_in_daemon
from gam_desktop.serve.auth import DEFAULT_PORT, Token, resolve_token
from gam_desktop.serve.connections import uvicorn_options

if TYPE_CHECKING:
    import uvicorn

ENABLED, PORT = "sharing/enabled", "sharing/port"


class EndpointService(QObject):
    state_changed = Signal(str)
    failed = Signal(str)
    served = Signal(int)
    changed = Signal(object)  # a Changes: a turn saved or facts learned (History shows it)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(
        self,
        root: Path,
        settings: LLMSettings,
        token: str,
        port: int,
        embeddings: EmbeddingSettings | None = None,
    ) -> None:
        """Serve `root` on 127.0.0.1:`port` (stopping what was served before); search by
        meaning with `embeddings` (the window's), else by words alone."""
        import uvicorn  # here: 0.2 s the window's start-up need not pay

        from gam_desktop.serve.app import ServeConfig, create_app

        self.stop()
        config = ServeConfig(
            gam_dir=root,
            settings=settings,
            token=token,
            on_change=self.changed.emit,
            embeddings=embeddings,
        )
        app, endpoint = create_app(config, on_served=lambda _q: self.served.emit(endpoint.served))
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=port,
                log_level="warning",
                access_log=False,
                # uvicorn's own logging setup asks sys.stdout.isatty(): a windowed app has no
                # stdout (None). Its loggers reach the app's log file through the root logger.
                log_config=None,
                # as gam-serve: a half-sent request is timed out, the connections bounded
                **uvicorn_options(),
            )
        )
        thread = threading.Thread(target=self._serve, args=(server, port), daemon=True)
        self._server, self._thread = server, thread
        thread.start()

    def _serve(self, server: uvicorn.Server, port: int) -> None:
        """The uvicorn thread: says when it listens, and why it stopped early."""
        watcher = threading.Thread(target=self._announce, args=(server, port), daemon=True)
        watcher.start()
        try:
            server.run()
        except (OSError, SystemExit) as exc:  # the port is taken, mostly
            self.failed.emit(f"The endpoint could not start on port {port}: {exc}")
        if not server.started:
            self.failed.emit(f"The endpoint could not start on port {port} (is it in use?).")

    def _announce(self, server: uvicorn.Server, port: int) -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if server.started:
            self.url = f"http://127.0.0.1:{port}/v1"
            self.state_changed.emit(self.url)

    def stop(self) -> None:
        """Stop serving; turns still queued are written by the server's thread as it ends."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.should_exit = True
        if thread is not None:
            thread.join(30)
        self.url = ""
        self.state_changed.emit("")


def mcp_command() -> list[str]:
    """How a client starts gam-mcp: the packaged app's own executable with `mcp` (it has no
    gam-mcp beside it; gam_desktop/launch.py), else the installed console script."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "mcp"]
    return [shutil.which("gam-mcp") or "gam-mcp"]


def mcp_config(root: Path, settings: LLMSettings | None = None) -> str:
    """What a desktop MCP client (Claude Desktop, Cursor) pastes: gam-mcp over stdio, with
    the app's LLM endpoint and model (its key stays in the keychain, where gam-mcp finds
    it)."""
    command, *args = mcp_command()
    server: dict[str, object] = {"command": command, "args": [*args, "--gam-dir", str(root)]}
    if settings is not None:
        server["env"] = {"OPENAI_BASE_URL": settings.base_url, "OPENAI_MODEL": settings.model}
    return json.dumps({"mcpServers": {"gam-memory": server}}, indent=2)


class SharingDialog(QDialog):
    """The switch and what to copy. `service` outlives the dialog (the window owns it)."""

    def __init__(
        self,
        service: EndpointService,
        store: QSettings,
        root: Path | None,
        start: object,
        parent: QWidget | None = None,
        settings: LLMSettings | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Let other apps use this memory")
        self.service, self.store, self.root, self._start = service, store, root, start
        self.enabled = QCheckBox("Serve this memory to other apps while GAM Desktop runs")
        self.enabled.setChecked(is_enabled(store))
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(port_of(store))
        self.url = _copyable("")
        self.token = _copyable("reading the keychain…")
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.config = QPlainTextEdit(mcp_config(root, settings) if root else "Open a memory first.")
        self.config.setReadOnly(True)
        self.config.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # JSON keeps its shape
        self.config.setMinimumHeight(220)
        self.status = QLabel()
        self.status.setWordWrap(True)
        # Two lines kept for it: a wrapped label's height is not in the dialog's minimum
        # size, so a second line would cover the box above it instead of growing the dialog.
        self.status.setMinimumHeight(2 * self.status.fontMetrics().lineSpacing())
        form = QFormLayout()
        form.addRow(self.enabled)
        form.addRow("Port", self.port)
        form.addRow("Base URL (model: gam)", _with_copy(self.url))
        form.addRow("API key (token)", _with_copy(self.token, reveal=True))
        form.addRow(QLabel("MCP client configuration (Claude Desktop, Cursor):"))
        form.addRow(_with_copy(self.config))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Close).setDefault(True)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.enabled.toggled.connect(self.apply)
        service.state_changed.connect(self._show_state)
        service.failed.connect(self.status.setText)
        self._show_state(service.url)
        call_in_daemon(resolve_token, self._token_read, self._token_failed)
        self.resize(560, 0)

    @Slot(bool)
    def apply(self, on: bool) -> None:
        self.store.setValue(ENABLED, on)
        self.store.setValue(PORT, self.port.value())
        if on:
            self.status.setText("Starting…")
            self._start()  # type: ignore[operator]  # the window's: it knows the memory
        else:
            self.service.stop()

    @Slot(str)
    def _show_state(self, url: str) -> None:
        self.url.setText(url)
        if url:
            self.status.setText(f"Serving {self.root} at {url}.")
        elif not self.enabled.isChecked():
            self.status.setText("Other apps cannot use this memory.")

    @Slot(object)
    def _token_read(self, token: Token) -> None:
        self.token.setText(token.value)
        if token.source == "session":
            self.status.setText("No keychain: this token lasts until the app quits.")

    @Slot(object)
    def _token_failed(self, error: object) -> None:
        self.token.setText("")
        self.status.setText(f"The token could not be read: {error}")


def is_enabled(store: QSettings) -> bool:
    return str(store.value(ENABLED, "false")).lower() in ("true", "1")


def port_of(store: QSettings) -> int:
    try:
        return int(store.value(PORT, DEFAULT_PORT))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return DEFAULT_PORT


def _copyable(text: str) -> QLineEdit:
    line = QLineEdit(text)
    line.setReadOnly(True)
    return line


def _with_copy(field: QLineEdit | QPlainTextEdit, reveal: bool = False) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(field, 1)
    if reveal and isinstance(field, QLineEdit):
        show = QPushButton("Show")
        show.setAutoDefault(False)  # Return closes the dialog, it does not copy
        show.setCheckable(True)
        show.toggled.connect(
            lambda on: field.setEchoMode(
                QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password
            )
        )
        layout.addWidget(show)
    copy = QPushButton("Copy")
    copy.setAutoDefault(False)
    copy.setAccessibleName(f"Copy the {field.accessibleName() or 'value'}")
    copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(_text(field)))
    layout.addWidget(copy)
    return row


def _text(field: QLineEdit | QPlainTextEdit) -> str:
    return field.text() if isinstance(field, QLineEdit) else field.toPlainText()


class Sharing(QObject):
    """The window's side: the service for the open memory, started with the app when the
    person chose so, stopped when the app closes; requests served go to `show_status`."""

    def __init__(
        self,
        store: QSettings,
        settings: Callable[[], LLMSettings],
        show_status: Callable[[str], None],
        parent: QObject | None = None,
        on_change: Callable[[object], None] | None = None,
        embeddings: Callable[[], EmbeddingSettings] | None = None,
    ) -> None:
        super().__init__(parent)
        self.store, self.settings, self.show_status = store, settings, show_status
        self.embeddings = embeddings  # search by meaning as the window has it
        self.root: Path | None = None
        self.service = EndpointService(self)
        self.service.served.connect(self._served)
        self.service.failed.connect(self.show_status)
        if on_change is not None:  # queued to the GUI thread: the writer's thread emits it
            self.service.changed.connect(on_change)

    def follow(self, root: Path) -> None:
        """A memory was opened: serve it instead, when serving is on."""
        self.root = root
        if is_enabled(self.store):
            self.start()
        else:
            self.service.stop()

    def start(self) -> None:
        if self.root is not None:
            call_in_daemon(resolve_token, self._start_with, self._token_failed)

    def stop(self) -> None:
        self.service.stop()

    def open_dialog(self, parent: QWidget) -> None:
        dialog = SharingDialog(
            self.service, self.store, self.root, self.start, parent, self.settings()
        )
        dialog.exec()

    @Slot(object)
    def _start_with(self, token: Token) -> None:
        if self.root is not None and is_enabled(self.store):
            embeddings = self.embeddings() if self.embeddings is not None else None
            self.service.start(
                self.root, self.settings(), token.value, port_of(self.store), embeddings
            )

    @Slot(object)
    def _token_failed(self, error: object) -> None:
        self.show_status(f"Other apps cannot use this memory: no token ({error})")

    @Slot(int)
    def _served(self, count: int) -> None:
        self.show_status(f"Other apps: {plural(count, 'request')} answered from this memory")
