"""The memory folder's git repository, behind a small interface.

GitPython needs a git executable and, by default, refuses to import without one;
it is imported lazily with GIT_PYTHON_REFRESH=quiet so that a machine without git
still builds and answers, with history switched off and a plain message why.
Staging uses `git add -A` through `repo.git` (GitPython's index.add is far slower
on large trees). Commits carry an app identity when the user has none configured.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from gam_desktop.engine import faults
from gam_desktop.engine.changeset import StoreError
from gam_desktop.engine.folder import UNTRACKED
from gam_desktop.engine.links import is_absent

APP_AUTHOR = ("GAM Desktop", "gam-desktop@localhost")
GITIGNORE_LINES = UNTRACKED
NO_GIT_MESSAGE = (
    "History is unavailable: git was not found. Install git "
    "(https://git-scm.com/downloads) or set its path in Settings; building and "
    "asking questions work without it."
)


class GitUnavailable(RuntimeError):
    """No usable git executable; str() says what to do."""


class GitFailed(StoreError):
    """A git command failed in the memory folder (a full disk, a damaged repository);
    str() is one line with git's own last words."""

    def __init__(self, exc: Exception, what: str = "git failed in the memory folder") -> None:
        stderr = str(getattr(exc, "stderr", "") or exc).strip().splitlines()
        detail = next((ln.strip() for ln in reversed(stderr) if ln.strip()), "git failed")
        detail = detail.removeprefix("stderr: ").strip("' ")
        out_of_space = "space" in detail.lower()
        super().__init__(28 if out_of_space else 5, f"{what} ({detail})")  # ENOSPC / EIO
        self.stdout = str(getattr(exc, "stdout", "") or "")


class HistoryWriteError(GitFailed):
    """git could not record a change; the operation's files were put back."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(exc, "could not record the change in the memory's history")
        self.strerror = f"{self.strerror}; nothing was changed"


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
        memory._ensure_gitignore()
        return memory

    def _ensure_gitignore(self) -> None:
        path = self.root / ".gitignore"
        if path.is_symlink():  # the user's own arrangement: never read or write through it
            return
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        missing = [line for line in GITIGNORE_LINES if line not in text.splitlines()]
        if missing:  # append, never rewrite what the user keeps there
            prefix = "" if not text or text.endswith("\n") else "\n"
            path.write_text(text + prefix + "\n".join(missing) + "\n", encoding="utf-8")

    # -- running git -------------------------------------------------------------------

    def _run(self, args: tuple[str, ...], env: dict[str, str]) -> str:
        command = [self.executable, "-C", str(self.root), *args]
        # GIT_OPTIONAL_LOCKS=0: `git status` would refresh and rewrite the index, which
        # fails on a full disk and races with the user's own git.
        base = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
        return self._runner.execute(command, env={**os.environ, **base, **env})

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

    def git(self, *args: str, check: bool = True) -> str:
        """Run git in the memory folder; returns stdout."""
        try:
            return self._run(args, self._author())
        except self._git.GitCommandError as exc:
            if check:
                raise GitFailed(exc) from exc
            return str(exc.stdout or "")

    # -- state -------------------------------------------------------------------------

    def head(self) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "-q", "HEAD").strip() or None
        except GitFailed:
            return None

    def dirty_paths(self) -> list[str]:
        out = self.git("status", "--porcelain", "-z", "--untracked-files=all")
        return [entry[3:] for entry in out.split("\0") if len(entry) > 3]

    def stage_all(self) -> None:
        """`git add -A`, leaving out links that leave the memory (their targets are not
        the memory's to record; the engine treats them as absent)."""
        links_out = [
            f":(exclude,literal){path}"
            for path in self.dirty_paths()
            if is_absent(self.root, self.root / path)
        ]
        self.git("add", "-A", "--", ".", *links_out)

    def commit_all(self, summary: str, trailers: dict[str, str] | None = None) -> str | None:
        """Stage everything and commit; None when there was nothing to commit. A git
        failure (a full disk, a broken repository) raises HistoryWriteError, one line."""
        try:
            self.stage_all()
            faults.reached("staged")
            if not self.git("diff", "--cached", "--name-only") and self.head() is not None:
                return None
            message = summary.strip()
            if trailers:
                message += "\n\n" + "\n".join(f"{k}: {v}" for k, v in trailers.items())
            self.git("commit", "-q", "--no-verify", "--allow-empty", "-m", message)
        except GitFailed as exc:
            raise HistoryWriteError(exc.__cause__ or exc) from exc
        return self.head()

    def unstage_all(self) -> None:
        """Undo a `stage_all` whose commit failed (best effort: the disk may still be full)."""
        self.git("reset", "-q", check=False)
