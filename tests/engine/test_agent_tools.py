"""The agent's tools (spec 11.3) and the sandbox around them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gam_desktop.engine.retrieval.search import index_size, tokenize
from gam_desktop.engine.retrieval.tools import GREP_LIMIT, MemoryTools


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "models").mkdir(parents=True)
    (root / "history").mkdir()
    (root / "README.md").write_text("# Memory\n\nAbout language models.\n")
    (root / "bert.md").write_text("---\ntitle: bert\n---\n\nBERT is an encoder from 2018.\n")
    (root / "gpt.md").write_text("---\ntitle: gpt\n---\n\nGPT is a decoder-only model.\n")
    (root / "models/attention.md").write_text(
        "Attention compares queries and keys.\nBert uses it too.\n"
    )
    (root / "history/alexnet.md").write_text("AlexNet won ImageNet in 2012.\n")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]\n")
    (root / ".gam").mkdir()
    (root / ".gam/secret.md").write_text("BERT secret in app folder\n")
    return root


def test_ls_lists_every_item_with_type_and_size(memory: Path) -> None:
    result = MemoryTools(memory).ls("/")
    rows = [line.split("\t") for line in result.text.splitlines()]
    assert rows == [
        ["dir", "history/", "1 items"],
        ["dir", "models/", "1 items"],
        ["file", "README.md", f"{(memory / 'README.md').stat().st_size} bytes"],
        ["file", "bert.md", f"{(memory / 'bert.md').stat().st_size} bytes"],
        ["file", "gpt.md", f"{(memory / 'gpt.md').stat().st_size} bytes"],
    ]
    assert result.explored == ["/"]
    assert MemoryTools(memory).ls("models").explored == ["models"]


def test_cat_returns_exact_content(memory: Path) -> None:
    content = "---\ntitle: bert\n---\n\nBERT is an encoder from 2018.\n"
    result = MemoryTools(memory).cat("bert.md")
    assert result.text == content and result.read == ["bert.md"]
    assert MemoryTools(memory).cat("/bert.md").text == content


def test_grep_finds_only_matching_files_with_line_numbers(memory: Path) -> None:
    result = MemoryTools(memory).grep("bert")
    assert result.text.splitlines() == [
        "bert.md:2: title: bert",
        "bert.md:5: BERT is an encoder from 2018.",
        "models/attention.md:2: Bert uses it too.",
    ]
    assert result.matched == ["bert.md", "models/attention.md"]  # never .gam/secret.md
    scoped = MemoryTools(memory).grep("BERT", path="models")
    assert scoped.matched == ["models/attention.md"]
    assert "no matches" in MemoryTools(memory).grep("transformer").text


def test_grep_caps_results_and_says_so(memory: Path) -> None:
    (memory / "many.md").write_text("needle\n" * (GREP_LIMIT + 10))
    result = MemoryTools(memory).grep("needle")
    lines = result.text.splitlines()
    assert len(lines) == GREP_LIMIT + 1
    assert lines[-1] == (
        f"(showing the first {GREP_LIMIT} matching lines; 1 files match in "
        "all; narrow the pattern or the path)"
    )


@pytest.mark.parametrize(
    "path",
    [
        "../",
        "../outside.md",
        "/etc/passwd",
        "models/../../x",
        ".git/config",
        ".gam/secret.md",
        "~/notes.md",
        "C:/x.md",
    ],
)
def test_escapes_are_refused_with_a_clear_error(memory: Path, path: str) -> None:
    (memory.parent / "outside.md").write_text("TOPSECRET-CONTENT")
    tools = MemoryTools(memory)
    for name, args in (
        ("cat", {"file": path}),
        ("ls", {"path": path}),
        ("grep", {"pattern": "x", "path": path}),
    ):
        result = tools.run(name, args)
        assert result.error and result.text.startswith("error:")
        assert "TOPSECRET" not in result.text and "app folder" not in result.text
        assert "[core]" not in result.text


def test_symlink_out_of_the_folder_is_refused_and_hidden(memory: Path, tmp_path: Path) -> None:
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "diary.md").write_text("my secret diary\n")
    os.symlink(outside, memory / "link")
    os.symlink(outside / "diary.md", memory / "diary.md")
    tools = MemoryTools(memory)
    assert tools.run("cat", {"file": "diary.md"}).error
    assert tools.run("cat", {"file": "link/diary.md"}).error
    assert tools.run("ls", {"path": "link"}).error
    assert "diary" not in tools.ls("/").text and "link" not in tools.ls("/").text
    assert "no matches" in tools.grep("secret diary").text


def test_symlink_inside_the_folder_is_allowed(memory: Path) -> None:
    os.symlink(memory / "bert.md", memory / "models/bert_link.md")
    assert "encoder" in MemoryTools(memory).cat("models/bert_link.md").text


def test_unknown_tools_and_bad_arguments_are_errors(memory: Path) -> None:
    tools = MemoryTools(memory)
    assert tools.run("rm", {"path": "/"}).error
    assert tools.run("cat", {"path": "bert.md"}).error  # wrong argument name
    assert tools.run("cat", {"file": "models"}).error  # a directory
    assert tools.run("grep", {"pattern": "  "}).error


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("cat", {"file": 5}),
        ("ls", {"path": ["a"]}),
        ("grep", {"pattern": 7}),
        ("bm25_search", {"query": "bert", "top_k": "abc"}),
        ("bm25_search", {"query": {"q": "bert"}}),
    ],
)
def test_arguments_of_the_wrong_type_come_back_as_errors(
    memory: Path, name: str, arguments: dict
) -> None:
    """A small model's {"file": 5} crashed the question (AttributeError in the sandbox, a
    ValueError from int("abc")): it is a mistake to tell the model, as any other."""
    result = MemoryTools(memory).run(name, arguments)
    assert result.error and result.text.startswith(f"error: bad arguments for {name}: ")


def test_cat_reads_no_more_of_a_huge_file_than_it_shows(memory: Path, monkeypatch) -> None:
    """A 400 MB note another program wrote was read whole (800 MB of memory) to show its
    first 60,000 characters."""
    from gam_desktop.engine.retrieval import tools

    monkeypatch.setattr(tools, "CAT_LIMIT", 100)
    (memory / "huge.md").write_text("word " * 100_000)
    read: list[int] = []
    opened = Path.open

    def counting_open(self: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        handle = opened(self, *args, **kwargs)
        original_read = handle.read

        def read_some(size: int = -1) -> str:
            text = original_read(size)
            read.append(len(text))
            return text

        handle.read = read_some
        return handle

    monkeypatch.setattr(Path, "open", counting_open)
    result = MemoryTools(memory).cat("huge.md")
    assert result.text.startswith("word word") and "[truncated: the file has 500,000 bytes" in (
        result.text
    )
    assert sum(read) <= 101


def test_bm25_ranks_by_relevance_and_reuses_its_index(memory: Path) -> None:
    for i in range(50):
        topic = "transformers attention heads" if i % 10 == 0 else f"gardening tomatoes {i}"
        (memory / f"note_{i}.md").write_text(f"Note {i} about {topic}.\n")
    tools = MemoryTools(memory)
    first = tools.bm25_search("attention heads", top_k=5)
    assert first.matched[0].startswith(("note_", "models/attention"))
    assert set(first.matched[:5]) >= {"note_0.md", "note_10.md", "note_20.md"}
    every = len(tools.corpus.files)
    assert tools.index.indexed == every and index_size(memory) > 0
    tools.bm25_search("tomatoes")
    assert tools.index.indexed == every  # nothing changed: nothing read again
    (memory / "note_3.md").write_text("Note 3 is now about attention heads in detail.\n")
    tools.corpus.refresh()  # what the next question (or the folder watcher) does
    again = tools.bm25_search("attention heads", top_k=10)
    assert tools.index.indexed == every + 1 and "note_3.md" in again.matched  # that file only


def test_bm25_index_survives_a_new_process(memory: Path) -> None:
    MemoryTools(memory).bm25_search("encoder")
    (memory / "gpt.md").write_text("---\ntitle: gpt\n---\n\nGPT is an encoder too now.\n")
    fresh = MemoryTools(memory)
    assert fresh.bm25_search("encoder").matched == ["bert.md", "gpt.md"]
    assert fresh.index.indexed == 1  # the index comes from .gam/cache: only gpt.md re-read


def test_cjk_queries_match_japanese_text(memory: Path) -> None:
    (memory / "ja.md").write_text("ニューラルネットワークは勾配降下法で学習します。\n")
    (memory / "other.md").write_text("ガーデニングとトマトの育て方。\n")
    assert tokenize("勾配降下") == ["勾配", "配降", "降下"]
    result = MemoryTools(memory).bm25_search("勾配降下法")
    assert result.matched[0] == "ja.md"


@pytest.mark.parametrize("alias", [".GIT", ".Git", ".git.", ".gam "])
def test_private_folders_are_refused_under_any_case_or_windows_alias(
    memory: Path, alias: str
) -> None:
    """On APFS and NTFS `.GIT/config` and `.git./config` open `.git/config`. Here (a
    case-sensitive file system) the alias is made a real folder holding the secret: the
    name alone must refuse it."""
    (memory / alias).mkdir()
    (memory / alias / "config").write_text("[core] TOPSECRET\n")
    tools = MemoryTools(memory)
    result = tools.run("cat", {"file": f"{alias}/config"})
    assert result.error and "private" in result.text and "TOPSECRET" not in result.text


def test_a_private_folder_reached_under_another_name_is_refused(memory: Path) -> None:
    """Windows' short name GIT~1 (or a mount) reaches `.git` under a name that says
    nothing: refused by identity. Simulated with a bind mount (root on Linux only)."""
    alias = memory / "GIT~1"
    alias.mkdir()
    mounted = subprocess.run(
        ["mount", "--bind", str(memory / ".git"), str(alias)], capture_output=True, timeout=30
    )
    if mounted.returncode != 0:
        pytest.skip("needs a bind mount (root on Linux) to give .git a second name")
    try:
        result = MemoryTools(memory).run("cat", {"file": "GIT~1/config"})
        assert result.error and "private" in result.text and "[core]" not in result.text
    finally:
        subprocess.run(["umount", str(alias)], capture_output=True, timeout=30)


def test_a_word_in_half_the_files_is_still_found(tmp_path: Path) -> None:
    """rank-bm25's IDF is zero for a word in half the files: in a memory of one document
    (its memory and its original text) search found nothing for the memory's own words."""
    from gam_desktop.engine.retrieval.corpus import Corpus
    from gam_desktop.engine.retrieval.search import SearchIndex

    (tmp_path / "a.md").write_text("---\ntitle: a\n---\n\nThe quokka checklist is mandatory.\n")
    (tmp_path / "b.md").write_text("---\ntitle: b\n---\n\nRotations hand over on Monday.\n")
    corpus = Corpus(tmp_path)
    corpus.refresh()
    hits = SearchIndex(corpus).search("quokka checklist")
    assert [h.path for h in hits] == ["a.md"]


def test_grep_in_one_file_searches_it_and_its_original_text(memory: Path) -> None:
    """Small models grep the file they mean to read (the 1.5B model asked grep("10 days",
    "<memory>.md") four times and got "is a file, not a directory" each time)."""
    source = "On-call rotations last 10 days. Swaps are agreed in the channel.\n"
    digest = "ab" * 32
    (memory / ".gam/sources").mkdir(parents=True)
    (memory / f".gam/sources/{digest}.txt").write_text(source)
    (memory / "models/rotation.md").write_text(
        f"---\ntitle: rotation\nsource_hash: {digest}\nspan: [0, {len(source)}]\n---\n\n"
        "Rotations are long.\n"
    )
    tools = MemoryTools(memory)
    result = tools.grep("10 days", path="models/rotation.md")
    assert not result.error
    assert result.text.splitlines() == [
        "models/rotation.md (original text):2: On-call rotations last 10 days. Swaps are "
        "agreed in the channel."
    ]
    assert result.matched == ["models/rotation.md"]
    assert tools.grep("bert", path="bert.md").matched == ["bert.md"]  # that file only
    assert "no matches" in tools.grep("decoder", path="bert.md").text  # gpt.md's word
    denied = tools.run("grep", {"pattern": "BERT", "path": ".gam/secret.md"})
    assert denied.error and "private" in denied.text
