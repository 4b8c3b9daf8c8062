"""A disk that fills while a change is committed (issue 36, section 2, finding 5): the
operation says "nothing was changed", so nothing may be: every file byte for byte as
before (.gam_meta.json too), `git status` clean, the index as it was, and the next
operation no "Manual edits" of the app's own half-undone write. Putting the files back
must need no space: on a full disk, writing the old bytes again fails too."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gam_desktop.engine.history import gitrepo
from gam_desktop.engine.models import META_FILE
from gam_desktop.engine.store import changeset, faults
from gam_desktop.engine.store.changeset import StoreError
from tests.clirun import run_cli
from tests.documents import topic_document
from tests.repos import git

NO_SPACE = "No space left on device"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the memory but git's objects and the app's cache and lock; the
    index as what it stages (an operation begins by refreshing its file times)."""
    found = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/objects/", ".gam/cache/", ".gam/lock", ".git/logs/")):
            continue
        if rel == ".git/index":
            found[rel] = git(root, "ls-files", "--stage", "-z").encode()
        elif path.is_file() and not path.is_symlink():
            found[rel] = path.read_bytes()
    return found


def differing(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))


def folders(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_dir() and not p.relative_to(root).as_posix().startswith((".git", ".gam/cache"))
    }


# -- the disk simulated full, in this process (every system) ---------------------------------


class FullDisk:
    """From `fill()` on, every byte written fails with ENOSPC as on a full disk: the change
    set's writes (atomic_write, and anything through os.write), new folders, and git."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        self.refused: list[str] = []
        real_write, real_mkdir, real_run = changeset.atomic_write, Path.mkdir, os.write

        def atomic_write(path, data):
            self._check(f"write {path}")
            return real_write(path, data)

        def mkdir(path, *args, **kwargs):
            if not Path(path).exists():
                self._check(f"mkdir {path}")
            return real_mkdir(path, *args, **kwargs)

        def write(fd, data):
            self._check("os.write")
            return real_run(fd, data)

        real_execute = gitrepo.MemoryRepo._execute

        def execute(repo, args, env, stdin=None):
            if self.full and not set(args) & READ_ONLY_GIT:
                self.refused.append(f"git {' '.join(a for a in args if not a.startswith('-'))}")
                raise repo._git.GitCommandError(
                    ["git", *args], 128, f"fatal: unable to write: {NO_SPACE}".encode()
                )
            return real_execute(repo, args, env, stdin)

        monkeypatch.setattr(changeset, "atomic_write", atomic_write)
        monkeypatch.setattr(Path, "mkdir", mkdir)
        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(gitrepo.MemoryRepo, "_execute", execute)

    def _check(self, what: str) -> None:
        if self.full:
            self.refused.append(what)
            raise OSError(errno.ENOSPC, NO_SPACE)

    def fill(self) -> None:
        self.full = True


READ_ONLY_GIT = {"rev-parse", "status", "config", "log", "diff-tree", "ls-files", "ls-tree"}


@pytest.fixture
def built(make_workflow, memory_dir: Path) -> Path:
    workflow = make_workflow(min_tokens=20, max_tokens=200)
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 2}))
    assert git(memory_dir, "status", "--porcelain") == ""
    return memory_dir


@pytest.fixture
def full_at(monkeypatch: pytest.MonkeyPatch):
    """full_at(point, when): the disk is full from the first time the operation reaches
    `point` with when() true (faults.py: "write" after a file of the change set is
    written, "staged" after `git add`)."""
    disk = FullDisk(monkeypatch)

    def install(point: str, when: Callable[[], bool] = lambda: True) -> FullDisk:
        def hook(reached: str) -> None:
            if reached == point and not disk.full and when():
                disk.fill()  # after "staged", git's write-tree is the first to fail

        assert faults.install(hook) is None
        return disk

    yield install
    faults.install(None)


def no_hard_links(*_args, **_kwargs) -> None:
    raise PermissionError(errno.EPERM, "Operation not permitted")  # FAT, exFAT


@pytest.mark.parametrize("links", [True, False], ids=["hard links", "no hard links"])
@pytest.mark.parametrize("point", ["staged", "write"])
def test_a_full_disk_at_the_commit_changes_nothing(
    make_workflow, built: Path, full_at, point: str, links: bool, monkeypatch
) -> None:
    if not links:
        monkeypatch.setattr(os, "link", no_hard_links)
    before, dirs_before = snapshot(built), folders(built)
    head = git(built, "rev-parse", "HEAD")
    readme = (built / "README.md").read_bytes()
    # "write": full once the root README is rewritten; the meta file's write then fails,
    # and the README (written a moment ago) must go back.
    disk = full_at(point, lambda: (built / "README.md").read_bytes() != readme)
    with pytest.raises(StoreError, match="nothing was changed") as failed:
        make_workflow(min_tokens=20, max_tokens=200).add(
            text=topic_document({"python": 2, "docker": 3})
        )
    assert NO_SPACE in str(failed.value)
    assert disk.full, "the disk never filled: the test tested nothing"
    disk.full = False
    faults.install(None)
    after = snapshot(built)
    changed = differing(before, after)
    assert not changed, f"changed although 'nothing was changed': {changed}"
    assert after[META_FILE] == before[META_FILE]
    assert folders(built) == dirs_before
    assert git(built, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(built, "rev-parse", "HEAD") == head

    # Space again: the next operation records no "Manual edits" of the app's own.
    make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document({"docker": 3}))
    log = git(built, "log", "--format=%s").splitlines()
    assert not [s for s in log if "Manual" in s or "outside the app" in s], log
    assert git(built, "status", "--porcelain") == ""
    assert not (built / ".gam" / "cache" / "undo").exists() or not any(
        (built / ".gam" / "cache" / "undo").iterdir()
    )


def test_a_reorganize_that_empties_folders_is_undone_without_space(
    make_workflow, built: Path, full_at
) -> None:
    """Moves, deletes and folders removed when emptied are put back as they were; making a
    folder again needs space too."""
    from gam_desktop.engine.history.versioned import VersionedFolder
    from gam_desktop.engine.store.changeset import ChangeSet
    from gam_desktop.engine.store.folder import MemoryFolder

    before, dirs_before = snapshot(built), folders(built)
    memories = sorted(p for p in before if p.endswith(".md") and "/" in p and "README" not in p)
    moved_from = memories[0]
    deleted_folder = {p.rsplit("/", 1)[0] for p in memories} - {moved_from.rsplit("/", 1)[0]}
    gone = sorted(p for p in memories if p.rsplit("/", 1)[0] in deleted_folder)
    assert gone, memories
    versioned = VersionedFolder(MemoryFolder(built))
    changes = ChangeSet(
        writes={META_FILE: "{}", "README.md": "# changed\n"},
        moves=[(moved_from, f"elsewhere/{moved_from.rsplit('/', 1)[-1]}")],
        deletes=gone,
    )
    disk = full_at("staged")
    with (
        pytest.raises(StoreError, match="nothing was changed"),
        versioned.operation("reorganize") as transaction,
    ):
        transaction.write(changes, "Reorganized", {"Gam-Operation": "reorganize"})
    assert disk.full
    disk.full = False
    faults.install(None)
    after = snapshot(built)
    assert differing(before, after) == []
    assert folders(built) == dirs_before
    assert git(built, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_index_is_put_back_as_it_was(make_workflow, built: Path, full_at) -> None:
    """`git reset` writes a new index, which a full disk refuses: the index staged for the
    failed commit must go back without it."""
    staged = git(built, "ls-files", "--stage")
    full_at("staged")
    with pytest.raises(StoreError):
        make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document({"git": 3}))
    faults.install(None)
    assert git(built, "ls-files", "--stage") == staged
    assert "??" not in git(built, "status", "--porcelain", "--untracked-files=all")


def test_a_put_back_that_fails_does_not_say_nothing_was_changed(
    make_workflow, built: Path, full_at, monkeypatch
) -> None:
    """Should a file not go back (another program holds it), the message says so and the
    journal stays: the next operation asks for recovery instead of recording the app's
    half-undone write as "Manual edits"."""
    real_replace = os.replace
    full_at("staged")

    def replace(src, dst, *args, **kwargs):
        if faults._hook is not None and str(dst).endswith(META_FILE) and "undo" in str(src):
            raise PermissionError(errno.EACCES, "The process cannot access the file", str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(StoreError) as failed:
        make_workflow(min_tokens=20, max_tokens=200).add(text=topic_document({"git": 3}))
    message = str(failed.value)
    assert "nothing was changed" not in message
    assert META_FILE in message and "recover" in message
    monkeypatch.setattr(os, "replace", real_replace)
    faults.install(None)
    interrupted = make_workflow().interrupted()
    assert interrupted is not None and interrupted.operation == "add"


# -- a real full disk (a small tmpfs in a private mount namespace) ----------------------------

DRIVER = r"""
import json, os, subprocess, sys
memory, scratch, text = sys.argv[1:4]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", scratch], check=True)
subprocess.run(["cp", "-a", f"{memory}/.", scratch], check=True)
subprocess.run(["mount", "--bind", scratch, memory], check=True)
filler = os.path.join(memory, ".gam", "cache", "filler")

def fill(point):
    if point != "staged" or os.path.exists(filler):
        return
    os.makedirs(os.path.dirname(filler), exist_ok=True)
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    for size in (1 << 20, 4096, 1):
        try:
            while True:
                os.write(fd, b"\0" * size)
        except OSError:
            pass
    os.close(fd)

def snapshot():
    out = {}
    for base, dirs, files in os.walk(memory):
        for name in files:
            path = os.path.join(base, name)
            rel = os.path.relpath(path, memory)
            if rel.startswith((".git/objects", ".git/logs", ".gam/cache", ".gam/lock")):
                continue
            out[rel] = open(path, "rb").read().hex()
    out[".git/index"] = git("ls-files", "--stage")  # its file times are refreshed first
    return out

def git(*args):
    return subprocess.run(["git", "-C", memory, *args], capture_output=True, text=True).stdout

from gam_desktop.engine.store import faults
from gam_desktop.cli import add_main
args = ["--gam-dir", memory, "--text", text, "-q", "--min-tokens", "20", "--max-tokens", "200"]
before = snapshot()
faults.install(fill)
import contextlib, io
err = io.StringIO()
with contextlib.redirect_stderr(err):
    full_rc = add_main(args)
faults.install(None)
after = snapshot()
changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
status_full = git("status", "--porcelain", "--untracked-files=all")
filled = os.path.exists(filler)
os.unlink(filler)
err2 = io.StringIO()
with contextlib.redirect_stderr(err2):
    again_rc = add_main(args)
print(json.dumps({
    "full_rc": full_rc, "full_err": err.getvalue(), "changed": changed, "filled": filled,
    "status_full": status_full, "again_rc": again_rc, "again_err": err2.getvalue(),
    "log": git("log", "--format=%s"), "status_again": git("status", "--porcelain"),
}))
"""


@pytest.mark.linux_only("a tiny tmpfs in a private mount namespace (root)")
def test_a_really_full_disk_at_the_commit(llm_server, tmp_path: Path) -> None:
    """The whole memory on a disk that fills after `git add`: write-tree cannot store its
    trees, and the files written a moment ago must go back although nothing more fits."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare")
    memory = tmp_path / "memory"
    built = run_cli(
        ["--gam-dir", str(memory), "--text", topic_document({"python": 3}), "-q"],
        llm_server.base_url,
    )
    assert built.returncode == 0, built.stderr
    (tmp_path / "scratch").mkdir()
    env = {
        **os.environ,
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_MODEL": "scripted",
        "OPENAI_API_KEY": "test-key",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    out = subprocess.run(
        [
            "unshare",
            "-m",
            sys.executable,
            "-c",
            DRIVER,
            str(memory),
            str(tmp_path / "scratch"),
            topic_document({"rust": 3, "docker": 2}),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["filled"]
    assert seen["full_rc"] == 1, seen["full_err"]
    assert "nothing was changed" in seen["full_err"], seen["full_err"]
    assert seen["changed"] == [], f"changed although 'nothing was changed': {seen['changed']}"
    assert seen["status_full"] == ""
    assert seen["again_rc"] == 0, seen["again_err"]
    assert "Manual edits" not in seen["log"], seen["log"]
    assert seen["status_again"] == ""
