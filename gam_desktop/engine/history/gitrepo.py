"""The memory folder's git repository, behind a small interface.

GitPython needs a git executable and, by default, refuses to import without one;
it is imported lazily with GIT_PYTHON_REFRESH=quiet so that a machine without git
still builds and answers, with history switched off and a plain message why.
Staging uses `git add -A` through `repo.git` (GitPython's index.add is far slower
on large trees). Commits carry an app identity when the user has none configured.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.store import faults
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.folder import CACHE_DIR, UNTRACKED
from gam_desktop.engine.store.links import is_absent

APP_AUTHOR = ("GAM Desktop", "gam-desktop@localhost")
NO_GIT_MESSAGE = (
    "History is unavailable: git was not found. Install git "
    "(https://git-scm.com/downloads) or set its path in Settings; building and "
    "asking questions work without it."
)


class GitUnavailable(GamError, RuntimeError):
    """No usable git executable, or history is off for this memory; str() says what to do
    (it is also shown alone, above the History tab), so there is no separate advice to
    repeat it."""

    title = "History is unavailable"


class GitFailed(StoreError):
    """A git command failed in the memory folder (a full disk, a damaged repository);
    str() is one line with git's own last words."""

    def __init__(self, exc: Exception, what: str = "git failed in the memory folder") -> None:
        stderr = str(getattr(exc, "stderr", "") or exc).strip().splitlines()
        detail = next((ln.strip() for ln in reversed(stderr) if ln.strip()), "git failed")
        detail = detail.removeprefix("stderr: ").strip("' ")
        out_of_space = "space" in detail.lower()
        super().__init__(28 if out_of_space else 5, f"{what} ({detail})")  # ENOSPC / EIO


class HistoryWriteError(GitFailed):
    """git could not record a change; the operation's files were put back."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(exc, "could not record the change in the memory's history")
        self.strerror = f"{self.strerror}; nothing was changed"


class GitMissing(GitFailed):
    """The chosen git executable could not be started (uninstalled, moved, or not
    executable since the memory was opened); GitPython's GitCommandNotFound is no
    GitCommandError, so without this it escaped every handler. str() says what to do."""

    title = "git could not be started"
    advice = ""

    def __init__(self, executable: str) -> None:
        StoreError.__init__(
            self,
            2,  # ENOENT
            f"git could not be started ({executable}). Install git "
            "(https://git-scm.com/downloads) or set its path in Settings, then try again",
        )


XCODE_SELECT = "/usr/bin/xcode-select"


def _usable(path: str) -> bool:
    """macOS ships /usr/bin/git as a shim that opens the "install the command line developer
    tools" dialog when they are missing; ask xcode-select instead of running the shim."""
    if sys.platform == "darwin" and os.path.realpath(path) == "/usr/bin/git":
        try:
            found = subprocess.run([XCODE_SELECT, "-p"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return found.returncode == 0
    return True


def find_git(setting: str | None = None) -> str | None:
    """The git to use: a configured path, a copy bundled with the app, then PATH."""
    candidates = [setting] if setting else []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        exe = "git.exe" if os.name == "nt" else "git"
        candidates += [
            str(Path(bundle) / "git" / "cmd" / exe),
            str(Path(bundle) / "git" / "bin" / exe),
        ]
    candidates.append(shutil.which("git") or "")
    return next(
        (c for c in candidates if c and Path(c).is_file() and os.access(c, os.X_OK) and _usable(c)),
        None,
    )


def _gitpython(executable: str) -> Any:
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
    import git

    git.refresh(executable)
    return git


log = logging.getLogger(__name__)

SAFE_CONFIG = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    f"core.hooksPath={os.devnull}",  # not a folder: no hook is ever found
    "-c",
    "commit.gpgSign=false",  # a signing program named by someone's config never runs
    # Files are written with LF and must come back byte for byte after a rollback (the
    # Windows default autocrlf=true would rewrite every restored file, and the watcher
    # would see outside edits); long paths work on Windows' git.
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.longpaths=true",
)
# A big memory's index is split: its files' entries stay in a shared file rewritten only when
# a fifth of them changed, and each operation writes a small index of what it changed (at
# 100,000 files staging and write-tree take ~25 ms each instead of ~95 ms: git rewrote and
# hashed 15 MB twice). Only past ~35,000 files: some tools that read .git/index themselves
# (GitPython's index, libgit2, isomorphic-git) do not read a split one. Shared files left by
# earlier splits go after an hour, not git's two weeks (15 MB each at 100,000 files).
SPLIT_INDEX_BYTES = 5_000_000
SPLIT_INDEX = ("-c", "core.splitIndex=true", "-c", "splitIndex.sharedIndexExpire=1.hour.ago")


# The caller's git variables that would point git at another repository (run from a git
# hook, or a shell exporting GIT_DIR / GIT_INDEX_FILE, the memory was committed into the
# user's project). GitPython merges os.environ into every call, so they cannot be removed:
# each is pinned to the memory's own repository, or to its neutral value.
_PINNED_ELSEWHERE = {
    "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
    "GIT_NAMESPACE": "",
    "GIT_CONFIG_PARAMETERS": "",
    "GIT_CONFIG_COUNT": "0",
    "GIT_CEILING_DIRECTORIES": "",
    "GIT_PREFIX": "",
    "GIT_QUARANTINE_PATH": "",
    "GIT_REPLACE_REF_BASE": "",
}


def git_environment(root: Path) -> dict[str, str]:
    """Variables that make git act on `root`'s repository whatever the caller exported."""
    git_dir = root / ".git"
    if git_dir.is_file():  # a worktree or submodule: "gitdir: <path>"
        pointer = git_dir.read_text(encoding="utf-8", errors="replace").partition("gitdir:")[2]
        git_dir = (root / pointer.strip()).resolve()
    common = git_dir
    if (git_dir / "commondir").is_file():
        common = (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
    pinned = {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(root),
        "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_COMMON_DIR": str(common),
        "GIT_OBJECT_DIRECTORY": str(common / "objects"),
    }
    caller = {k: v for k, v in _PINNED_ELSEWHERE.items() if k in os.environ}
    return {**caller, **pinned}


NO_DRIVERS = "* !filter !merge !diff"  # attributes back to unspecified: git's built-ins


def _append_missing(path: Path, lines: tuple[str, ...], last: bool = False) -> None:
    """Append the `lines` a rules file lacks (all of them again when `last` and they are
    not its final lines); what the user keeps there stays. Never written through a link:
    git would then read the link's target, which is not ours to change."""
    if path.is_symlink() or path.parent.is_symlink():
        return
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    present = [line.strip() for line in text.splitlines() if line.strip()]
    if last:
        missing = list(lines) if present[-len(lines) :] != list(lines) else []
    else:
        missing = [line for line in lines if line not in present]
    if missing:
        prefix = "" if not text or text.endswith("\n") else "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + prefix + "\n".join(missing) + "\n", encoding="utf-8")


class MemoryRepo:
    def __init__(self, root: Path, executable: str, gitmodule: Any) -> None:
        self.root = root
        self.executable = executable
        self._git = gitmodule
        # No working directory and no Repo object: GitPython expands $VARS in the paths it
        # is given ("notes $USER" became another folder), so every call names the folder
        # with `git -C <root>` and runs the executable find_git chose, not PATH's.
        self._runner = gitmodule.Git()
        self._identity: dict[str, str] | None = None

    @classmethod
    def open(cls, root: str | Path, git_path: str | None = None) -> MemoryRepo:
        """The folder's repository, created if missing (an existing one is used as it is)."""
        executable = find_git(git_path)
        if executable is None:
            raise GitUnavailable(NO_GIT_MESSAGE)
        gitmodule = _gitpython(executable)
        memory = cls(Path(root).resolve(), executable, gitmodule)
        if not (memory.root / ".git").exists():
            try:
                memory._run(("init", "-q"), {})
            except gitmodule.GitCommandError as exc:
                raise GitFailed(exc, "could not start the memory's history") from exc
        memory._ensure_private_rules()
        return memory

    def _ensure_private_rules(self) -> None:
        """Rules in the repository's own info/ folder (the user's .gitignore and
        .gitattributes are theirs, and never written):
        - exclude: the app's private files (.gam/cache, the lock, the journal) stay out of git;
        - attributes: no filter, merge or diff driver named by the memory's .gitattributes
          runs (their commands come from the memory's .git/config, which is untrusted like
          the rest of a folder that arrives as a zip). info/attributes is read last and its
          last line wins, so the rule must be the file's last line."""
        info = Path(git_environment(self.root)["GIT_COMMON_DIR"]) / "info"
        _append_missing(info / "exclude", UNTRACKED)
        attributes = info / "attributes"
        if attributes.is_symlink() or info.is_symlink():  # its target is not ours to write
            raise GitUnavailable(
                f"History is off for this memory: {attributes} is a link, so the app cannot "
                "keep the commands it may name from running. Make it a plain file to turn "
                "history on; building and asking questions work without it."
            )
        _append_missing(attributes, (NO_DRIVERS,), last=True)

    # -- running git -------------------------------------------------------------------

    def _run(self, args: tuple[str, ...], env: dict[str, str], stdin: Any = None) -> str:
        # A memory is untrusted ground (it may arrive as a zip or through a synced folder):
        # its .git/config must not run commands (fsmonitor) nor its hooks run at all.
        # safe.directory: exFAT and network shares report another owner and git would
        # refuse the memory ("dubious ownership"); its config is neutralized above anyway.
        trusted = ("-c", f"safe.directory={self.root}")
        split = SPLIT_INDEX if self._index_bytes() >= SPLIT_INDEX_BYTES else ()
        command = [self.executable, "-C", str(self.root), *SAFE_CONFIG, *split, *trusted, *args]
        # GIT_OPTIONAL_LOCKS=0: `git status` would refresh and rewrite the index, racing
        # with the user's own git and failing on a full disk; only the status an operation
        # starts with, under the writer lock, may (and is asked again without, if it fails).
        base = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
        pinned = git_environment(self.root)
        try:
            out = self._runner.execute(command, env={**pinned, **base, **env}, istream=stdin)
            return str(out)
        except self._git.GitCommandNotFound as exc:
            raise GitMissing(self.executable) from exc

    def _author(self) -> dict[str, str]:
        """The app's identity for commits, when the user has configured none (asked once)."""
        if self._identity is None:
            configured = all(self._configured(key) for key in ("user.name", "user.email"))
            name, email = APP_AUTHOR
            self._identity = (
                {}
                if configured
                else {
                    "GIT_AUTHOR_NAME": name,
                    "GIT_AUTHOR_EMAIL": email,
                    "GIT_COMMITTER_NAME": name,
                    "GIT_COMMITTER_EMAIL": email,
                }
            )
        return self._identity

    def _configured(self, key: str) -> bool:
        try:
            return bool(self._run(("config", "--get", key), {}).strip())
        except self._git.GitCommandError:
            return False

    def git(self, *args: str, check: bool = True, stdin: Any = None, locks: bool = False) -> str:
        """Run git in the memory folder; returns stdout. With `locks`, git may take the
        locks of its optional work (refreshing the index), skipping it when it cannot."""
        env = {**self._author(), **({"GIT_OPTIONAL_LOCKS": "1"} if locks else {})}
        try:
            try:
                return self._run(args, env, stdin)
            except self._git.GitCommandError as exc:
                if "sharedindex" not in str(exc.stderr or "") or not self._rebuild_index():
                    raise
                if stdin is not None and hasattr(stdin, "seek"):  # git stops at the index
                    stdin.seek(0)  # before it reads the paths; should it not, all again
                return self._run(args, env, stdin)
        except self._git.GitCommandError as exc:
            if check:
                raise GitFailed(exc) from exc
            return str(exc.stdout or "")

    def _index_bytes(self) -> int:
        """The size of the index's entries: its file, or the shared file of a split one."""
        git_dir = self.root / ".git"
        sizes = [0]
        for path in (git_dir / "index", *git_dir.glob("sharedindex.*")):
            with contextlib.suppress(OSError):
                sizes.append(path.stat().st_size)
        return max(sizes)

    def _rebuild_index(self) -> bool:
        """A split index whose shared file is gone (a sync tool or a partial copy left the
        small part without it) makes every git command fail: the index is made again from
        the last commit (git compares every file's time once more, then all is as before).
        False when there is no commit to make it from."""
        try:  # not through git(), which would come back here
            self._run(("rev-parse", "--verify", "-q", "HEAD"), {})
        except self._git.GitCommandError:
            return False
        log.warning("the memory's git index had lost its shared part; made again from HEAD")
        with contextlib.suppress(FileNotFoundError):
            (self.root / ".git" / "index").unlink()
        self._run(("read-tree", "HEAD"), {})
        return True

    # -- state -------------------------------------------------------------------------

    def head(self) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "-q", "HEAD").strip() or None
        except GitFailed:
            return None

    def dirty_paths(self) -> list[str]:
        return list(self.status())

    def status(self, refresh: bool = False) -> dict[str, str]:
        """Every path that differs from the last commit, with git's two-letter status ("??"
        untracked, " M" modified, "D " deleted and staged, ...; a rename's old path is
        listed as deleted). With `refresh` git may also rewrite the index's file times
        when they went stale (a copied or restored folder: otherwise every later status
        reads all 100,000 files again to compare them)."""
        # git's untracked cache: each folder's listing kept in the index with the folder's
        # time, read again only when the folder changed (a status of 100,000 files lists
        # 2,000 folders for ~7 ms, not every file for ~170 ms). git keeps it for -uall only
        # when status.showUntrackedFiles says all; given here, not written into the
        # memory's config (the user's own `git status` is theirs).
        command = (
            *("-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=all"),
            *("status", "--porcelain", "-z", "--untracked-files=all"),
        )
        try:
            out = self.git(*command, locks=refresh)
        except GitFailed:  # the refresh could not be written (a full disk): without it
            if not refresh:
                raise
            out = self.git(*command)
        entries = iter(out.split("\0"))
        found: dict[str, str] = {}
        for entry in entries:
            if len(entry) > 3:
                found[entry[3:]] = entry[:2]
                if entry[0] in "RC":  # the old path follows
                    found[next(entries, "")] = "D "
        found.pop("", None)
        return found

    def stage_all(self) -> None:
        """`git add -A`, leaving out links that leave the memory (their targets are not
        the memory's to record; the engine treats them as absent)."""
        links_out = [
            f":(exclude,literal){path}"
            for path in self.dirty_paths()
            if is_absent(self.root, self.root / path)
        ]
        self.git("add", "-A", "--", ".", *links_out)

    def commit_dirty(
        self, summary: str, trailers: dict[str, str], dirty: Iterable[str]
    ) -> str | None:
        """Commit the paths a status listed, as `stage_all` stages them (links that leave
        the memory left out, and repositories nested in it), without it scanning every
        file again (twice: a second at 100,000 files)."""
        paths = {
            p for p in dirty if not p.endswith("/") and not is_absent(self.root, self.root / p)
        }
        return self.commit_all(summary, trailers, paths=paths)

    @contextlib.contextmanager
    def _paths_file(self, lines: list[str]) -> Iterator[BinaryIO]:
        """NUL-separated `lines` as git's stdin: many paths go through a file, never the
        command line (Windows caps a command at 32k characters)."""
        listing = self.root / CACHE_DIR / "paths"
        listing.parent.mkdir(parents=True, exist_ok=True)
        listing.write_bytes(b"".join(line.encode("utf-8") + b"\0" for line in lines))
        try:
            with listing.open("rb") as names:
                yield names
        finally:
            listing.unlink(missing_ok=True)

    def stage_paths(self, paths: set[str]) -> None:
        """Stage exactly `paths` (written, moved or deleted): a file someone else saved
        meanwhile is not folded into the app's commit."""
        with self._paths_file(sorted(paths)) as names:
            # update-index, not add: a path already gone and never tracked is no error
            self.git("update-index", "--add", "--remove", "-z", "--stdin", stdin=names)

    def checkout_from_head(self, paths: set[str]) -> None:
        """Put `paths` back as the last commit has them."""
        if not paths:
            return
        with self._paths_file([f":(literal){p}" for p in sorted(paths)]) as names:
            self.git(
                "checkout", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=names
            )

    def commit_all(
        self,
        summary: str,
        trailers: dict[str, str] | None = None,
        paths: set[str] | None = None,
    ) -> str | None:
        """Stage everything (or only `paths`) and commit; None when there was nothing to
        commit. A git failure (a full disk, a broken repository) raises HistoryWriteError."""
        try:
            if paths is None:
                self.stage_all()
            elif paths:
                self.stage_paths(paths)
            faults.reached("staged")
            message = one_line(summary)
            if trailers:  # a value with a newline would forge another trailer
                message += "\n\n" + "\n".join(f"{k}: {one_line(v)}" for k, v in trailers.items())
            return self._commit_index(message)
        except GitFailed as exc:
            cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
            raise HistoryWriteError(cause) from exc

    def _commit_index(self, message: str) -> str | None:
        """Commit what is staged (None when that is what the last commit holds), with git's
        plumbing: `git commit` also re-reads the time of every file (a third of a second
        at 100,000 files) and writes the index a second time."""
        tree = self.git("write-tree").strip()
        parent = self.head()
        if parent is not None and self.git("rev-parse", f"{parent}^{{tree}}").strip() == tree:
            return None
        below = ("-p", parent) if parent else ()
        sha = self.git("commit-tree", tree, *below, "-m", message).strip()
        # Only if HEAD is still the parent (another git of the user's moved it: fail).
        self.git(
            "update-ref", "-m", f"commit: {message.splitlines()[0]}", "HEAD", sha, parent or ""
        )
        self.git("gc", "--auto", "--quiet", check=False)  # as `git commit` does: pack loose objects
        return sha

    def unstage_all(self) -> None:
        """Undo a `stage_all` whose commit failed (best effort: the disk may still be full)."""
        self.git("reset", "-q", check=False)


def one_line(text: str) -> str:
    """`text` as one line of printable characters: a commit summary or trailer value made
    from a title, an id or a statement (untrusted; git refuses a NUL)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
