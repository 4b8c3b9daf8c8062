"""gam-serve's read path: recency blended with relevance, near-duplicates removed (MMR),
the passages injected as a system message with their paths."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gam_desktop.engine.models import GamMeta
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.serve.retrieval import PREAMBLE, ReadOptions, inject, passages, query_of

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def memory(root: Path, files: dict[str, str]) -> MemoryTools:
    root.mkdir()
    (root / ".gam_meta.json").write_text(GamMeta().model_dump_json())
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return MemoryTools(root)


def dated(when: str, body: str) -> str:
    return f"---\ntitle: note\nupdated: {when}\n---\n{body}\n"


def test_a_recent_passage_outranks_a_slightly_better_old_one(tmp_path: Path) -> None:
    tools = memory(
        tmp_path / "m",
        {
            "notes/old.md": dated("2020-01-01T00:00:00+00:00", "Boiler: Nordheat."),
            "notes/new.md": dated("2026-10-30T00:00:00+00:00", "Boiler serviced by Warmco."),
        },
    )
    options = ReadOptions(top_k=2)
    assert [p.path for p in passages(tools, "boiler", options, NOW)] == [
        "notes/new.md",
        "notes/old.md",
    ]
    timeless = ReadOptions(top_k=2, recency_weight=0.0)
    assert passages(tools, "boiler", timeless, NOW)[0].path == "notes/old.md"


def test_near_duplicates_give_way_to_a_different_passage(tmp_path: Path) -> None:
    same = "The user likes green apples from the market on Saturdays."
    tools = memory(
        tmp_path / "m",
        {
            "a/apples.md": same,
            "a/apples_again.md": same + " Really.",
            "b/pears.md": "The user likes pears and green apples from the market stall in "
            "the town square.",
            "c/other.md": "Nothing about fruit here at all.",
        },
    )
    chosen = [p.path for p in passages(tools, "green apples market", ReadOptions(top_k=2), NOW)]
    assert chosen == ["a/apples.md", "b/pears.md"]
    plain = ReadOptions(top_k=2, mmr_lambda=1.0)  # relevance alone keeps both copies
    assert {p.path for p in passages(tools, "green apples market", plain, NOW)} == {
        "a/apples.md",
        "a/apples_again.md",
    }


def test_injection_names_each_path_and_keeps_the_clients_system_message(tmp_path: Path) -> None:
    tools = memory(tmp_path / "m", {"facts/f1.md": dated("2026-10-01", "The user lives in Porto.")})
    messages = [{"role": "user", "content": [{"type": "text", "text": "Where do I live?"}]}]
    assert query_of(messages) == "Where do I live?"
    found = passages(tools, "where do I live Porto", ReadOptions(), NOW)
    (system, user) = inject(messages, found)
    assert system["role"] == "system" and system["content"].startswith(PREAMBLE)
    assert (
        "### facts/f1.md (a fact the user stated on Thursday 1 October 2026)" in system["content"]
    )
    assert "Stated on Thursday 1 October 2026: The user lives in Porto." in system["content"]
    assert user == messages[0]
    assert inject(messages, []) == messages  # nothing found: the request as it was
