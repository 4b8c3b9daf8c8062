"""Shared fixtures: the scripted LLM server, settings that point at it, isolation.

Tests never touch the user's home folder: HOME and the XDG folders point into a
temporary directory for the whole session, before anything reads them. Nor do they reach
the network (the internet, or a server the developer runs): tests/network_guard.py.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_HOME = tempfile.mkdtemp(prefix="gam-test-home-")
for _var in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
    os.environ[_var] = _HOME if _var == "HOME" else os.path.join(_HOME, _var.lower())
for _var in ("APPDATA", "LOCALAPPDATA"):  # Windows' app folders (gam_desktop/appdirs.py)
    os.environ[_var] = os.path.join(_HOME, _var.lower())
for _var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "GAM_AGENT_MODEL"):
    os.environ.pop(_var, None)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if sys.platform != "linux":
    # HOME does not isolate Windows' Credential Manager or the macOS Keychain: the tests
    # (and the processes they start) get a keychain that stores nothing. The real Secret
    # Service is tested on Linux.
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"

from gam_desktop.engine.ingest.builder import BuildOptions  # noqa: E402
from gam_desktop.engine.llm import LLMSettings, capabilities, embeddings  # noqa: E402
from gam_desktop.engine.models import ChunkConfig  # noqa: E402
from gam_desktop.engine.workflow import Workflow  # noqa: E402
from gam_desktop.selfcheck.scripted_llm import RunningServer  # noqa: E402
from tests.places import fake_home  # noqa: E402

pytest_plugins = ("tests.network_guard",)  # no network: why and how, in that module


@pytest.fixture(autouse=True)
def _fresh_capabilities(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """No test knows what another learned about a server (a port is soon used again): the
    registry is emptied, not remembered in this process, and the app's data folder, where
    the command line remembers it (gam_desktop/appdirs.py), is the test's own."""
    own = tmp_path_factory.mktemp("app-data", numbered=True)
    for variable in ("XDG_DATA_HOME", "LOCALAPPDATA"):
        monkeypatch.setenv(variable, str(own))
    capabilities.forget_all()
    capabilities.remember_in(None)
    embeddings.forget_found()  # which embedding model a server (a reused port) lists
    yield
    capabilities.forget_all()
    capabilities.remember_in(None)
    embeddings.forget_found()


@pytest.fixture
def llm_server() -> Iterator[RunningServer]:
    with RunningServer() as server:
        yield server


@pytest.fixture
def settings(llm_server: RunningServer) -> LLMSettings:
    return LLMSettings(
        base_url=llm_server.base_url,
        model="scripted",
        api_key="test-key",
        timeout=5,
        max_retries=3,
        backoff_base=0.01,
        workers=4,
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own (`tests.places.fake_home`): Path.home gives it."""
    return fake_home(tmp_path, monkeypatch)


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def make_workflow(settings: LLMSettings, memory_dir: Path):
    def make(min_tokens: int = 20, max_tokens: int = 300, threshold: int = 10, **kwargs):
        options = BuildOptions(
            chunk=ChunkConfig(min_tokens=min_tokens, max_tokens=max_tokens),
            reorganize_threshold=threshold,
        )
        kwargs.setdefault("gam_dir", memory_dir)
        kwargs.setdefault("settings", settings)
        return Workflow(options=options, **kwargs)

    return make


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that need Linux (root, mount namespaces, D-Bus, /usr/bin/git) or POSIX
    (symbolic links without privileges, permission bits, shell scripts) are skipped
    elsewhere, each with the marker's reason."""
    for item in items:
        for name, wanted in (
            ("linux_only", sys.platform == "linux"),
            ("posix_only", os.name == "posix"),
        ):
            marker = item.get_closest_marker(name)
            if marker is not None and not wanted:
                reason = marker.args[0] if marker.args else f"{name}: not this system"
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True, scope="session")
def _private_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    """QSettings in an INI file under the test home on every system (on Windows and macOS
    HOME does not move the registry or ~/Library/Preferences)."""
    if sys.platform == "linux":
        return
    from PySide6.QtCore import QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(
        QSettings.Format.IniFormat,
        QSettings.Scope.UserScope,
        str(tmp_path_factory.mktemp("settings")),
    )
