"""Nothing paid twice: an add stopped by a cancel, a `kill -9` or a failure, run again, makes
no memorize call it already made (counted at the scripted server); another model, or a
changed prompt, pays again; what is kept is dropped once it is no longer needed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gam_desktop.engine.ingest import prompts, resume
from gam_desktop.engine.ingest.estimate import Pace
from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.prices import PriceTable
from gam_desktop.engine.progress import CancelToken, OperationCancelled, ProgressEvent
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.results import ResultStore
from tests import invariants
from tests.clirun import run_cli
from tests.documents import document_files
from tests.engine.helpers import wait_for

CHUNKS = ["--min-tokens", "20", "--max-tokens", "300"]


def memorize_calls(server) -> int:
    return server.state.tasks().count("memorize")


def kept(memory: Path, model: str = "scripted") -> int:
    """Memories kept in the memory's result store for `model`."""
    store = ResultStore.of(MemoryFolder(memory), create=False)
    if store is None:
        return 0
    try:
        return sum(store.counts("memorize", model).values())
    finally:
        store.close()


def no_llm_workers() -> bool:
    """Whether every worker thread of the LLM client's pools has ended."""
    return not [t for t in threading.enumerate() if t.name.startswith("gam-llm")]


def cancel_at(done: int) -> tuple[CancelToken, object]:
    """A token, and a progress callback that cancels it once `done` memories are made."""
    cancel = CancelToken()

    def progress(event: ProgressEvent) -> None:
        if event.stage == "memorize" and event.done == done:
            cancel.cancel()

    return cancel, progress


def cancelled_add(make_workflow, server, files: list[Path], memory: Path, **kwargs) -> int:
    """Cancel an add of `files` after 3 memories; the memorize calls it paid for, every one
    of them kept (calls in flight at the cancel are kept when they arrive)."""
    server.state.latency_s = 0.2  # calls in flight when the cancel comes
    cancel, progress = cancel_at(3)
    with pytest.raises(OperationCancelled):
        make_workflow(cancel=cancel, progress=progress, **kwargs).add(files=files)
    # Not "nothing in flight at the server": a worker past its cancel check may not have sent
    # its request yet. The pool's threads end once their last call is answered and kept.
    assert wait_for(no_llm_workers, seconds=60)
    assert kept(memory) == memorize_calls(server)
    server.state.latency_s = 0
    return memorize_calls(server)


def test_an_add_run_again_after_a_cancel_repeats_no_memorize_call(
    make_workflow, llm_server, tmp_path: Path, memory_dir: Path
) -> None:
    files = document_files(tmp_path / "docs", 12)
    paid = cancelled_add(make_workflow, llm_server, files, memory_dir)
    assert 3 <= paid < 12
    events: list[ProgressEvent] = []
    report = make_workflow(progress=events.append).add(files=files)
    assert report.chunks == 12 and len(report.memories) == 12
    assert memorize_calls(llm_server) == 12  # each chunk memorized once, over both runs
    said = [e.message for e in events if e.stage == "resume"]
    assert said == [f"Resuming: {paid} of 12 chunks already summarized"]
    assert report.reused == paid and f"{paid} earlier LLM results reused" in report.summary()
    assert invariants.problems(memory_dir) == []
    # Done: what was kept for it is dropped, and no unfinished add is left to offer.
    assert kept(memory_dir) == 0 and make_workflow().interrupted_add() is None


def test_an_add_killed_mid_ingest_then_run_again_repeats_no_memorize_call(
    tmp_path: Path, llm_server, memory_dir: Path
) -> None:
    files = document_files(tmp_path / "docs", 8)
    args = ["--gam-dir", str(memory_dir), "--files", *map(str, files), *CHUNKS, "-q"]
    # One call at a time, and dead (os._exit, as kill -9) right after the third memory is kept.
    killed = run_cli(args, llm_server.base_url, env={"GAM_LLM_WORKERS": "1"}, exit_at="result:3")
    assert killed.returncode == 137, killed.stderr
    assert memorize_calls(llm_server) == 3
    again = run_cli(args, llm_server.base_url)
    assert again.returncode == 0, again.stderr
    assert "gam-add: Resuming: 3 of 8 chunks already summarized" in again.stderr
    assert memorize_calls(llm_server) == 8
    assert invariants.problems(memory_dir) == []


def test_another_model_pays_again(
    make_workflow, llm_server, settings: LLMSettings, tmp_path: Path, memory_dir: Path
) -> None:
    files = document_files(tmp_path / "docs", 12)
    paid = cancelled_add(make_workflow, llm_server, files, memory_dir)
    other = settings.model_copy(update={"model": "scripted-2"})
    events: list[ProgressEvent] = []
    assert make_workflow(settings=other).interrupted_add().summarized == 0  # type: ignore[union-attr]
    report = make_workflow(settings=other, progress=events.append).add(files=files)
    assert memorize_calls(llm_server) == paid + 12  # every chunk again
    assert report.reused == 0 and not [e for e in events if e.stage == "resume"]


def test_a_changed_prompt_pays_again(
    make_workflow, llm_server, tmp_path: Path, memory_dir: Path, monkeypatch
) -> None:
    files = document_files(tmp_path / "docs", 12)
    paid = cancelled_add(make_workflow, llm_server, files, memory_dir)
    monkeypatch.setitem(prompts.PROMPT_VERSIONS, "memorize", "changed")
    make_workflow().add(files=files)
    assert memorize_calls(llm_server) == paid + 12


def test_an_unfinished_add_is_offered_with_what_it_summarized(
    make_workflow, llm_server, tmp_path: Path, memory_dir: Path
) -> None:
    """At open (`interrupted_add`) and when the same files are dropped again (the estimate):
    "3 of 8 documents already summarized", and the estimate counts no call for them."""
    files = document_files(tmp_path / "docs", 12)
    paid = cancelled_add(make_workflow, llm_server, files, memory_dir)
    workflow = make_workflow()
    pending = workflow.interrupted_add()
    assert pending is not None
    assert pending.summary() == f"{paid} of 12 documents already summarized"
    assert sorted(pending.files) == sorted(map(str, files))
    again = workflow.estimate(files)
    assert again.resume is not None and again.resume.summarized == paid
    assert workflow.estimate(document_files(tmp_path / "other", 2, first=100)).resume is None
    workflow.forget_interrupted_add()  # declined: no longer offered
    assert workflow.interrupted_add() is None


def test_the_estimate_leaves_out_the_calls_already_paid(
    make_workflow, llm_server, tmp_path: Path, memory_dir: Path
) -> None:
    files = document_files(tmp_path / "docs", 12)
    before = make_workflow().estimate(files).llm_calls
    paid = cancelled_add(make_workflow, llm_server, files, memory_dir)
    assert make_workflow().estimate(files).llm_calls == before - paid


def test_the_estimate_names_time_tokens_and_a_known_providers_cost(
    make_workflow, settings: LLMSettings, tmp_path: Path
) -> None:
    files = document_files(tmp_path / "docs", 60)
    openai = settings.model_copy(
        update={"base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini", "workers": 8}
    )
    estimate = make_workflow(settings=openai, prices=PriceTable.defaults()).estimate(files)
    price = PriceTable.defaults().price("https://api.openai.com/v1", "gpt-4o-mini")
    assert price is not None and estimate.cost == pytest.approx(
        price.cost(estimate.prompt_tokens, estimate.completion_tokens)
    )
    text = estimate.summary()
    assert "completion" in text and "minute" in text and "at gpt-4o-mini's price" in text
    assert "in 3 steps of 25 documents" in text
    local = make_workflow(prices=PriceTable.defaults()).estimate(files)  # 127.0.0.1: no price
    assert local.cost is None and "$" not in local.summary()


def test_a_price_table_is_written_for_the_person_to_edit(tmp_path: Path) -> None:
    path = tmp_path / "config" / "prices.json"
    assert PriceTable.load(path).price("https://api.openai.com/v1", "gpt-4o-mini") is not None
    assert path.is_file()  # the defaults, to edit
    path.write_text(
        '{"currency": "EUR", "providers": {"llm.example.org": {"big": {"input": 1, "output": 2}}}}'
    )
    table = PriceTable.load(path)
    assert table.price("https://api.openai.com/v1", "gpt-4o-mini") is None  # theirs now
    price = table.price("https://llm.example.org/v1", "big-2025-01")  # a dated name
    assert price is not None and price.cost(1_000_000, 1_000_000) == 3 and price.currency == "EUR"
    path.write_text("{not json")
    assert PriceTable.load(path).price("https://api.openai.com/v1", "gpt-4o") is not None


def test_a_measured_pace_is_used_by_the_next_estimate(
    make_workflow, tmp_path: Path, memory_dir: Path, settings: LLMSettings
) -> None:
    make_workflow().add(files=document_files(tmp_path / "docs", 3))
    seconds = resume.measured_seconds(MemoryFolder(memory_dir), settings.model)
    assert seconds is not None and seconds < 5  # the scripted server answers at once
    assert make_workflow().ops.ingest._pace() == Pace(4, seconds, True, "scripted", None)


def test_the_kept_results_stay_under_their_cap(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results.sqlite3", cap_bytes=20_000)
    for number in range(200):
        store.put(f"key-{number}", "memorize", "doc", "m", "x" * 500)
    assert store.total_bytes() <= 20_000
    assert store.get("key-199") is not None and store.get("key-0") is None  # oldest first
    store.close()


def test_a_store_that_cannot_be_written_keeps_nothing_and_stops_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    store = ResultStore(blocked / "results.sqlite3")
    store.put("k", "memorize", "doc", "m", "value")
    assert store.get("k") is None and store.present(["k"]) == set()
