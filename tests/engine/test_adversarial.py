"""Adversarial checks of "nothing lost, nothing leaked" (issue 9), as a hostile or unlucky
user would try them: git's environment and configuration, crashes and recovery, crafted
app files, odd names from the LLM, and other programs editing while an operation runs.

Every test here describes correct behaviour; each failed when it was written.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from gam_desktop.engine.store import faults
from gam_desktop.engine.store.folder import JOURNAL_FILE
from gam_desktop.selfcheck import scripted_llm
from tests import invariants
from tests.clirun import cli_command, run_cli
from tests.documents import topic_document
from tests.engine.helpers import edit_during
from tests.repos import git, user_repo

pytestmark = pytest.mark.posix_only(
    "most attacks are built with symbolic links, shell-script hooks and POSIX permissions"
)


@pytest.fixture
def victim_repo(tmp_path: Path) -> Path:
    """Another project of the user's, with its own history."""
    return user_repo(tmp_path / "project", {"code.py": "print('mine')\n"})


# -- git's environment and configuration ---------------------------------------------------


def test_git_variables_in_the_environment_do_not_redirect_the_memorys_history(
    make_workflow, memory_dir: Path, victim_repo: Path, monkeypatch
) -> None:
    """gam-add run from a git hook (or a shell that exports GIT_DIR / GIT_WORK_TREE /
    GIT_INDEX_FILE) commits the whole memory into *that* repository: the user's project
    gets a "Manual edits" commit deleting its files and a commit holding every memory and
    source text (leaked into a repository that may be pushed), and rollback/recovery then
    run `git revert`/`reset --hard` against the project's history. The memory's git must
    ignore the caller's GIT_* variables."""
    head = git(victim_repo, "rev-parse", "HEAD")
    monkeypatch.setenv("GIT_DIR", str(victim_repo / ".git"))
    make_workflow().add(text=topic_document({"python": 3}))
    monkeypatch.delenv("GIT_DIR")
    assert git(victim_repo, "rev-parse", "HEAD") == head  # the project's history untouched
    assert "python" not in git(victim_repo, "log", "--stat", "--all")
    assert (memory_dir / ".git").is_dir()
    assert git(memory_dir, "log", "--format=%s").strip()  # the memory has its own history


def test_a_memory_from_elsewhere_runs_no_commands_from_its_git_config(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """A memory folder received as a zip or through a synced folder carries its .git/config
    and .git/hooks. `core.fsmonitor` (run by every `git status`) and a post-commit hook are
    executed by a plain gam-add: opening someone's memory runs their commands with the
    user's rights. The engine's git calls must switch these off (e.g. `-c
    core.fsmonitor=false -c core.hooksPath=<empty>`); the design says a memory is untrusted
    ground."""
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    marker_config, marker_hook = tmp_path / "ran_fsmonitor", tmp_path / "ran_hook"
    git(memory_dir, "config", "core.fsmonitor", f"touch {marker_config}; false")
    hook = memory_dir / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {marker_hook}\n")
    hook.chmod(0o755)
    make_workflow().add(text=topic_document({"rust": 3}))
    assert not marker_config.exists(), "core.fsmonitor from the memory's .git/config ran"
    assert not marker_hook.exists(), "a hook from the memory's .git/hooks ran"


def test_drivers_named_by_the_memorys_gitattributes_never_run(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """A memory's .gitattributes can name a filter (run by `git add`, `status`, `checkout`),
    a merge driver (run by the revert behind a rollback) and a diff driver, whose commands
    come from its .git/config: a crafted memory would run them with the user's rights."""
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    ran = {kind: tmp_path / f"ran_{kind}" for kind in ("clean", "smudge", "merge", "diff")}
    git(memory_dir, "config", "filter.evil.clean", f"touch {ran['clean']}; cat")
    git(memory_dir, "config", "filter.evil.smudge", f"touch {ran['smudge']}; cat")
    git(memory_dir, "config", "merge.evil.driver", f"touch {ran['merge']}; false")
    git(memory_dir, "config", "diff.evil.command", f"touch {ran['diff']}")
    (memory_dir / ".gitattributes").write_text("* filter=evil merge=evil diff=evil\n")
    (memory_dir / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    workflow = make_workflow()
    workflow.add(text=topic_document({"rust": 3}))
    workflow.add(text=topic_document({"python": 2, "rust": 2}))
    first_add = workflow.history.operations()[-2]
    workflow.rollback(first_add.sha)
    for op in workflow.history.operations():
        for change in workflow.history.changes(op.sha):
            workflow.history.diff(op.sha, change.path)
    assert not [kind for kind, marker in ran.items() if marker.exists()]
    lines = (memory_dir / ".git" / "info" / "attributes").read_text().splitlines()
    assert lines[0] == "* filter=evil" and lines[-1] == "* !filter !merge !diff"  # theirs stays


def test_a_linked_info_attributes_turns_history_off_rather_than_run_drivers(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    make_workflow().add(text=topic_document({"python": 3}))
    theirs = tmp_path / "attributes"
    theirs.write_text("* filter=evil\n")
    (memory_dir / ".git" / "info" / "attributes").unlink()
    (memory_dir / ".git" / "info" / "attributes").symlink_to(theirs)
    git(memory_dir, "config", "filter.evil.clean", f"touch {tmp_path / 'ran'}; cat")
    workflow = make_workflow()
    workflow.add(text=topic_document({"rust": 3}))  # builds; history is off, and says why
    assert "is a link" in (workflow.history_message or "")
    assert not (tmp_path / "ran").exists() and theirs.read_text() == "* filter=evil\n"


# -- recovery after a crash ----------------------------------------------------------------


def test_recover_restore_keeps_the_users_links(
    make_workflow, memory_dir: Path, tmp_path: Path, llm_server
) -> None:
    """The engine never commits a link that leaves the memory (by design), so such links
    stay untracked; `recover --restore` after any crash runs `git clean -fd`, which deletes
    them. A user who keeps `M/papers -> ~/Papers` or `M/todo.md -> ~/todo.md` loses those
    links (nothing in git to get them back) just because an unrelated add crashed. Restore
    must drop only what the interrupted operation wrote."""
    make_workflow().add(text=topic_document({"python": 3}))
    elsewhere = tmp_path / "Papers"
    elsewhere.mkdir()
    (elsewhere / "todo.md").write_text("my todo\n")
    (memory_dir / "papers").symlink_to(elsewhere, target_is_directory=True)
    (memory_dir / "todo.md").symlink_to(elsewhere / "todo.md")
    out = run_cli(
        ["--gam-dir", str(memory_dir), "--text", topic_document({"rust": 3}), "-q"],
        llm_server.base_url,
        exit_at="write:1",
    )
    assert out.returncode == 137, out.stderr
    print(make_workflow().recover(restore=True))
    assert (memory_dir / "papers").is_symlink(), "the user's folder link was deleted"
    assert (memory_dir / "todo.md").is_symlink(), "the user's file link was deleted"


def test_recover_restore_keeps_a_note_saved_while_the_operation_ran(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    """The folder is plain files the person edits in any editor. They save a new note
    into the memory while a (slow) gam-add is waiting on the LLM; the add is killed (power
    cut, kill -9). `recover --restore` ("drop the interrupted writes") then deletes the
    person's note with `git clean -fd` and reverts their edit with `reset --hard`: neither
    was ever committed, so both are gone for good. Only the operation's own writes may be
    dropped (or the person's edits committed first)."""
    make_workflow().add(text=topic_document({"python": 3}))
    memory = next((memory_dir / "python").glob("python_notes*.md"))
    # The add is held at its first call after the memories are made (placing them, or
    # planning or describing folders): the journal is written, and the add waits there.
    llm_server.state.hold_after = {"place": 0, "organize": 0, "describe": 0}
    env = {
        **os.environ,
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_MODEL": "scripted",
        "OPENAI_API_KEY": "test-key",
    }
    args = ["--gam-dir", str(memory_dir), "--text", topic_document({"rust": 3}), "-q"]
    process = subprocess.Popen(cli_command("add_main", *args), env=env)
    try:
        # The journal appears once the memories are made (engine/drop.py), while it plans.
        deadline = time.monotonic() + 240  # a hang guard: a loaded machine starts slowly
        while not (memory_dir / JOURNAL_FILE).exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (memory_dir / JOURNAL_FILE).exists()
        (memory_dir / "my_note.md").write_text("# Call the plumber\n\nTuesday 9am.\n")
        edited = memory.read_text() + "\nMy own remark.\n"
        memory.write_text(edited)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        llm_server.state.hold_after = {}
        llm_server.state.released.set()
    print(make_workflow().recover(restore=True))
    assert (memory_dir / "my_note.md").exists(), "the note saved during the add was deleted"
    assert memory.read_text() == edited, "the edit saved during the add was reverted"


def test_a_crafted_journal_cannot_delete_files_outside_the_memory(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """`.gam/journal.json` is not in git; a memory received as a zip or kept in a shared
    (synced) folder may carry one written by someone else. `recover --keep` (which the GUI
    offers on open) trusts its source hashes as file names: a hash of
    `../../../elsewhere/thesis` deletes `elsewhere/thesis.txt` outside the memory, and
    the folder it was in when that leaves it empty. Recovery must only touch paths inside
    the memory's own folders (a source hash is 64 hex digits)."""
    make_workflow().add(text=topic_document({"python": 3}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "thesis.txt").write_text("four years of work\n")
    journal = {
        "operation": "add",
        "started": "2026-01-01T00:00:00",
        "head": git(memory_dir, "rev-parse", "HEAD").strip(),
        "pid": 1,
        "preexisting": [],
        "documents": {"../../../elsewhere/thesis": {"name": "x", "memories": ["gone.md"]}},
    }
    (memory_dir / JOURNAL_FILE).write_text(json.dumps(journal))
    make_workflow().recover(restore=False)
    assert (elsewhere / "thesis.txt").read_text() == "four years of work\n"


# -- odd names from the LLM ----------------------------------------------------------------


def test_a_title_of_64_emoji_still_builds(make_workflow, memory_dir: Path, monkeypatch) -> None:
    """Names are cut to 64 *characters*, but file systems limit a name to 255 *bytes*: an
    LLM title of emoji (4 bytes each in UTF-8) gives a 259-byte file name, and every build
    or add of that document fails with "File name too long" (the user can never add it).
    Names must be cut to fit in bytes (with room for the temp file's prefix and suffix)."""
    memorize = scripted_llm.ANSWERS["memorize"]

    def emoji_title(user: str) -> dict:
        return {**memorize(user), "title": "\N{ROCKET}" * 70}

    monkeypatch.setitem(scripted_llm.ANSWERS, "memorize", emoji_title)
    report = make_workflow().add(text=topic_document({"python": 2}))
    assert len(report.memories) == 2
    assert invariants.problems(memory_dir) == []


# -- other programs during an operation ----------------------------------------------------


def test_a_memory_deleted_while_an_add_runs_is_not_listed(make_workflow, memory_dir: Path) -> None:
    """A person deletes a memory (in a file manager) while an add is choosing folders.
    The add succeeds, but the folder README still lists the deleted memory and the meta
    file counts it: the agent is pointed at a file that does not exist and the memory is
    inconsistent (tests/invariants.py) until some later operation rewrites that README."""
    make_workflow().add(text=topic_document({"python": 3}))
    doomed = sorted((memory_dir / "python").glob("python_notes*.md"))[0]
    workflow = make_workflow(progress=edit_during("place", doomed.unlink))
    workflow.add(text=topic_document({"python": 2}, repeats=4))
    assert not doomed.exists()
    assert invariants.problems(memory_dir) == []


def test_an_edit_saved_while_the_change_set_is_written_is_not_taken_as_the_apps(
    make_workflow, memory_dir: Path, monkeypatch
) -> None:
    """Writing the change set and `git add -A` take a while on a large memory (seconds
    at 10k files). A person's save in that window is folded into the app's "Added…"
    commit: the history attributes it to the app and rolling back the add throws the
    person's edit away with it. The commit must hold only the operation's own files (the
    person's edit stays uncommitted for the watcher, or is committed on its own)."""
    make_workflow().add(text=topic_document({"python": 3}))
    mine = sorted((memory_dir / "python").glob("python_notes*.md"))[0]
    edited = mine.read_text() + "\nA line I typed while the add was writing.\n"
    reached = faults.reached
    done: list[bool] = []

    def another_editor(point: str) -> None:
        if point == "write" and not done:
            done.append(True)
            mine.write_text(edited)
        reached(point)

    monkeypatch.setattr(faults, "reached", another_editor)
    workflow = make_workflow()
    workflow.add(text=topic_document({"rust": 3}))
    monkeypatch.setattr(faults, "reached", reached)
    add = workflow.history.operations(limit=1)[0]
    rel = mine.relative_to(memory_dir).as_posix()
    assert rel not in [c.path for c in workflow.history.changes(add.sha)]
    workflow.rollback(add.sha)
    assert mine.read_text() == edited, "rolling back the add threw the person's edit away"


# -- links inside the memory -----------------------------------------------------------------


def test_a_link_into_dot_git_leaks_nothing_to_the_llm(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    """A link that stays inside the memory but points into `.git/` (say `notes.md ->
    .git/config`, from an unzipped archive or an old commit) is read like a memory: the
    repository's config, with a token in the remote's URL, goes into the LLM's prompts and
    the chat answer. The agent's sandbox refuses `.git/` by name, but the corpus, search
    and builder only check that a link stays inside the root. `.git/` and `.gam/` must be
    out of bounds after resolving links too."""
    token = "ghp_adversarialTOKEN0123456789"
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    git(memory_dir, "remote", "add", "origin", f"https://me:{token}@github.com/me/notes.git")
    (memory_dir / "cfg.md").symlink_to(".git/config")
    (memory_dir / "python" / "cred.md").symlink_to("../.git/config")
    workflow.add(text=topic_document({"rust": 3, "git": 3}))
    answer = workflow.request("What is the origin remote url in cfg?")
    assert token not in json.dumps([r["messages"] for r in llm_server.state.requests])
    assert token not in answer.answer


def test_a_linked_cache_folder_is_never_written_through(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """Nothing is ever written through a link: that holds for change sets, but the search
    index is saved with a bare atomic_write to `.gam/cache/bm25.json`: when `.gam/cache`
    is a link (a memory unpacked from an archive, a sync tool), asking a question writes
    (or replaces) `bm25.json`, full of the memory's words, in whatever folder it points to."""
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = memory_dir / ".gam" / "cache"
    if cache.exists():
        shutil.rmtree(cache)
    cache.symlink_to(elsewhere, target_is_directory=True)
    workflow.request("What is the Python GIL?")
    # Nor do the LLM results an add keeps (its summaries) go there.
    workflow.add(text=topic_document({"rust": 3}))
    assert list(elsewhere.iterdir()) == []


def test_a_linked_gitignore_never_commits_the_apps_private_files(
    make_workflow, memory_dir: Path, tmp_path: Path
) -> None:
    """The app keeps `.gam/journal.json`, the lock and the cache out of git only through
    lines in `.gitignore`, and skips a `.gitignore` that is a link (rightly: never write
    through one). git does not follow a linked .gitignore either, so with one (a person
    who shares one ignore file between folders) every operation commits the running
    journal: a "Manual edits" commit of `.gam/journal.json`, the journal in every "Added"
    commit, and `git status` dirty after each operation. The app's own exclusions belong
    where the person's files cannot disable them (e.g. `.git/info/exclude`)."""
    make_workflow().add(text=topic_document({"python": 3}))
    shared = tmp_path / "shared_ignore"
    shared.write_text("*.log\n")
    (memory_dir / ".gitignore").unlink(missing_ok=True)
    (memory_dir / ".gitignore").symlink_to(shared)
    git(memory_dir, "add", "-A")
    git(memory_dir, "-c", "user.name=Me", "-c", "user.email=me@x", "commit", "-qm", "link")
    make_workflow().add(text=topic_document({"rust": 3}))
    committed = git(memory_dir, "log", "--all", "--name-only", "--format=")
    assert ".gam/journal.json" not in committed
    assert ".gam/lock" not in committed


def test_a_link_inside_an_added_folder_does_not_smuggle_in_a_private_file(
    memory_dir: Path, tmp_path: Path, llm_server
) -> None:
    """`gam-add --files ~/Downloads/papers` adds a folder's files (as the GUI's drop does).
    An unpacked archive can hold `paper2.txt -> ~/.ssh/id_rsa`: the link is followed, and
    the private key is sent to the LLM, kept in `.gam/sources/`, summarized into a memory
    and committed. A link in a chosen folder that leaves that folder must be skipped (and
    named), the rule the memory itself follows."""
    secret = "SECRETKEYMATERIAL-adversarial"
    home_ssh = tmp_path / "ssh"
    home_ssh.mkdir()
    (home_ssh / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n")
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "paper1.md").write_text(topic_document({"python": 3}))
    (papers / "paper2.txt").symlink_to(home_ssh / "id_rsa")
    out = run_cli(["--gam-dir", str(memory_dir), "--files", str(papers), "-q"], llm_server.base_url)
    assert out.returncode in (0, 1), out.stderr
    assert secret not in json.dumps([r["messages"] for r in llm_server.state.requests])
    stored = [
        p
        for p in memory_dir.rglob("*")
        if p.is_file() and secret in p.read_text("utf-8", "replace")
    ]
    assert stored == []


def test_keep_after_a_rollback_killed_mid_revert_ends_consistent(
    make_workflow, memory_dir: Path, llm_server
) -> None:
    """Rolling back an add that later adds followed (the usual case: every add rewrites
    the root README and the meta file) makes `git revert` leave conflict markers in those
    derived files. Killed right then, the memory holds `<<<<<<< HEAD` in `.gam_meta.json`
    and README.md, and `recover --keep` fails on every attempt ("GamMeta: Invalid JSON"):
    the recovery the app offers can never finish. Keep must regenerate derived files from
    the memories (ignoring their conflicted contents) and end consistent."""
    make_workflow().add(text=topic_document({"python": 3}))
    make_workflow().add(text=topic_document({"rust": 3, "git": 3}))
    make_workflow().add(text=topic_document({"docker": 3}))
    middle = git(memory_dir, "log", "--format=%H", "--skip=1", "-n1").strip()
    out = run_cli(
        ["--gam-dir", str(memory_dir), middle],
        llm_server.base_url,
        entry="rollback_main",
        exit_at="reverted:1",
    )
    assert out.returncode == 137, out.stderr
    workflow = make_workflow()
    workflow.recover(restore=False)
    assert workflow.interrupted() is None
    assert "<<<<<<<" not in (memory_dir / ".gam_meta.json").read_text()
    assert "<<<<<<<" not in (memory_dir / "README.md").read_text()
    assert invariants.problems(memory_dir) == []
