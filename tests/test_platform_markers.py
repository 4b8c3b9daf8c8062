"""The suite runs on Windows and macOS too: tests needing Linux or POSIX are skipped there
with their reason, never failed."""

from __future__ import annotations

import pytest

from tests import conftest


class FakeItem:
    def __init__(self, *markers: pytest.MarkDecorator) -> None:
        self.markers = {m.name: m.mark for m in markers}
        self.added: list[pytest.Mark] = []

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.markers.get(name)

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.added.append(marker.mark)


@pytest.mark.parametrize(
    ("platform", "os_name", "skipped"),
    [("linux", "posix", []), ("darwin", "posix", ["mounts"]), ("win32", "nt", ["mounts", "links"])],
)
def test_platform_markers_skip_with_their_reason(
    monkeypatch, platform: str, os_name: str, skipped: list[str]
) -> None:
    monkeypatch.setattr(conftest.sys, "platform", platform)
    monkeypatch.setattr(conftest.os, "name", os_name)
    items = {
        "mounts": FakeItem(pytest.mark.linux_only("mounts")),
        "links": FakeItem(pytest.mark.posix_only("links")),
        "plain": FakeItem(),
    }
    conftest.pytest_collection_modifyitems(None, list(items.values()))  # type: ignore[arg-type]
    reasons = {name: [m.kwargs["reason"] for m in item.added] for name, item in items.items()}
    assert [name for name, r in reasons.items() if r] == skipped
    assert all(reasons[name] == [name] for name in skipped)
