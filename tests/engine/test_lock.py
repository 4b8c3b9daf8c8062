"""One writer per memory folder, across processes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.lock import FolderBusyError, writer_lock

HOLD = """
import sys, time
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.lock import writer_lock
with writer_lock(MemoryFolder(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold_lock(folder: Path, seconds: float) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "locked"
    return process


def test_second_writer_in_another_process_gets_a_clear_error(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path, 30)
    try:
        with (
            pytest.raises(FolderBusyError, match="another GAM operation"),
            writer_lock(MemoryFolder(tmp_path), timeout=0.3),
        ):
            pass
    finally:
        holder.kill()
        holder.wait(10)


def test_second_writer_waits_and_is_told_so(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path, 1.0)
    waited: list[bool] = []
    acquired = False
    try:
        with writer_lock(MemoryFolder(tmp_path), timeout=30, on_wait=lambda: waited.append(True)):
            acquired = True
    finally:
        holder.wait(10)
    assert waited == [True] and acquired  # it had to wait, then it got in


def test_lock_is_released_when_the_holder_dies(tmp_path: Path) -> None:
    holder = hold_lock(tmp_path, 60)
    holder.kill()
    holder.wait(10)
    started = time.monotonic()
    with writer_lock(MemoryFolder(tmp_path), timeout=5):
        pass
    assert time.monotonic() - started < 5
