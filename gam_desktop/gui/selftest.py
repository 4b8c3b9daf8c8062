"""`gam-desktop --self-test`: the whole app exercised offscreen against the scripted local
endpoint — open a memory, add the sample documents, a PDF and one document of every other
format (Word, PowerPoint, EPUB, HTML, e-mail: the packaged app carries each converter), ask
a question, serve the memory to other apps, roll the build back, then set, read and delete
a throwaway entry in the OS keychain.
Exits 0 when every step did what it should (the packaged app runs this after a build).

It never raises: a windowed build turns an unhandled exception into a modal dialog, which
an unattended release job waits on for ever. Every failure, its own cleanup's too (on
Windows a file the app left open cannot be deleted), is reported and makes the exit status
1. A windowed build on Windows has no stdout: `log_file` keeps what it says (the release
workflow uploads it as the build's log)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from gam_desktop.engine.api import bundled_git, remove_tree, resources_dir
from gam_desktop.gui.application import make_app
from gam_desktop.gui.closing import CloseChoice
from gam_desktop.gui.main_window import MainWindow
from gam_desktop.gui.settings import Preferences

WAIT_SECONDS = 120
KEYCHAIN_SECONDS = 30  # a locked keychain may wait on a password prompt: never for ever


class Report:
    """What the self-test says: on stdout and stderr when the process has them (None in a
    windowed build on Windows), and into `log_file` when one is given."""

    def __init__(self, log_file: Path | None = None) -> None:
        self.log_file = log_file
        if log_file is not None:
            with contextlib.suppress(OSError):
                log_file.parent.mkdir(parents=True, exist_ok=True)
                log_file.write_text("", encoding="utf-8")

    def say(self, line: str, error: bool = False) -> None:
        stream = sys.stderr if error else sys.stdout
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                print(line, file=stream, flush=True)
        if self.log_file is not None:
            with contextlib.suppress(OSError), self.log_file.open("a", encoding="utf-8") as log:
                log.write(line + "\n")


def _wait(app, condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        app.processEvents()
        time.sleep(0.01)


def run(log_file: Path | None = None) -> int:
    report = Report(log_file)
    started = time.monotonic()
    problems: list[str] = []
    try:
        _run(report, problems)
    except BaseException as exc:  # the self-test reports, it does not crash (see above)
        problems.append(f"{type(exc).__name__}: {exc}")
    elapsed = time.monotonic() - started
    if problems:
        report.say("self-test FAILED:\n" + "\n".join(f"  {p}" for p in problems), error=True)
        return 1
    report.say(f"self-test passed in {elapsed:.1f} s")
    return 0


def _run(report: Report, problems: list[str]) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    owns_app = QApplication.instance() is None
    app = make_app(sys.argv[:1])
    folder = Path(tempfile.mkdtemp(prefix="gam-selftest-"))
    try:
        _in_a_window(app, folder, report, problems)
    finally:
        problems += clean_up(folder)
        if owns_app:
            app.shutdown()  # see gui/app.py main(): no Qt objects left for finalization
    report.say(f"self-test: keychain: {keychain_check(problems)}")


def _in_a_window(app, folder: Path, report: Report, problems: list[str]) -> None:
    """The window's part, closed (and with it the memory) before its folder is deleted."""
    from gam_desktop.selfcheck.scripted_llm import RunningServer  # test tooling: on demand

    with RunningServer() as server:
        store = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
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
            steps(app, window, folder / "memory", resources_dir() / "samples", report)
        except Exception as exc:  # the self-test reports, it does not crash
            problems.append(f"{type(exc).__name__}: {exc}")
        finally:
            window.close()  # closes the memory: its search index, watcher and lock
            if window.isVisible():  # refused: a failed step left a build running
                window.tasks.cancel_all()
                window.tasks.wait_all()
                window.session.close()
            del window


def clean_up(folder: Path) -> list[str]:
    """Delete the self-test's folder; what could not be deleted, as problems (never raised).
    On Windows an open file cannot be deleted: a file left here is one the app left open."""
    try:
        remove_tree(folder)
    except OSError as exc:
        return [f"cleanup: {exc.strerror or exc} (a file the app did not close?)"]
    return []


# Windows' ERROR_NO_SUCH_LOGON_SESSION ("A specified logon session does not exist"): the
# process runs in a session that has no credential store, as a service account (a CI
# runner) may. A person's own session has one; and the backend was found and called, which
# is what a packaging mistake would break.
NO_LOGON_SESSION = 1312


class KeychainOutcome(NamedTuple):
    said: str
    problem: str | None = None
    no_store_here: bool = False  # the session has no keychain: not the app's fault


def keychain_check(
    problems: list[str], round_trip: Callable[[], KeychainOutcome] | None = None
) -> str:
    """Set, read and delete a throwaway entry in the OS keychain (a name of its own, never
    the person's key), on a thread of its own with a time limit. A packaged app on Windows
    or macOS must reach its keychain (keyring picks its backend at run time: a missing one
    is a packaging bug), unless the session it runs in has none (NO_LOGON_SESSION); from
    source, or on Linux without a Secret Service running, there may be none, which is said
    and skipped."""
    outcome: list[KeychainOutcome] = []
    thread = threading.Thread(
        target=lambda: outcome.append((round_trip or _keychain_round_trip)()),
        name="gam-selftest-keychain",
        daemon=True,
    )
    thread.start()
    thread.join(KEYCHAIN_SECONDS)
    said, problem, no_store_here = (
        outcome[0] if outcome else KeychainOutcome("", f"no answer in {KEYCHAIN_SECONDS} s")
    )
    if problem is None:
        return said
    required = getattr(sys, "frozen", False) and sys.platform in ("win32", "darwin")
    if required and not no_store_here:
        problems.append(f"keychain: {problem}")
        return "FAILED"
    return f"skipped ({problem})"


def _no_logon_session(exc: BaseException) -> bool:
    """Whether `exc`, or an error it was raised from, is Windows' NO_LOGON_SESSION."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if getattr(seen, "winerror", None) == NO_LOGON_SESSION:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _keychain_round_trip() -> KeychainOutcome:
    from gam_desktop import keystore

    try:
        if not keystore.available():
            return KeychainOutcome("", f"no keychain ({keystore.backend_name()})")
        endpoint, secret = f"gam-self-test-{uuid.uuid4().hex}", uuid.uuid4().hex
        keystore.set_key(endpoint, secret)
        try:
            read = keystore.get_key(endpoint)
        finally:
            keystore.delete_key(endpoint)
        if read != secret:
            return KeychainOutcome("", "the entry read back is not the one set")
        if keystore.get_key(endpoint) is not None:
            return KeychainOutcome("", "the entry is still there after it was deleted")
        return KeychainOutcome(f"set, read and deleted an entry ({keystore.backend_name()})")
    except Exception as exc:  # a locked or refusing keychain: reported by the caller
        said = f"{type(exc).__name__}: {exc}"
        if _no_logon_session(exc):
            said = f"this session has no credential store, {keystore.backend_name()}: {said}"
            return KeychainOutcome("", said, no_store_here=True)
        return KeychainOutcome("", said)


def steps(app, window, memory: Path, samples: Path, report: Report) -> None:
    from gam_desktop.selfcheck.formats import SECTIONS, make_pdf, one_of_each

    if not window.open_memory(memory):
        raise RuntimeError("the memory could not be opened")
    report.say(f"self-test: git: {_git_in_use(window)}")
    formats = one_of_each(memory.parent / "formats")
    formats[".pdf"] = make_pdf(memory.parent / "formats" / "borealis_memo.pdf", SECTIONS)
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
    report.say(
        f"self-test: built {built} notes, answered with {result.sources}, served it to "
        "other apps, rolled back"
    )


def _git_in_use(window) -> str:
    """The git the memory's history runs; a packaged app carrying one must use it (an app
    started from Finder finds only /usr/bin/git, which needs the Command Line Tools)."""
    repo = window.session.workflow.versioned.repo
    if repo is None:
        raise RuntimeError(f"no history: {window.session.history_message()}")
    bundled = bundled_git()
    if bundled is not None and os.path.realpath(repo.executable) != os.path.realpath(bundled):
        raise RuntimeError(f"the bundled git ({bundled}) was not used, but {repo.executable}")
    return repo.executable + (" (bundled with the app)" if bundled else "")


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
