"""Hybrid search (issue 35): BM25 fused by reciprocal rank with the nearest texts by
meaning, from the scripted server's fake `/v1/embeddings`; derived, incremental,
fail-soft (BM25 alone, exactly, and one notice)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from gam_desktop.engine.llm import LLMSettings, embeddings
from gam_desktop.engine.llm.embeddings import EmbeddingSettings
from gam_desktop.engine.retrieval import vectors
from gam_desktop.engine.retrieval.corpus import ORIGINAL
from gam_desktop.engine.retrieval.search import CACHE_FILE
from gam_desktop.engine.retrieval.tools import MemoryTools
from gam_desktop.engine.retrieval.vectors import fuse, pieces_of
from gam_desktop.engine.store.markdown import render_memory
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests.memories import write_memory

PARAPHRASE = "Where is the automobile kept?"  # no word of garage.md's: BM25 cannot find it
QUERIES = [PARAPHRASE, "transformer attention", "React hooks state", "BERT 2018", "zzzz"]


@pytest.fixture(autouse=True)
def _nothing_found_yet() -> None:
    embeddings.forget_found()  # no test knows what another found on a server (ports recur)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = write_memory(tmp_path / "memory")
    garage = "The car stays in the garage overnight, beside the bicycles."
    (root / "home").mkdir()
    (root / "home" / "garage.md").write_text(render_memory({"title": "garage"}, garage))
    return root


def fake(server: RunningServer, **changes: object) -> EmbeddingSettings:
    values: dict[str, object] = {
        "base_url": server.base_url,
        "model": "fake-embed",
        "api_key": "test-key",
        "timeout": 30,  # (a loaded machine; the failure tests set their own)
        "max_retries": 0,
    }
    return EmbeddingSettings.model_validate({**values, **changes})


def hybrid(root: Path, server: RunningServer, **changes: object) -> MemoryTools:
    return MemoryTools(root, embeddings=fake(server, **changes))


def hits(tools: MemoryTools, query: str, top_k: int = 5) -> list[tuple[str, float]]:
    return [(h.path, h.score) for h in tools.index.search(query, top_k)]


def every_piece(tools: MemoryTools) -> list[str]:
    """The pieces of every text the index holds (memories, originals, READMEs)."""
    store = tools.index._open()
    return [p for key in store.ids for p in pieces_of(key, tools.corpus.text(key) or "")]


# -- fusion --------------------------------------------------------------------------------


def test_reciprocal_rank_fusion_sums_one_over_k_plus_rank() -> None:
    fused = fuse([["a", "b", "c"], ["c", "d", "a"]])
    assert fused == [
        ("a", pytest.approx(1 / 61 + 1 / 63)),
        ("c", pytest.approx(1 / 63 + 1 / 61)),  # the same sum: ties by key
        ("b", pytest.approx(1 / 62)),
        ("d", pytest.approx(1 / 62)),
    ]
    assert [key for key, _ in fuse([["x"], []], k=1)] == ["x"]


def test_a_paraphrase_bm25_misses_is_found_by_meaning(
    folder: Path, llm_server: RunningServer
) -> None:
    assert "home/garage.md" not in [p for p, _ in hits(MemoryTools(folder), PARAPHRASE)]
    tools = hybrid(folder, llm_server)
    assert tools.index.embed_pending() == len(set(every_piece(tools)))
    assert hits(tools, PARAPHRASE)[0][0] == "home/garage.md"
    # what BM25 ranked first and the vectors agree on stays first
    assert hits(tools, "transformer attention")[0][0] == "nlp/transformer_attention.md"
    assert tools.index.notices() == []


def test_a_long_text_is_embedded_in_overlapping_windows_and_scores_by_its_best() -> None:
    words = [f"w{i}" for i in range(500)]
    pieces = pieces_of("notes.md", " ".join(words))
    assert [p.split() for p in pieces] == [words[:200], words[150:350], words[300:]]
    tail = pieces_of("notes.md", " ".join(words[:420]))  # the last window ends at the end
    assert [p.split() for p in tail] == [words[:200], words[150:350], words[220:420]]
    assert pieces_of("short.md", " ".join(words[:220])) == [" ".join(words[:220])]
    memory = render_memory({"title": "Garage", "source_hash": "ab" * 32}, "The car.")
    assert pieces_of("garage.md", memory) == ["Garage The car."]  # no front matter hashes


def test_an_original_is_found_by_its_best_window(folder: Path, llm_server: RunningServer) -> None:
    filler = " ".join(f"filler{i}" for i in range(400))
    source = f"{filler} {'The physician examined the puppy. ' * 5}{filler}"
    digest = "c" * 64
    (folder / ".gam" / "sources").mkdir(parents=True)
    (folder / ".gam" / "sources" / f"{digest}.txt").write_text(source)
    front = {"title": "clinic", "source": "clinic.txt", "source_hash": digest}
    front["span"] = [0, len(source)]
    (folder / "clinic.md").write_text(render_memory(front, "A visit to the clinic."))
    tools = hybrid(folder, llm_server)
    tools.index.embed_pending()
    assert len(pieces_of("clinic.md" + ORIGINAL, source)) > 3
    assert hits(tools, "doctor dog")[0][0] == "clinic.md" + ORIGINAL


# -- derived and incremental -------------------------------------------------------------------


def test_adding_a_file_embeds_only_its_pieces(folder: Path, llm_server: RunningServer) -> None:
    tools = hybrid(folder, llm_server)
    tools.index.embed_pending()
    seen = len(llm_server.embeddings.texts)
    text = "Buying a dwelling needs a notary. " + " ".join(f"clause{i}" for i in range(300))
    (folder / "home" / "notary.md").write_text(render_memory({"title": "notary"}, text))
    tools.corpus.refresh(["home/notary.md"])
    found = hits(tools, "purchase a house")  # embedded before the search answers (few)
    new = llm_server.embeddings.texts[seen:]
    pieces = pieces_of("home/notary.md", (folder / "home/notary.md").read_text())
    assert sorted(new[:-1]) == sorted(pieces) and len(pieces) == 2
    assert new[-1] == "purchase a house"  # the query
    assert found[0][0] == "home/notary.md"
    # an edit embeds the edited file's piece again, nothing else
    seen = len(llm_server.embeddings.texts)
    (folder / "home" / "garage.md").write_text(render_memory({"title": "garage"}, "A van."))
    tools.corpus.refresh(["home/garage.md"])
    tools.index.embed_pending()
    assert llm_server.embeddings.texts[seen:] == ["garage A van."]


def test_a_new_process_embeds_nothing_again(folder: Path, llm_server: RunningServer) -> None:
    first = hybrid(folder, llm_server)
    first.index.embed_pending()
    expected = hits(first, PARAPHRASE)
    seen = len(llm_server.embeddings.texts)
    again = hybrid(folder, llm_server)
    assert hits(again, PARAPHRASE) == expected
    assert llm_server.embeddings.texts[seen:] == [PARAPHRASE]  # the query only


def test_another_model_embeds_everything_again(folder: Path, llm_server: RunningServer) -> None:
    hybrid(folder, llm_server).index.embed_pending()
    seen, calls = len(llm_server.embeddings.texts), len(llm_server.embeddings.calls)
    other = hybrid(folder, llm_server, model="fake-embed-2")
    assert other.index.embed_pending() == len(set(every_piece(other)))
    assert sorted(llm_server.embeddings.texts[seen:]) == sorted(set(every_piece(other)))
    assert {c["model"] for c in llm_server.embeddings.calls[calls:]} == {"fake-embed-2"}
    with sqlite3.connect(folder / CACHE_FILE) as db:
        models = {m for (m,) in db.execute("SELECT DISTINCT model FROM vectors")}
    assert models == {"fake-embed-2|none"}  # the old model's vectors are gone
    assert hits(other, PARAPHRASE)[0][0] == "home/garage.md"


def test_vectors_never_reach_git_and_are_made_again_from_the_markdown(
    make_workflow, llm_server: RunningServer, memory_dir: Path
) -> None:
    workflow = make_workflow(embeddings=fake(llm_server))
    workflow.add(text="The car stays in the garage overnight. The kettle boils water for tea.")
    tools = workflow.search_tools()
    tools.index.embed_pending()
    expected = hits(tools, PARAPHRASE)
    assert expected and llm_server.embeddings.texts
    with sqlite3.connect(memory_dir / CACHE_FILE) as db:
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] > 0
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=memory_dir, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked and not [p for p in tracked if p.startswith(".gam/cache")]
    (memory_dir / CACHE_FILE).unlink()
    seen = len(llm_server.embeddings.texts)
    again = hybrid(memory_dir, llm_server)
    assert again.index.embed_pending() > 0  # embedded again from the files
    assert sorted(llm_server.embeddings.texts[seen:]) == sorted(set(every_piece(again)))
    assert hits(again, PARAPHRASE) == expected


def test_a_big_backlog_is_embedded_behind_while_bm25_answers(
    folder: Path, llm_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "SYNC_PIECES", 2)
    tools = hybrid(folder, llm_server)
    assert hits(tools, PARAPHRASE) == hits(MemoryTools(folder), PARAPHRASE)  # BM25 alone
    assert [n.split(" ")[0] for n in tools.index.notices()] == ["Embedding"]
    tools.index.embed_pending()  # waits for the thread embedding them
    assert tools.index.semantic is not None and tools.index.semantic.embedded > 2
    assert hits(tools, PARAPHRASE)[0][0] == "home/garage.md"


# -- fail-soft -----------------------------------------------------------------------------


@pytest.mark.parametrize("trouble", ["off", "no model", "500", "garbage", "wrong_count", "slow"])
def test_without_working_embeddings_search_is_bm25_exactly_and_told_once(
    folder: Path, llm_server: RunningServer, trouble: str
) -> None:
    expected = {q: hits(MemoryTools(folder), q) for q in QUERIES}
    changes: dict[str, object] = {}
    if trouble == "off":
        changes["enabled"] = "off"
    elif trouble == "no model":
        changes["model"] = ""  # and the server lists none ("scripted" only)
    else:
        llm_server.embeddings.faults = [trouble] * 10
        llm_server.embeddings.slow_seconds = 2.0
        changes["timeout"] = 0.3
    tools = hybrid(folder, llm_server, **changes)
    told = []
    for _ in range(2):
        for query in QUERIES:
            assert hits(tools, query) == expected[query], query
            told += tools.index.notices()
    if trouble == "off":
        assert told == [] and llm_server.embeddings.calls == []
    else:
        assert len(told) == 1, told
        assert len(llm_server.embeddings.calls) <= 1  # then left alone for a while


def test_a_link_out_of_the_folder_is_never_embedded(
    folder: Path, llm_server: RunningServer, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("The vault password is hunter2 for the automobile.")
    (folder / "home" / "linked.md").symlink_to(outside)
    (folder / "outside").symlink_to(tmp_path, target_is_directory=True)
    tools = hybrid(folder, llm_server)
    tools.index.embed_pending()
    hits(tools, PARAPHRASE)
    assert llm_server.embeddings.texts
    assert not [t for t in llm_server.embeddings.texts if "hunter2" in t]


# -- the model and its prefixes ------------------------------------------------------------------


def test_a_model_the_server_lists_is_found(folder: Path, llm_server: RunningServer) -> None:
    llm_server.state.models = ["scripted", "fake-embedding-small"]
    tools = hybrid(folder, llm_server, model="")
    tools.index.embed_pending()
    assert hits(tools, PARAPHRASE)[0][0] == "home/garage.md"
    assert {c["model"] for c in llm_server.embeddings.calls} == {"fake-embedding-small"}


@pytest.mark.parametrize("honours", [False, True])
def test_e5_prefixes_are_added_once(folder: Path, llm_server: RunningServer, honours: bool) -> None:
    llm_server.embeddings.honours_input_type = honours
    tools = hybrid(folder, llm_server, model="fake-e5-small")
    tools.index.embed_pending()
    assert hits(tools, PARAPHRASE)[0][0] == "home/garage.md"
    texts = llm_server.embeddings.texts[2:]  # after asking whether it honours input_type
    if honours:  # the server prefixes: we only say which is which
        assert not [t for t in texts if t.startswith(("query: ", "passage: "))]
        assert {c["kind"] for c in llm_server.embeddings.calls} == {"query", "passage"}
    else:
        assert texts[-1] == f"query: {PARAPHRASE}"
        assert all(t.startswith("passage: ") for t in texts[:-1])


def test_nomic_prefixes() -> None:
    assert embeddings.prefixes_for("nomic-embed-text") == ("search_query: ", "search_document: ")
    assert embeddings.prefixes_for("multilingual-e5-small-q4") == ("query: ", "passage: ")
    assert embeddings.prefixes_for("text-embedding-3-small") == ("", "")
    assert embeddings.pick_model(["gpt-4o", "text-embedding-ada-002", "text-embedding-3-small"])
    assert embeddings.pick_model(["qwen2.5-coder", "multilingual-e5-small-q4"]) == (
        "multilingual-e5-small-q4"
    )
    assert embeddings.pick_model(["qwen2.5-coder", "llama3"]) is None


def test_settings_from_the_environment_keep_the_chat_key_on_its_server() -> None:
    chat = LLMSettings(base_url="http://127.0.0.1:8089/v1", api_key="chat-key")
    same = EmbeddingSettings.from_env(chat, {"GAM_EMBEDDING_MODEL": "nomic-embed-text"})
    assert (same.base_url, same.model, same.enabled) == (chat.base_url, "nomic-embed-text", "auto")
    assert same.key_value() == "chat-key"
    other = EmbeddingSettings.from_env(
        chat, {"GAM_EMBEDDING_BASE_URL": "http://127.0.0.1:8090/v1", "GAM_EMBEDDINGS": "off"}
    )
    assert other.key_value() == "not-needed" and other.enabled == "off"
    keyed = EmbeddingSettings.from_env(
        chat, {"GAM_EMBEDDING_BASE_URL": "https://x.test/v1", "GAM_EMBEDDING_API_KEY": "k2"}
    )
    assert keyed.key_value() == "k2"


def test_a_remote_server_without_a_key_is_not_asked() -> None:
    settings = EmbeddingSettings(base_url="https://api.openai.com/v1")
    assert embeddings.find_model(settings) is None  # (no network: it was not asked)


def test_the_workflow_hands_the_environment_s_embeddings_to_its_search(
    make_workflow, llm_server: RunningServer, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GAM_EMBEDDING_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("GAM_EMBEDDING_MODEL", "fake-embed")
    workflow = make_workflow(gam_dir=folder)
    workflow.search_tools().index.embed_pending()
    assert workflow.search("automobile")[0].path == "home/garage.md"
    assert workflow.search_notices() == []
    monkeypatch.setenv("GAM_EMBEDDINGS", "off")
    assert make_workflow(gam_dir=folder).search_tools().index.semantic is None
