"""Desktop benchmarks (issue 5). Prints figures; asserts nothing.

    .venv/bin/python tests/benchmarks/bench_gui.py [--memories 10000] [--chunks 100]

1. Peak memory of a new process that opened a memory of 10,000 files and expanded its whole
   tree (the cold start itself: bench_cold_start.py, the real `python -m gam_desktop`).
2. The longest stall of the GUI thread during a 100-chunk build: a 10 ms QTimer
   heartbeat; the largest gap between two beats minus 10 ms.
3. Peak memory (max RSS) of the process that held the 10,000-memory folder open.
4. The longest stall of the GUI thread while another program edits 1,000 files of that
   10,000-memory folder at once (the watcher's event storm, the commit, the views
   refreshed), from the first write until the window has shown the edit.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

OPENED = r"""
import sys
import resource
from pathlib import Path
from PySide6.QtCore import QSettings
from gam_desktop.gui.app import make_app
from gam_desktop.gui.main_window import MainWindow
from gam_desktop.gui.settings import Preferences
app = make_app(sys.argv[:1])
store = QSettings(sys.argv[2], QSettings.Format.IniFormat)
window = MainWindow(Preferences(), store)
window.show()
window.open_memory(Path(sys.argv[1]))
app.processEvents()
window.tree.expandAll()
app.processEvents()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{window.tree.memory_count()} {peak:.0f}")
window.close()
"""


def peak_memory(memory: Path, settings: Path) -> tuple[int, float]:
    """(memories shown, peak RSS in MiB) of a new process that opened `memory`."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", OPENED, str(memory), str(settings)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    count, peak = out.stdout.split()[-2:]
    return int(count), float(peak)


def stall_during_build(chunks: int, latency_ms: float) -> tuple[float, float, int]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings

    from gam_desktop.gui.app import make_app
    from gam_desktop.gui.main_window import MainWindow
    from gam_desktop.gui.settings import Preferences
    from tests.benchmarks.bench_build import external_server
    from tests.documents import topic_document

    app = make_app(sys.argv[:1])
    # The server in its own process, as a provider is: in-process it would compete with the
    # GUI thread for the GIL and inflate the stall.
    with tempfile.TemporaryDirectory() as tmp, external_server(latency_ms) as base_url:
        document = Path(tmp) / "big.md"
        topics = ["python", "rust", "javascript", "haskell", "docker", "git"]
        counts = {
            t: chunks // len(topics) + (i < chunks % len(topics)) for i, t in enumerate(topics)
        }
        document.write_text(topic_document(counts))
        prefs = Preferences(
            provider="Custom",
            base_url=base_url,
            builder_model="scripted",
            chat_model="scripted",
            min_tokens=20,
            max_tokens=200,
            workers=8,
        )
        window = MainWindow(prefs, QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        window.confirm = lambda *_args, **_kwargs: True
        window.tell = lambda *_: None
        window.show()
        from gam_desktop.gui.app import warm_up

        warm_up()  # as the app does at start-up, on a worker thread, before any build
        window.open_memory(Path(tmp) / "memory")
        heartbeat = Heartbeat()
        started = time.perf_counter()
        window.add_paths([document])
        pump(app, lambda: not window.tasks.running() and window.tree.memory_count() > 0)
        elapsed = time.perf_counter() - started
        pump(app, seconds=0.5)  # the refresh after the build counts too
        stall = heartbeat.stall()
        if heartbeat.late:
            print("GUI thread while late:\n" + heartbeat.why(), file=sys.stderr)
        built = window.tree.memory_count()
        window.close()
    return stall, elapsed, built


def pump(app, until: Callable[[], bool] = lambda: False, seconds: float | None = None) -> None:
    """Run the event loop (as the person's session would) until `until()` holds, or for
    `seconds` at most (forever when None)."""
    deadline = None if seconds is None else time.perf_counter() + seconds
    while not until() and (deadline is None or time.perf_counter() < deadline):
        app.processEvents()
        time.sleep(0.001)


class Heartbeat:
    """A 10 ms QTimer on the GUI thread; the largest gap between two beats, minus 10 ms,
    is the longest time the thread could not answer the person. With GAM_BENCH_WHY=1, a
    thread samples the GUI thread's stack whenever a beat is 30 ms late, and `why()` says
    where it stood (the project's own frames, most often seen first)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QElapsedTimer, QTimer

        self.clock, self.gaps = QElapsedTimer(), [0]
        self.clock.start()
        self.last = self.clock.elapsed()
        self.timer = QTimer()
        self.timer.timeout.connect(self.beat)
        self.timer.start(10)
        self.late: collections.Counter[str] = collections.Counter()
        self._beaten = time.perf_counter()
        self._sampling = os.environ.get("GAM_BENCH_WHY") == "1"
        if self._sampling:
            gui = threading.get_ident()
            threading.Thread(target=self._sample, args=(gui,), daemon=True).start()

    def beat(self) -> None:
        now = self.clock.elapsed()
        self.gaps.append(now - self.last)
        self.last = now
        self._beaten = time.perf_counter()

    def _sample(self, gui: int) -> None:
        while self._sampling:
            time.sleep(0.002)
            if time.perf_counter() - self._beaten < 0.030:
                continue
            frame = sys._current_frames().get(gui)
            ours = [
                f"{Path(f.filename).name}:{f.name}"
                for f in traceback.extract_stack(frame)
                if "gam_desktop" in f.filename
            ]
            self.late[" > ".join(ours[-4:]) or "(Qt or the library)"] += 1

    def why(self) -> str:
        """Where the GUI thread stood while late (2 ms samples), most often first."""
        return "\n".join(f"  {n * 2:5d} ms  {where}" for where, n in self.late.most_common(8))

    def stall(self) -> float:
        self.timer.stop()
        self._sampling = False
        return max(self.gaps) - 10


def stall_during_outside_edit(memory: Path, files: int) -> tuple[float, float, str]:
    """Another program rewrites `files` memories; the window (watcher, commit, refresh)
    must not freeze meanwhile."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings

    from gam_desktop.gui.app import make_app
    from gam_desktop.gui.main_window import MainWindow
    from gam_desktop.gui.settings import Preferences

    app = make_app(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(
            Preferences(), QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat)
        )
        window.confirm = lambda *_args, **_kwargs: True
        window.tell = lambda *_: None
        window.show()
        window.open_memory(memory)
        statuses: list[str] = []
        window.session.status.connect(statuses.append)
        pump(app, seconds=2)  # the opening's own refreshes first
        victims = sorted(p for p in memory.rglob("*.md") if p.name != "README.md")[:files]
        editor = (
            "import sys\n"
            "for p in sys.argv[1:]:\n"
            "    open(p, 'a', encoding='utf-8').write('\\nEdited by another program.\\n')\n"
        )
        heartbeat = Heartbeat()
        started = time.perf_counter()
        subprocess.Popen([sys.executable, "-c", editor, *map(str, victims)])
        pump(app, lambda: any("changed outside" in s for s in statuses), seconds=300)
        elapsed = time.perf_counter() - started
        pump(app, seconds=1.0)  # the refresh after the status counts too
        stall = heartbeat.stall()
        if heartbeat.late:
            print("GUI thread while late:\n" + heartbeat.why(), file=sys.stderr)
        said = next((s for s in statuses if "changed outside" in s), "(nothing seen)")
        window.close()
    return stall, elapsed, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--latency-ms", type=float, default=50)
    parser.add_argument("--edited", type=int, default=1000)
    args = parser.parse_args()
    from tests.benchmarks.bench_retrieval import generate

    with tempfile.TemporaryDirectory() as tmp:
        memory = Path(tmp) / "memory"
        memory.mkdir()
        generate(memory, args.memories, 200)
        subprocess.run(["git", "init", "-q", str(memory)], check=True)
        count, peak = peak_memory(memory, Path(tmp) / "s.ini")
        print(f"peak memory with {count} memories open and fully expanded: {peak:.0f} MiB")
        stall, elapsed, said = stall_during_outside_edit(memory, args.edited)
        print(
            f"{args.edited} files edited by another program: longest GUI-thread stall "
            f"{stall:.0f} ms beyond the 10 ms beat; shown after {elapsed:.1f} s ({said!r})"
        )
    stall, elapsed, built = stall_during_build(args.chunks, args.latency_ms)
    print(
        f"{args.chunks}-chunk build ({built} memories, {args.latency_ms:.0f} ms latency, "
        f"{elapsed:.1f} s): longest GUI-thread stall {stall:.0f} ms beyond the 10 ms beat"
    )


if __name__ == "__main__":
    main()
