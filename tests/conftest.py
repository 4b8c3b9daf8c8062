"""Shared fixtures: the scripted LLM server, settings that point at it, isolation.

Tests never touch the user's home folder: HOME and the XDG folders point into a
temporary directory for the whole session, before anything reads them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_HOME = tempfile.mkdtemp(prefix="gam-test-home-")
for _var in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
    os.environ[_var] = _HOME if _var == "HOME" else os.path.join(_HOME, _var.lower())
for _var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "GAM_AGENT_MODEL"):
    os.environ.pop(_var, None)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gam_desktop.engine.build.builder import BuildOptions  # noqa: E402
from gam_desktop.engine.llm import LLMSettings, capabilities  # noqa: E402
from gam_desktop.engine.models import ChunkConfig  # noqa: E402
from gam_desktop.engine.workflow import Workflow  # noqa: E402
from gam_desktop.scripted_llm import RunningServer  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_capabilities() -> Iterator[None]:
    capabilities.forget_all()
    yield
    capabilities.forget_all()


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
