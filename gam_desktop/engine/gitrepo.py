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

from gam_desktop.engine.folder import UNTRACKED

APP_AUTHOR = ("GAM Desktop", "gam-desktop@localhost")
GITIGNORE_LINES = UNTRACKED
NO_GIT_MESSAGE = (
    "History is unavailable: git was not found. Install git "
    "(https://git-scm.com/downloads) or set its path in Settings; building and "
    "asking questions work without it."
)


class GitUnavailable(RuntimeError):
    """No usable git executable; str() says what to do."""


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
    def __init__(self, root: Path, repo: Any, gitmodule: Any) -> None:
        self.root = root
        self.repo = repo
        self._git = gitmodule

    @classmethod
    def open(cls, root: str | Path, git_path: str | None = None) -> MemoryRepo:
        """The folder's repository, created if missing (an existing one is used as it is)."""
        executable = find_git(git_path)
        if executable is None:
            raise GitUnavailable(NO_GIT_MESSAGE)
        gitmodule = _gitpython(executable)
        folder = Path(root).resolve()
        existing = (folder / ".git").exists()  # an existing repository is used as it is
        repo = gitmodule.Repo(folder) if existing else gitmodule.Repo.init(folder)
        memory = cls(folder, repo, gitmodule)
        memory._ensure_gitignore()
        return memory

    def _ensure_gitignore(self) -> None:
        path = self.root / ".gitignore"
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        missing = [line for line in GITIGNORE_LINES if line not in text.splitlines()]
        if missing:  # append, never rewrite what the user keeps there
            prefix = "" if not text or text.endswith("\n") else "\n"
            path.write_text(text + prefix + "\n".join(missing) + "\n", encoding="utf-8")

    # -- running git -------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        if not self._configured("user.name") or not self._configured("user.email"):
            name, email = APP_AUTHOR
            env.update(
                GIT_AUTHOR_NAME=name,
                GIT_AUTHOR_EMAIL=email,
                GIT_COMMITTER_NAME=name,
                GIT_COMMITTER_EMAIL=email,
            )
        return env

    def _configured(self, key: str) -> bool:
        try:
            return bool(self.repo.git.config("--get", key))
        except self._git.GitCommandError:
            return False

    def git(self, *args: str, check: bool = True) -> str:
        """Run git in the memory folder; returns stdout."""
        try:
            return self.repo.git.execute(["git", *args], env={**os.environ, **self._env()})
        except self._git.GitCommandError as exc:
            if check:
                raise
            return str(exc.stdout or "")

    # -- state -------------------------------------------------------------------------

    def head(self) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "-q", "HEAD").strip() or None
        except self._git.GitCommandError:
            return None

    def dirty_paths(self) -> list[str]:
        out = self.git("status", "--porcelain", "-z", "--untracked-files=all")
        return [entry[3:] for entry in out.split("\0") if len(entry) > 3]

    def commit_all(self, summary: str, trailers: dict[str, str] | None = None) -> str | None:
        """Stage everything and commit; None when there was nothing to commit."""
        self.git("add", "-A")
        if not self.git("diff", "--cached", "--name-only") and self.head() is not None:
            return None
        message = summary.strip()
        if trailers:
            message += "\n\n" + "\n".join(f"{k}: {v}" for k, v in trailers.items())
        self.git("commit", "-q", "--no-verify", "--allow-empty", "-m", message)
        return self.head()
