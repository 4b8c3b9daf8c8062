"""The Qt binding keeps Python's reference counts: PySide6 6.12.0 on Python 3.11 dropped a
reference to None on every call returning nothing and to True on every signal emitted,
and the app aborted ("bool_dealloc: deallocating True") after a few thousand, which a
find box typing over a large tree reaches in seconds. pyproject.toml excludes it; this
test fails on any binding that does it again."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    happened = Signal()


def test_calls_returning_nothing_keep_none_alive() -> None:
    thing = QObject()
    before = sys.getrefcount(None)
    for _ in range(500):
        thing.setObjectName("x")
    assert sys.getrefcount(None) - before > -50  # a drop of one per call is the bug


def test_signals_keep_true_alive() -> None:
    emitter = _Emitter()
    heard = []
    emitter.happened.connect(lambda: heard.append(1))
    before = sys.getrefcount(True)
    for _ in range(200):
        emitter.happened.emit()
    assert len(heard) == 200
    assert sys.getrefcount(True) - before > -20
