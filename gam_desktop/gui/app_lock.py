"""One window per memory: a lock file in the memory's .gam folder, held for as long as a
window has the memory open (another window, or another app instance, is refused), and a
door to that window: a local socket named after the memory, on which a second start of the
app on the same memory asks the window to come to the front, and then exits."""

from __future__ import annotations

import enum
import getpass
import hashlib
import logging
import os
from pathlib import Path

from filelock import FileLock, Timeout
from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from gam_desktop.engine.api import APP_DIR, APP_LOCK_FILE, MemoryFolder

log = logging.getLogger(__name__)
RAISED = b"raised\n"  # the window's answer: it came to the front
ANSWER_WAIT_MS = 5000  # a window whose GUI thread is busy answers late; a hung one never


class FolderInUse(RuntimeError):
    """The memory is open in another GAM Desktop window."""


class Elsewhere(enum.Enum):
    """Where a memory is open, as a new start of the app finds out."""

    NOT_OPEN = "not open in another window"
    RAISED = "open in another window, which came to the front"
    NOT_ANSWERING = "open in another window, which did not answer"


def door_name(root: Path) -> str:
    """The local socket's name for `root`: the same in every process of this user (a hash of
    the user and the folder; a socket path of the folder's own could be too long, or on a
    file system without sockets)."""
    who = str(os.getuid()) if hasattr(os, "getuid") else getpass.getuser()
    where = os.path.normcase(str(root.resolve()))
    return "gam-desktop-" + hashlib.sha256(f"{who}\0{where}".encode()).hexdigest()[:24]


class AppLock(QObject):
    """The lock of the memory this window has open, if any, and its door.

    Signals: raise_requested() when another start of the app asked for this memory."""

    raise_requested = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.lock: FileLock | None = None
        self.door = QLocalServer(self)
        self.door.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.door.newConnection.connect(self._knocked)

    def hold(self, folder: MemoryFolder) -> None:
        """Take `folder`'s lock (and let go of the previous memory's); FolderInUse when
        another window holds it, OSError when the folder cannot be written."""
        folder.root.mkdir(parents=True, exist_ok=True)
        (folder.root / APP_DIR).mkdir(exist_ok=True)
        path = folder.root / APP_LOCK_FILE
        if self.lock is not None and Path(self.lock.lock_file) == path:
            return  # this window holds it already (re-opening after Settings, say)
        lock = FileLock(path, thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout as exc:
            raise FolderInUse(
                f"{folder.root} is open in another GAM Desktop window. Switch "
                "to that window, or close it first."
            ) from exc
        if self.lock is not None:
            self.lock.release()
        self.lock = lock
        self._open_door(folder.root)

    def release(self) -> None:
        self.door.close()
        if self.lock is not None:
            self.lock.release()
            self.lock = None  # released: holding the same memory again takes it again

    def _open_door(self, root: Path) -> None:
        self.door.close()
        name = door_name(root)
        # A socket left by a window that crashed: the lock is ours, so nobody listens on it.
        QLocalServer.removeServer(name)
        if not self.door.listen(name):  # the app works without: a second start says so
            log.warning("no door for %s: %s", root, self.door.errorString())

    def _knocked(self) -> None:
        while self.door.hasPendingConnections():
            socket = self.door.nextPendingConnection()
            socket.disconnected.connect(socket.deleteLater)
            socket.write(RAISED)
            socket.disconnectFromServer()  # once the answer is written
        self.raise_requested.emit()


def ask_to_raise(root: Path, wait_ms: int = ANSWER_WAIT_MS) -> Elsewhere:
    """Ask the window that has `root` open, if any, to come to the front."""
    socket = QLocalSocket()
    socket.connectToServer(door_name(root))
    if socket.waitForConnected(wait_ms):
        if not socket.bytesAvailable():
            socket.waitForReadyRead(wait_ms)
        answered = bytes(socket.readAll().data()).startswith(RAISED)
        socket.abort()
        if answered:
            return Elsewhere.RAISED
    return Elsewhere.NOT_ANSWERING if held_elsewhere(root) else Elsewhere.NOT_OPEN


def held_elsewhere(root: Path) -> bool:
    """Whether another window holds `root`'s lock (without taking it)."""
    path = root / APP_LOCK_FILE
    if not path.is_file():
        return False
    lock = FileLock(path, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:  # a folder this user cannot write: no window of theirs has it open
        return False
    lock.release()
    return False
