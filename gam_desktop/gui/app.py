"""Starting the desktop app: logging, settings, the window, the first memory."""

from __future__ import annotations

import argparse
import functools
import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from gam_desktop import __version__, appdirs, keystore
from gam_desktop.engine.api import RedactingFormatter, remember_capabilities_in, warm_up_llm
from gam_desktop.gui import display_libraries, selftest
from gam_desktop.gui.app_lock import Elsewhere, ask_to_raise
from gam_desktop.gui.application import log_folder, make_app, set_identity
from gam_desktop.gui.main_window import MainWindow
from gam_desktop.gui.settings import clear_broken_lock, load
from gam_desktop.gui.workers import call_in_daemon

log = logging.getLogger("gam_desktop")


def setup_logging() -> Path:
    folder = log_folder()
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        folder / "gam-desktop.log", maxBytes=1_000_000, backupCount=3, encoding="utf-8"
    )
    # a last line of defence: no key this process sends reaches the file, in a message or a
    # traceback (errors are redacted where they are made: engine/llm/client.py)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for noisy in ("openai", "httpx", "httpcore", "urllib3", "git", "watchdog"):
        logging.getLogger(noisy).setLevel(logging.WARNING)  # they may log headers
    return folder


def warm_up() -> None:
    """Import the LLM SDK and load the tokenizer early, on a worker thread while the person
    looks at the window, so the first build does not pay for it on its critical path."""
    warm_up_llm()


def say_shown(app: QApplication) -> None:
    """For start-up measurements: the window is shown, after so much CPU time (on a busy
    machine the wall time says more about the other programs); then quit."""
    print(f"window shown (CPU {time.process_time():.2f} s)", flush=True)
    app.quit()


def start_in_background(window: MainWindow, endpoint: str, embedding_endpoint: str = "") -> None:
    """Read the key from the keychain (a daemon thread, never a QThread: a locked keyring
    can hang), and the embedding endpoint's when it has one of its own; warm up the LLM
    SDK and the tokenizer."""
    call_in_daemon(
        lambda: keystore.get_key(endpoint),
        window.set_api_key,
        lambda error: log.warning("keychain: %s", error),
    )
    if embedding_endpoint:
        call_in_daemon(
            lambda: keystore.get_key(embedding_endpoint),
            window.set_embedding_key,
            lambda error: log.warning("keychain: %s", error),
        )
    window.tasks.start("warm-up", lambda w, c: warm_up(), ends_by_itself=True)


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(
        prog="gam-desktop",
        description="GAM Desktop",
        epilog="gam-desktop mcp --help, gam-desktop serve --help: the memory for other apps "
        "(gam-mcp and gam-serve, run from this executable)",
    )
    parse.add_argument("folder", nargs="?", help="a memory folder to open")
    parse.add_argument(
        "--self-test",
        action="store_true",
        help="build, ask and roll back a sample memory offscreen; exit 0 if fine",
    )
    parse.add_argument(
        "--self-test-log",
        metavar="FILE",
        type=Path,
        help="also write what --self-test says to FILE (a windowed build has no console)",
    )
    parse.add_argument("--version", action="version", version=__version__)
    return parse


def defer_to_other_window(
    root: Path, tell: Callable[[str, str], object] | None = None
) -> int | None:
    """The exit code of this start when another GAM Desktop window has `root` open: it was
    asked to come to the front and did (0), or did not answer (1, once `tell` has said so);
    None when no other window has it (this start goes on)."""
    answer = ask_to_raise(root)
    if answer is Elsewhere.NOT_OPEN:
        return None
    if answer is Elsewhere.RAISED:
        log.info("%s is open in another window, which came to the front", root)
        if sys.stdout is not None:  # None in a windowed build on Windows
            print(f"{root} is already open in GAM Desktop: its window was brought to the front.")
        return 0
    log.warning("%s is open in another window, which did not answer", root)
    (tell or _warn)(
        "This memory is already open",
        f"{root} is open in another GAM Desktop window, which did not answer when asked to "
        "come to the front (it may be busy, or have stopped responding). Switch to that "
        "window yourself, or close it, then open the memory again.",
    )
    return 1


def _warn(title: str, text: str) -> None:
    QMessageBox.warning(None, title, text)


def say_missing_display_libraries() -> None:
    """On Linux, the system packages Qt's X11 plugin lacks, if any, on stderr and in the
    log (gui/display_libraries.py)."""
    problem = display_libraries.xcb_problem()
    if problem is None:
        return
    log.error("%s", problem)
    if sys.stderr is not None:
        print(problem, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv if argv is not None else sys.argv[1:])
    set_identity()
    if args.self_test:
        return selftest.run(args.self_test_log)
    logs = setup_logging()
    log.info("GAM Desktop %s starting; logs in %s", __version__, logs)
    say_missing_display_libraries()  # before Qt, which would abort naming none of them
    remember_capabilities_in(appdirs.capabilities_file())  # what each server supports
    app = make_app(sys.argv[:1])
    store = QSettings()
    if clear_broken_lock(store):
        log.warning("removed a broken settings lock file (left by a crash)")
    prefs = load(store)
    folder = args.folder or next((f for f in prefs.recent_folders if Path(f).is_dir()), None)
    if folder:  # open in another window already: that one comes to the front instead
        code = defer_to_other_window(Path(folder))
        if code is not None:
            app.shutdown()
            return code
    window = MainWindow(prefs, store, api_key=os.environ.get("OPENAI_API_KEY"))
    window.show()
    # The keychain and the warm-up start once the window is up: their imports on other
    # threads would take the GIL from the GUI thread while it opens the memory.
    QTimer.singleShot(
        0,
        window,
        functools.partial(
            start_in_background, window, prefs.base_url, prefs.own_embedding_endpoint()
        ),
    )
    if os.environ.get("GAM_EXIT_WHEN_SHOWN"):  # for start-up measurements: bench_cold_start
        if folder:
            window.open_memory(Path(folder))
        QTimer.singleShot(0, window, lambda: say_shown(app))
    elif folder:
        window.open_memory(Path(folder))
    else:
        window.welcome()
    code = app.exec()
    # However the loop ended, no task's thread may be deleted while it runs: that aborts
    # the process ("QThread: Destroyed while thread … is still running", exit 134).
    window.tasks.cancel_all()
    window.tasks.wait_all()
    del window
    # Delete every Qt object while Python is still whole: PySide objects alive at
    # finalization can crash the interpreter ("none_dealloc"), turning exit 0 into 134.
    app.shutdown()
    return code
