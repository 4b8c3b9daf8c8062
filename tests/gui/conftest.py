"""GUI fixtures: an offscreen main window against the scripted server, and the real
Secret Service (gnome-keyring) on a private D-Bus session started for these tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.llm import LLMSettings, LLMUnreachable
from gam_desktop.gui import settings_dialog
from gam_desktop.gui.app import make_app
from gam_desktop.gui.closing import CloseChoice
from gam_desktop.gui.main_window import MainWindow
from gam_desktop.gui.settings import PRESETS, Preferences

# The providers' own addresses: api.openai.com, Ollama's 11434, llama.cpp's 8080, …
DEFAULT_ADDRESSES = frozenset(url.rstrip("/") for url, _model, _key in PRESETS.values())


class Recorder:
    """Stands in for the message boxes: records what the person would have been told."""

    def __init__(self) -> None:
        self.told: list[tuple[str, str]] = []
        self.errors: list[BaseException] = []
        self.asked: list[tuple[str, str]] = []
        self.defaults_no: list[bool] = []  # per question: was No the default
        self.answer = True
        self.text: str | None = None  # what the person types when asked for text
        self.opened: list = []  # URLs opened outside the app (an editor)
        self.on_close = CloseChoice.CANCEL  # closing while a build runs: as before, cancel
        self.close_asked: list[tuple[str, str, str]] = []  # (task, title, text)
        self.close_answers: list[dict[CloseChoice, str]] = []  # per question: its buttons
        self.plans: list = []  # reorganization plans shown (applied when `answer`)
        self.buttons: list[tuple[str, str] | None] = []  # per question: its buttons' words

    def review_plan(self, plan) -> bool:
        self.plans.append(plan)
        return self.answer

    def confirm(self, title: str, text: str, default_no: bool = False, buttons=None) -> bool:
        # a question's buttons say what they do (the walkthrough found Yes and No)
        assert buttons and not {"Yes", "No"} & set(buttons), f"Yes/No asked: {title}"
        self.asked.append((title, text))
        self.defaults_no.append(default_no)
        self.buttons.append(buttons)
        return self.answer

    def ask_text(self, title: str, label: str, text: str) -> str | None:
        self.asked.append((title, text))
        return self.text

    def ask_close(
        self, task: str, title: str, text: str, answers: dict[CloseChoice, str]
    ) -> CloseChoice:
        """Closing, or opening another memory, while a build or a reorganization runs."""
        self.close_asked.append((task, title, text))
        self.close_answers.append(answers)
        return self.on_close


@pytest.fixture
def prefs(llm_server) -> Preferences:
    return Preferences(
        provider="Custom",
        base_url=llm_server.base_url,
        builder_model="scripted",
        chat_model="scripted",
        min_tokens=20,
        max_tokens=200,
        workers=4,
        timeout=5,
    )


@pytest.fixture
def providers_absent(monkeypatch) -> Iterator[list[str]]:
    """Nothing runs at the providers' default addresses (DEFAULT_ADDRESSES), and they are
    not asked: Settings asks a provider's server for its models as soon as it opens or the
    provider is chosen, and a test reaches no server it did not start (a developer's Ollama
    would answer; tests/network_guard.py). Other addresses (the scripted server's) are asked
    as usual. Gives the default addresses asked. The dialog's questions are waited for at
    the end (one still running would ask the real address during another test), and an
    address being typed is never asked (the typing pause outlasts the test)."""
    asked: list[str] = []
    questions: list[threading.Event] = []
    real_list_models = settings_dialog.list_models
    real_call_in_daemon = settings_dialog.call_in_daemon

    def list_models(settings: LLMSettings, timeout: float = 5.0) -> list[str]:
        url = settings.base_url.rstrip("/")
        if url not in DEFAULT_ADDRESSES:
            return real_list_models(settings, timeout)
        asked.append(url)
        raise LLMUnreachable(f"Nothing answers at {url} (the connection was refused)")

    def call_in_daemon(call, on_done, on_error) -> None:
        answered = threading.Event()
        questions.append(answered)

        def asking():
            try:
                return call()
            finally:
                answered.set()

        real_call_in_daemon(asking, on_done, on_error)

    monkeypatch.setattr(settings_dialog, "list_models", list_models)
    monkeypatch.setattr(settings_dialog, "call_in_daemon", call_in_daemon)
    monkeypatch.setattr(settings_dialog, "MODEL_LIST_DELAY_MS", 3_600_000)
    yield asked
    assert all(answered.wait(60) for answered in questions), "Settings' question hangs"


@pytest.fixture
def git_threads(monkeypatch) -> list[threading.Thread]:
    """The threads every git call runs on, from here on."""
    threads: list[threading.Thread] = []
    original = MemoryRepo.git

    def recording(self, *args: str, **kwargs) -> str:
        threads.append(threading.current_thread())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MemoryRepo, "git", recording)
    return threads


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_window(qtbot, tmp_path: Path, recorder: Recorder):
    make_app([])
    windows = []

    def make(prefs: Preferences, settings_file: str | None = None) -> MainWindow:
        """A window; `settings_file` names its QSettings file (a window reopened later
        gives the same name), else each window has its own."""
        name = settings_file or f"settings-{len(windows)}.ini"
        store = QSettings(str(tmp_path / name), QSettings.Format.IniFormat)
        window = MainWindow(prefs, store)
        window.confirm = recorder.confirm
        window.tell = lambda title, text: recorder.told.append((title, text))
        window.show_error = recorder.errors.append
        window.ask_text = recorder.ask_text
        window.open_external = recorder.opened.append
        window.closing.ask = recorder.ask_close
        window.review_plan = recorder.review_plan
        qtbot.addWidget(window)
        window.resize(1280, 800)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.close()


@pytest.fixture
def window(make_window, prefs) -> MainWindow:
    return make_window(prefs)


@pytest.fixture
def answered_chat(window: MainWindow):
    """The window's chat with two answered turns, the latest with two sources and the link
    to its steps (as a conversation shown again); no server is asked."""
    from gam_desktop.engine.api import ChatResult
    from gam_desktop.gui.chat_panel import Turn

    def answer(question: str, sources: list[str]) -> ChatResult:
        steps = "Searched the memory\nAnswered from 2 passages"
        return ChatResult(question=question, answer="An answer.", sources=sources,
                          confidence=0.7, trajectory=steps)  # fmt: skip

    chat = window.chat
    chat.set_ready(None)
    chat.turns = [
        Turn("First?", answer("First?", ["old/first.md"]), number=1),
        Turn("Latest?", answer("Latest?", ["new/one.md", "new/two.md"]), number=2),
    ]
    chat._render()
    return chat


@pytest.fixture(scope="session")
def secret_service(tmp_path_factory) -> Iterator[None]:
    """A private D-Bus session bus with gnome-keyring unlocked on it; keyring uses it."""
    if sys.platform != "linux":
        pytest.skip("the Secret Service (D-Bus, gnome-keyring) is Linux's keychain")
    for tool in ("dbus-daemon", "gnome-keyring-daemon"):
        if shutil.which(tool) is None:
            pytest.fail(
                f"{tool} is missing: .ci/run installs it (apt-get install dbus gnome-keyring)"
            )
    home = tmp_path_factory.mktemp("keyring-home")
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    address = bus.stdout.readline().strip()
    env = {
        **os.environ,
        "DBUS_SESSION_BUS_ADDRESS": address,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_RUNTIME_DIR": str(home),
    }
    subprocess.run(
        ["gnome-keyring-daemon", "--unlock", "--components=secrets"],
        input="gam-test-password",
        text=True,
        env=env,
        capture_output=True,
        timeout=30,
        check=True,
    )
    previous = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = address
    import keyring
    from keyring.backends import SecretService

    keyring.set_keyring(SecretService.Keyring())
    yield
    bus.terminate()  # gnome-keyring-daemon exits with its bus
    bus.wait(10)
    if previous is None:
        os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
    else:
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = previous
