"""The words a person reads from the engine: counts in the singular, errors that say what to do
once, a refused key as the headline, rollbacks named without nesting, broken front matter
described by its line, an interrupted operation's time in words."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gam_desktop import keystore
from gam_desktop.engine.history import journal
from gam_desktop.engine.history.gitrepo import MemoryRepo
from gam_desktop.engine.history.log import Operation, RollbackConflict, rollback_summary
from gam_desktop.engine.history.versioned import InterruptedOperationError, VersionedFolder
from gam_desktop.engine.ingest.estimate import Estimate
from gam_desktop.engine.llm import LLMAuthError, LLMClient, LLMSettings
from gam_desktop.engine.llm.probe import probe
from gam_desktop.engine.llm.usage import UsageMeter
from gam_desktop.engine.progress import ProgressEvent
from gam_desktop.engine.store.folder import MemoryFolder
from gam_desktop.engine.store.markdown import parse_memory, render_memory
from gam_desktop.engine.textutil import plural, written_word
from gam_desktop.engine.workflow import front_matter_problems
from gam_desktop.gui.error_advice import describe
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.documents import topic_document

# "1 memories", "1 files", "1 LLM calls": a count of one with a plural noun.
ONE_WITH_A_PLURAL = re.compile(
    r"(?<![\d,.])\b1 (memories|files|documents|chunks|folders|LLM calls|prompt tokens|"
    r"attempts|passages|facts|turns|steps)\b"
)


# -- counts ------------------------------------------------------------------------------


def test_plural_follows_the_count() -> None:
    assert plural(1, "memory") == "1 memory"
    assert plural(0, "memory") == "0 memories"
    assert plural(2, "file") == "2 files"
    assert plural(1, "LLM call") == "1 LLM call"
    assert plural(3, "pass") == "3 passes"
    assert plural(2, "key") == "2 keys"  # a vowel before the y
    assert plural(12_000, "prompt token") == "12,000 prompt tokens"
    assert plural(2, "child", "children") == "2 children"


def test_a_name_is_written_as_the_texts_write_it_inside_their_sentences() -> None:
    """How a word of a file or folder name is written: as most of its occurrences inside
    sentences write it; a capital that a sentence's start, a heading or a title in capitals
    explains says nothing, one after the first letter does; a word written nowhere is an
    initialism when it has no vowel."""
    text = (
        "# Release Notes\n\nTHE KORVEX RELEASE\n\nRelease 2 of Korvex ships. The korvex "
        "tool, unlike Korvex itself, is optional. This release is small.\n"
        "ZephyrDB users: zephyrdb is ZephyrDB's client, and the front-desk team uses ZephyrDB."
    )
    assert written_word("release", [text]) == "release"  # "Release" only where one starts
    assert written_word("korvex", [text]) == "Korvex"  # 2 of 3 inside sentences
    assert written_word("zephyrdb", [text]) == "ZephyrDB"  # at a line's start too
    assert written_word("frontdesk", [text]) == "front-desk"
    assert written_word("xkb", [text]) == "XKB"
    assert written_word("notes", ["# Release Notes\n\nThese notes say it."]) == "notes"
    assert written_word("acme", ["Acme Robotics rotates weekly."]) == "Acme"  # nothing else
    assert written_word("rotas", ["Acme Rotas: The rotas are weekly."]) == "rotas"  # a label
    assert written_word("Acme", [text]) == "Acme"  # a name written with capitals stays


def test_readmes_and_commits_count_notes_as_the_window_does(make_workflow, memory_dir) -> None:
    """The window says "notes"; the folder READMEs ("python/ (4 memories)") and the commit
    subjects ("Built 1 document (4 memories)") still said "memories". File formats and
    front matter keys are as they were."""
    from tests.repos import git

    workflow = make_workflow()
    built = workflow.add(text=topic_document({"python": 2, "rust": 2}))
    added = workflow.add(text=topic_document({"docker": 1}))
    assert re.fullmatch(r"Built 1 document \(\d+ notes\)", built.summary()), built.summary()
    assert re.fullmatch(r"Added 1 document \(1 note\)", added.summary()), added.summary()
    subjects = git(memory_dir, "log", "--format=%s").splitlines()
    assert subjects[:2] == [added.summary(), built.summary()]
    readme = (memory_dir / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^- \*\*\w+/\*\* \(\d+ notes?\): ", readme, re.MULTILINE), readme
    readmes = [p.read_text(encoding="utf-8") for p in memory_dir.rglob("README.md")]
    assert not any(re.search(r"\d memor(y|ies)\b", text) for text in readmes)
    meta = (memory_dir / ".gam_meta.json").read_text(encoding="utf-8")
    assert '"total_chunks"' in meta  # the file's keys as they were


def test_an_estimate_of_one_is_in_the_singular() -> None:
    one = Estimate(documents=1, chunks=1, llm_calls=1, prompt_tokens=1)
    assert one.summary() == "1 document, about 1 note: about 1 LLM call and 1 prompt token"
    many = Estimate(documents=2, chunks=5, llm_calls=7, prompt_tokens=1_200)
    assert many.summary() == (
        "2 documents, about 5 notes: about 7 LLM calls and 1,200 prompt tokens"
    )


def test_a_build_of_one_memory_says_so_in_every_step(make_workflow) -> None:
    events: list[ProgressEvent] = []
    workflow = make_workflow(progress=events.append)
    report = workflow.add(text="Git branches are cheap.")
    said = [e.message for e in events] + [report.summary(), workflow.history.get("HEAD").summary]
    assert len(report.memories) == 1 and "Summarizing 1 chunk" in said
    assert [s for s in said if ONE_WITH_A_PLURAL.search(s)] == []


def test_usage_of_one_call_is_in_the_singular() -> None:
    usage = UsageMeter()
    usage.record("memorize", 10, 5)
    assert usage.summary().startswith("1 LLM call, ")


# -- errors say what happened, then what to do, once -------------------------------------


def test_a_refused_key_says_to_check_the_key_once(settings, llm_server) -> None:
    llm_server.state.faults.append(Fault("401"))
    with pytest.raises(LLMAuthError) as caught:
        LLMClient(settings).text([{"role": "user", "content": "hi"}], stage="probe")
    message = describe(caught.value)
    # the server's own words too (its JSON error's message): which key, or why
    assert message.text == (
        f"{settings.base_url} refused the API key (HTTP 401): Incorrect API key provided"
    )
    assert "Settings" not in message.text  # what happened; the advice says what to do
    assert message.full().count("Settings") == 1 and message.full().count("check the key") == 1


def test_no_git_is_explained_once(tmp_path: Path, monkeypatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(Exception) as caught:
        MemoryRepo.open(tmp_path / "memory")
    full = describe(caught.value).full()
    assert "git was not found" in full and full.count("set its path in Settings") == 1


def test_a_conflicting_rollback_says_to_restore_once() -> None:
    operation = Operation("a" * 40, 0, "Added 1 document (3 memories)")
    later = [Operation("b" * 40, 0, "Edited 1 file outside the app", {"Gam-Operation": "x"})]
    full = describe(RollbackConflict(operation, ["notes.md"], later)).full()
    assert "changed the same file." in full and full.count("Restore") == 1


def test_a_missing_keychain_says_session_only_once() -> None:
    full = describe(keystore.KeychainUnavailable(keystore.NO_KEYCHAIN)).full()
    assert full.count("session only") == 1 and "cannot be saved" in full


def test_advice_already_given_in_the_text_is_not_repeated() -> None:
    class Said(keystore.KeychainUnavailable):
        pass

    error = Said(f"{keystore.NO_KEYCHAIN} {keystore.SESSION_ONLY}")
    assert describe(error).full().count("session only") == 1


def test_an_interrupted_operation_gives_its_time_in_words(make_workflow, memory_dir) -> None:
    workflow = make_workflow()
    workflow.add(text="Git branches are cheap.")
    folder = MemoryFolder(memory_dir)
    with journal.recording(folder, "add", None, "2025-11-03T14:05:09.123456+00:00", False):
        with (
            pytest.raises(InterruptedOperationError) as caught,
            VersionedFolder(folder).operation("add"),
        ):
            pass
        full = describe(caught.value).full()
    assert "2025-11-03" not in full and "T14:05" not in full and "2025" in full
    assert full.count("keep the files as they are") == 1


# -- Test connection: a refused key is the headline --------------------------------------


@contextlib.contextmanager
def refusing_server() -> Iterator[str]:
    """A server that answers every request with 401: it is there, and refuses the key."""

    class Refuse(BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            body = b'{"error": {"message": "Incorrect API key provided", "code": 401}}'
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _refuse

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_a_server_refusing_the_key_is_the_headline_of_the_test() -> None:
    with refusing_server() as url:
        report = probe(LLMSettings(base_url=url, model="m", api_key="wrong", timeout=5))
    summary = report.summary()
    assert summary.startswith("The API key was refused") and "HTTP 401" in summary
    assert "Connected" not in summary and "check the key" in summary.lower()


def test_a_key_refused_only_for_completions_is_the_headline_too(llm_server) -> None:
    llm_server.state.faults.append(Fault("401", times=10))  # the model list still answers
    report = probe(LLMSettings(base_url=llm_server.base_url, model="scripted", api_key="x"))
    assert report.summary().startswith("The API key was refused")
    assert "Connected" not in report.summary()


def test_a_working_key_still_reports_connected(llm_server) -> None:
    report = probe(LLMSettings(base_url=llm_server.base_url, model="scripted", api_key="x"))
    assert report.summary().startswith("Connected to") and not report.refused


# -- rollbacks are named without nesting -------------------------------------------------


def test_rolling_back_a_rollback_never_nests_the_prefix(make_workflow) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    add = workflow.history.operations(limit=1)[0]
    summaries = []
    sha = add.sha
    for _ in range(3):  # roll back, undo the rollback, undo the undo
        sha = workflow.rollback(sha)
        summaries.append(workflow.history.get(sha).summary)
    assert summaries == [
        f"Rolled back: {add.summary}",
        f"Undid rollback: {add.summary}",
        f"Rolled back: {add.summary}",
    ]
    newest = workflow.history.get(sha)
    assert rollback_summary(newest) == f"Undid rollback: {add.summary}"


def test_restoring_to_before_a_restore_does_not_repeat_its_prefix(make_workflow) -> None:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    workflow.add(text=topic_document({"git": 2}))
    added = workflow.history.operations(limit=1)[0]
    restore = workflow.history.get(workflow.restore_before(added.sha))
    again = workflow.history.get(workflow.restore_before(restore.sha))
    assert restore.summary == f"Restored the memory to before: {added.summary}"
    assert again.summary.count("Restored the memory to before") == 1
    assert added.summary in again.summary


# -- broken front matter, in words -------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "said"),
    [
        ("title: x\ntldr: a: b\n", "line 3 has a ':' where a value was expected"),
        ("title: [unclosed\ntldr: x\n", "the list opened with '[' on line 2 is never closed"),
        ('title: "unclosed\ntldr: x\n', "the quote opened on line 2 is never closed"),
        ("\ttitle: x\n", "line 2 is indented with a tab"),
        ("title: x\n@bad: y\n", "line 3 has a name or value starting with '@'"),
        ("a:\n  b: 1\n c: 2\n", "line 4 does not line up with the lines above it"),
        ("- a\n- b\n", "it is not a list of 'name: value' lines"),
    ],
)
def test_a_yaml_error_is_said_in_words_with_its_line(front: str, said: str) -> None:
    problem = parse_memory(f"---\n{front}---\n\nThe body.\n").problem or ""
    assert problem.startswith(said)
    assert "<unicode string>" not in problem and "column" not in problem
    assert "mapping values" not in problem and "scanning" not in problem


def test_the_broken_front_matter_report_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "x.md").write_text("---\ntitle: x\ntldr: Note: this\n---\n\nBody.\n")
    (tmp_path / "fine.md").write_text(render_memory({"title": "fine"}, "Body."))
    problems = front_matter_problems(MemoryFolder(tmp_path), ["x.md", "fine.md"])
    assert problems == [
        "The front matter of x.md cannot be read: line 3 has a ':' where a value was "
        "expected (a value holding ': ' needs quotes around it)."
    ]
