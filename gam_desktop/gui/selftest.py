"""`gam-desktop --self-test`: the whole app exercised offscreen against the scripted local
endpoint — open a memory, add the sample documents and one document of every other format
(Word, PowerPoint, EPUB, HTML, e-mail: the packaged app carries each converter), ask a
question, roll the build back.
Exits 0 when every step did what it should (the packaged app runs this after a build)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

WAIT_SECONDS = 120


def _wait(app, condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        app.processEvents()
        time.sleep(0.01)


def run() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from gam_desktop.engine.llm.tokenizer import resources_dir
    from gam_desktop.gui.app import make_app
    from gam_desktop.gui.closing import CloseChoice
    from gam_desktop.gui.main_window import MainWindow
    from gam_desktop.gui.settings import Preferences
    from gam_desktop.selfcheck.scripted_llm import RunningServer

    started = time.monotonic()
    problems: list[str] = []
    owns_app = QApplication.instance() is None
    app = make_app(sys.argv[:1])
    with tempfile.TemporaryDirectory(prefix="gam-selftest-") as tmp, RunningServer() as server:
        store = QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        prefs = Preferences(
            provider="Custom",
            base_url=server.base_url,
            builder_model="scripted",
            chat_model="scripted",
            min_tokens=40,
            max_tokens=200,
        )
        window = MainWindow(prefs, store)
        window.confirm = lambda *_args, **_kwargs: True
        window.tell = lambda title, text: problems.append(f"{title}: {text}")
        window.show_error = lambda error: problems.append(f"error: {error}")
        window.closing.ask = lambda *_question: CloseChoice.CANCEL  # a failed step: stop
        window.show()
        try:
            steps(app, window, Path(tmp) / "memory", resources_dir() / "samples")
        except Exception as exc:  # the self-test reports, it does not crash
            problems.append(f"{type(exc).__name__}: {exc}")
        finally:
            window.close()
            del window
    if owns_app:
        app.shutdown()  # see gui/app.py main(): no Qt objects left for finalization
    elapsed = time.monotonic() - started
    if problems:
        print("self-test FAILED:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
        return 1
    print(f"self-test passed in {elapsed:.1f} s")
    return 0


def steps(app, window, memory: Path, samples: Path) -> None:
    from gam_desktop.selfcheck.formats import one_of_each

    if not window.open_memory(memory):
        raise RuntimeError("the memory could not be opened")
    formats = one_of_each(memory.parent / "formats")
    window.add_paths([*sorted(samples.iterdir()), *formats.values()])
    _wait(app, lambda: not window.tasks.running() and window.tree.memory_count() > 0, "the build")
    built = window.tree.memory_count()
    meta = window.session.workflow.folder.read_meta()
    unread = [p.name for p in formats.values() if not meta or p.name not in meta.source_files]
    if unread:
        raise RuntimeError(f"not built from {', '.join(unread)}")
    window.chat.input.setPlainText("What is BERT?")
    window.chat.send.click()
    _wait(
        app,
        lambda: window.chat.turns and (window.chat.turns[-1].result or window.chat.turns[-1].error),
        "the answer",
    )
    result = window.chat.turns[-1].result
    if result is None or not result.sources:
        raise RuntimeError(f"no answer with sources: {window.chat.turns[-1].error}")
    _serve_for_other_apps(app, window, memory)
    window.tabs.setCurrentWidget(window.history)  # its list loads on a worker thread
    _wait(app, lambda: window.history.operations and not window.history.loading(), "the history")
    build = window.history.operations[-1]
    window.roll_back(build)
    _wait(
        app, lambda: not window.tasks.running() and window.tree.memory_count() == 0, "the rollback"
    )
    print(
        f"self-test: built {built} memories, answered with {result.sources}, served it to "
        "other apps, rolled back"
    )


def _serve_for_other_apps(app, window, memory: Path) -> None:
    """The endpoint other apps use (imported lazily, so a frozen app lacking uvicorn's
    protocol modules would only fail here): serve the memory, ask /health."""
    import json
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    service = window.sharing.service
    service.start(memory, window.sharing.settings(), "self-test-token", port)
    try:
        _wait(app, lambda: bool(service.url), "the endpoint for other apps")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30) as reply:
            health = json.load(reply)
        if health.get("status") != "ok":
            raise RuntimeError(f"the endpoint for other apps said {health}")
    finally:
        service.stop()
