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
import stat
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from gam_desktop.engine.errors import GamError
from gam_desktop.engine.store import faults
from gam_desktop.engine.store.changeset import StoreError
from gam_desktop.engine.store.folder import CACHE_DIR, UNTRACKED
from gam_desktop.engine.store.gitdir import UnsafeRepositoryError, check_repository, kind_of
from gam_desktop.engine.store.links import (
    is_absent,
    linked_folder_error,
    resolve_within,
)

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


class UnsafeHistory(GitUnavailable):
    """The memory's repository leads out of it or would make git wait forever (a named
    pipe where it reads a file): history is off, and nothing is written to the memory
    (`refusal`, raised by every writing operation)."""

    def __init__(self, refusal: UnsafeRepositoryError) -> None:
        super().__init__(f"History is off for this memory: {refusal}")
        self.refusal = refusal


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


def bundled_git() -> str | None:
    """The git the packaged app carries, if any: MinGit on Windows (git/cmd/git.exe, which
    puts its own programs on its PATH), elsewhere a git built with RUNTIME_PREFIX
    (git/bin/git, which finds its helpers and templates beside itself wherever the app
    lies, as GitHub Desktop's dugite-native does): macOS has no git of its own without the
    Command Line Tools. Plain os.path: the tests simulate Windows by os.name."""
    bundle = getattr(sys, "_MEIPASS", None)
    if not bundle:
        return None
    if os.name == "nt":
        places = [("git", "cmd", "git.exe"), ("git", "bin", "git.exe")]
    else:
        places = [("git", "bin", "git")]
    found = (os.path.join(bundle, *place) for place in places)
    return next((path for path in found if os.path.isfile(path)), None)


def find_git(setting: str | None = None) -> str | None:
    """The git to use: a configured path, else the copy bundled with the app, else PATH's
    (on macOS /usr/bin/git only with the Command Line Tools: `_usable`)."""
    candidates = (setting, bundled_git(), shutil.which("git"))
    return next((c for c in candidates if c and _runnable(c)), None)


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK) and _usable(path)


def _gitpython(executable: str) -> Any:
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
    import git

    git.refresh(executable)
    return git


log = logging.getLogger(__name__)

# A memory is untrusted ground (it may arrive as a zip or through a synced folder): its
# .git/config, and whatever that includes, may name programs for git to run. Each key of
# git's that names a program is given on every call, where a command line's value wins
# over every file's: empty, ":" (an editor that edits nothing), "cat" (no pager) or a value
# that runs nothing. Keys with a name of their own in the middle (`diff.<driver>.command`)
# are read from the configuration itself (`MemoryRepo._neutralized`).
NEUTRAL_PROGRAMS: dict[str, str] = {
    "core.fsmonitor": "false",
    "core.hooksPath": os.devnull,  # not a folder: no hook is ever found
    "commit.gpgSign": "false",  # a signing program named by someone's config never runs
    "tag.gpgSign": "false",
    "log.showSignature": "false",  # `git log` would run gpg.program once per signed commit
    "merge.verifySignatures": "false",
    "gpg.program": "",
    "gpg.openpgp.program": "",
    "gpg.x509.program": "",
    "gpg.ssh.program": "",
    "gpg.ssh.defaultKeyCommand": "",
    "core.pager": "cat",  # git's own word for "no pager"
    "core.editor": ":",  # git's own word for "no editor"
    "sequence.editor": ":",
    "core.askPass": "",
    "diff.external": "",  # git diff and git log -p would run it for every file
    "interactive.diffFilter": "",
    "credential.helper": "",  # an empty value forgets every helper listed before it
    "core.sshCommand": "",
    "core.gitProxy": "",
    "core.alternateRefsCommand": "",
    "uploadpack.packObjectsHook": "",
    # The engine never fetches nor pushes: no transport at all (which would also run
    # credential helpers, ssh, proxies, `ext::` commands, a promisor remote's lazy fetch).
    "protocol.allow": "never",
    # A repository nested in the memory as a submodule has a config of its own, which
    # none of this reaches (its filters ran when `git status` looked inside it): git
    # never goes into one (status is also told on its command line, see `status`).
    "submodule.recurse": "false",
    "diff.ignoreSubmodules": "all",
    "status.submoduleSummary": "false",
}
# Keys of programs under a name of the config's own choosing (section.<name>.key), and the
# value that runs nothing; matched case-insensitively on what `git config --list` prints.
NAMED_PROGRAMS: tuple[tuple[str, str, str], ...] = (
    ("gpg", "program", ""),
    ("diff", "command", ""),
    ("diff", "textconv", ""),
    ("merge", "driver", ""),
    ("filter", "clean", ""),
    ("filter", "smudge", ""),
    ("filter", "process", ""),
    ("filter", "required", "false"),
    ("credential", "helper", ""),
    ("remote", "uploadpack", ""),
    ("remote", "receivepack", ""),
    ("remote", "proxy", ""),
    ("protocol", "allow", "never"),
    ("difftool", "cmd", ""),
    ("mergetool", "cmd", ""),
    ("trailer", "command", ""),
    ("trailer", "cmd", ""),
    ("submodule", "update", "none"),
    ("submodule", "ignore", "all"),
    ("browser", "cmd", ""),
    ("man", "cmd", ""),
    ("sendemail", "smtpserver", ""),
    ("sendemail", "tocmd", ""),
    ("sendemail", "cccmd", ""),
    ("guitool", "cmd", ""),
)


def _as_options(pairs: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    return tuple(arg for key, value in pairs for arg in ("-c", f"{key}={value}"))


SAFE_CONFIG = (
    *_as_options(NEUTRAL_PROGRAMS.items()),
    # Files are written with LF and must come back byte for byte after a rollback (the
    # Windows default autocrlf=true would rewrite every restored file, and the watcher
    # would see outside edits); long paths work on Windows' git.
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.longpaths=true",
)
# The same for the programs git takes from the environment before any configuration
# (the caller's own GIT_* variables are the user's, and stay, except these).
NEUTRAL_ENVIRONMENT = {
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_PAGER": "cat",
    "GIT_NO_LAZY_FETCH": "1",
}


def neutral_overrides(listing: str) -> list[tuple[str, str]]:
    """From `git config --list -z` output, the keys naming a program under a name of the
    config's own (`diff.<driver>.textconv`), each with the value that runs nothing. A key
    whose name holds "=" cannot be given with -c: it is left out (only drivers, switched
    off by NO_DRIVERS, and credentials for transports, forbidden, can have such a name)."""
    found: dict[str, str] = {}
    for entry in listing.split("\0"):
        key = entry.split("\n", 1)[0]
        section, _, rest = key.partition(".")
        name, _, variable = rest.rpartition(".")
        if section.lower() == "pager" and rest and "=" not in key:  # pager.<command>
            found[key] = "false"
            continue
        if not name or "=" in key:
            continue
        for wanted_section, wanted_variable, value in NAMED_PROGRAMS:
            if section.lower() == wanted_section and variable.lower() == wanted_variable:
                found[key] = value
    return sorted(found.items())


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
    """Variables that make git act on `root`'s repository whatever the caller exported.
    Always the folder `.git` itself: a `gitdir:` file, a link or a `commondir` leading
    elsewhere is refused before git runs (`store.gitdir.check_repository`), and pinned
    here should one appear meanwhile."""
    git_dir = root / ".git"
    pinned = {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(root),
        "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_COMMON_DIR": str(git_dir),
        "GIT_OBJECT_DIRECTORY": str(git_dir / "objects"),
    }
    caller = {k: v for k, v in _PINNED_ELSEWHERE.items() if k in os.environ}
    return {**caller, **pinned}


def _blind(args: tuple[str, ...]) -> tuple[str, ...]:
    """`git diff` never looks inside a submodule, whatever .gitmodules says (its own
    config's filters would run there): the command line wins over every setting."""
    at = 0
    while at < len(args) and args[at] == "-c":
        at += 2
    if args[at : at + 1] == ("diff",):
        return (*args[: at + 1], "--ignore-submodules=all", *args[at + 1 :])
    return args


Stamp = tuple[tuple[int, int, int, int] | None, ...]


def _stamp(files: Iterable[Path]) -> Stamp:
    """What tells a change of any of `files` (absent ones too: made later, they count)."""
    stamps: list[tuple[int, int, int, int] | None] = []
    for path in sorted(files):
        try:
            st = path.stat()
        except OSError:
            stamps.append(None)
            continue
        stamps.append((st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino))
    return tuple(stamps)


def _origins_and_entries(
    listing: str, root: Path
) -> tuple[set[Path], list[str], list[tuple[Path | None, str]]]:
    """`git config --list -z --show-origin` as the files it read (and those its include
    keys name, read or not), its "key\nvalue" entries, and each entry with its file."""
    fields = listing.split("\0")
    origins: set[Path] = set()
    entries: list[str] = []
    sourced: list[tuple[Path | None, str]] = []
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        entries.append(entry)
        if not origin.startswith("file:"):
            sourced.append((None, entry))
            continue  # the command line, standard input, a blob
        source = root / origin.removeprefix("file:")
        origins.add(source)
        sourced.append((source, entry))
        key, _, value = entry.partition("\n")
        if value and _is_include(key):
            origins.add(_included(source, value))
    return origins, entries, sourced


def _is_include(key: str) -> bool:
    lowered = key.lower()
    return lowered.startswith(("include.", "includeif.")) and lowered.endswith(".path")


def _included(source: Path, value: str) -> Path:
    """The file an include key of `source` names, as git finds it (relative to the file)."""
    return source.parent / Path(value).expanduser()


# Keys naming a file git reads in the commands the engine runs (status, add, diff, log,
# checkout, revert). Named by the memory's own configuration (not the user's) and leading
# out of the memory, each is given os.devnull: a named pipe or /dev/tty there would make
# every call wait forever, and what lies outside the memory is no business of its history.
FILE_KEYS = (
    "core.excludesfile",
    "core.attributesfile",
    "diff.orderfile",
    "mailmap.file",
    "commit.template",
    "blame.ignorerevsfile",
)
MAX_CONFIG_FILES = 64  # git itself stops at 10 levels of includes


def _unsafe(path: Path, what: str) -> UnsafeHistory:
    return UnsafeHistory(
        UnsafeRepositoryError(1, f"{path} {what}; nothing is written to this memory")
    )


def _waits(path: Path) -> bool:
    """Whether git opening `path` (following links) may wait forever or read without end:
    a named pipe, a socket, a device. A missing file is read as empty."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _outside_files(
    root: Path, sourced: list[tuple[Path | None, str]], own: set[Path]
) -> list[tuple[str, str]]:
    """-c overrides for FILE_KEYS that the memory's own configuration files (`own`) set to
    a file outside the memory (or not there: nothing to read)."""
    found: dict[str, str] = {}
    for source, entry in sourced:
        key, _, value = entry.partition("\n")
        if source not in own or key.lower() not in FILE_KEYS or not value:
            continue
        named = Path(value).expanduser()
        if resolve_within(root, named if named.is_absolute() else root / named) is None:
            found[key.lower()] = os.devnull
        else:
            found.pop(key.lower(), None)  # the last value wins, as in git
    return sorted(found.items())


NO_DRIVERS = "* !filter !merge !diff"  # attributes back to unspecified: git's built-ins


def _append_missing(path: Path, lines: tuple[str, ...], last: bool = False) -> None:
    """Append the `lines` a rules file lacks (all of them again when `last` and they are
    not its final lines); what the user keeps there stays. Never written through a link:
    git would then read the link's target, which is not ours to change."""
    if path.is_symlink() or path.parent.is_symlink() or _waits(path):
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
        # The configuration's files as last read, their stamp then, and the options that
        # neutralize the programs it names (see `_neutralized`).
        self._neutral: tuple[frozenset[Path], Stamp | None, tuple[str, ...]] = (
            frozenset(),
            None,
            (),
        )

    @classmethod
    def open(cls, root: str | Path, git_path: str | None = None) -> MemoryRepo:
        """The folder's repository, created if missing (an existing one is used as it is)."""
        executable = find_git(git_path)
        if executable is None:
            raise GitUnavailable(NO_GIT_MESSAGE)
        gitmodule = _gitpython(executable)
        memory = cls(Path(root).resolve(), executable, gitmodule)
        try:  # before git runs there (`git init` would follow a link) or the app reads it
            check_repository(memory.root)
        except UnsafeRepositoryError as exc:
            raise UnsafeHistory(exc) from exc
        if not os.path.lexists(memory.root / ".git"):
            try:
                memory._run(("init", "-q"), {})
            except gitmodule.GitCommandError as exc:
                raise GitFailed(exc, "could not start the memory's history") from exc
        memory._ensure_private_rules()
        memory._neutralized()  # its configuration checked now: history off, said at once
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
        # no program its .git/config names runs (NEUTRAL_PROGRAMS, `_neutralized`), nor
        # its hooks at all.
        split = SPLIT_INDEX if self._index_bytes() >= SPLIT_INDEX_BYTES else ()
        return self._execute((*self._neutralized(), *split, *_blind(args)), env, stdin)

    def _execute(self, args: tuple[str, ...], env: dict[str, str], stdin: Any = None) -> str:
        # safe.directory: exFAT and network shares report another owner and git would
        # refuse the memory ("dubious ownership"); its config is neutralized anyway.
        trusted = ("-c", f"safe.directory={self.root}")
        command = [
            self.executable,
            "--no-pager",
            "-C",
            str(self.root),
            *SAFE_CONFIG,
            *trusted,
            *args,
        ]
        # GIT_OPTIONAL_LOCKS=0: `git status` would refresh and rewrite the index, racing
        # with the user's own git and failing on a full disk; only the status an operation
        # starts with, under the writer lock, may (and is asked again without, if it fails).
        base = {
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
            "GIT_OPTIONAL_LOCKS": "0",
            **NEUTRAL_ENVIRONMENT,
        }
        pinned = git_environment(self.root)
        try:
            out = self._runner.execute(command, env={**pinned, **base, **env}, istream=stdin)
            return str(out)
        except self._git.GitCommandNotFound as exc:
            raise GitMissing(self.executable) from exc

    def _neutralized(self) -> tuple[str, ...]:
        """-c options giving each program the repository's configuration names under a name
        of its own (`diff.<driver>.textconv`, `credential.<url>.helper`: see NAMED_PROGRAMS)
        the value that runs nothing. Read with what the configuration includes, and read
        again whenever one of its files (or a file it includes) changed."""
        files, stamp, options = self._neutral
        if stamp is not None and stamp == _stamp(files):
            return options
        looked = {*files, *self._config_files()}
        before = _stamp(looked)
        own = self._own_config()  # before git reads them all: none makes it wait forever
        try:
            listing = self._execute(("config", "--list", "-z", "--includes", "--show-origin"), {})
        except self._git.GitCommandError:  # a broken config: every git call fails on it too
            listing = ""
        origins, entries, sourced = _origins_and_entries(listing, self.root)
        options = _as_options(
            [*neutral_overrides("\0".join(entries)), *_outside_files(self.root, sourced, own)]
        )
        # A file found only now was not stamped before the listing: read it all again next
        # time (then stamped first), so that no change made meanwhile is missed.
        found = origins | own
        complete = found <= looked
        self._neutral = (frozenset(looked | found), before if complete else None, options)
        return options

    def _own_config(self) -> set[Path]:
        """The memory's own configuration files and every file they include, as git follows
        them (present or not). UnsafeHistory naming one git would wait on forever (a named
        pipe, /dev/tty), or when they include more files than git could ever read."""
        pending = sorted(self._config_files())
        seen: set[Path] = set()
        while pending:
            path = pending.pop()
            if path in seen:
                continue
            if len(seen) >= MAX_CONFIG_FILES:
                raise _unsafe(
                    path, "is one of too many files the memory's git configuration includes"
                )
            seen.add(path)
            if _waits(path):
                raise _unsafe(
                    path,
                    "is read by the memory's git configuration but is not a file (a named "
                    "pipe or a device: git would wait for it forever)",
                )
            if path.is_file():
                pending.extend(_included(path, value) for value in self._includes_of(path))
        return seen

    def _includes_of(self, path: Path) -> list[str]:
        """The files one configuration file includes, read by git without following them
        and outside any repository (in the memory, git would first read them all)."""
        command = [self.executable, "config", "--file", str(path), "--no-includes"]
        try:
            listing = self._runner.execute(
                [*command, "--list", "-z"], env={"GIT_DIR": os.devnull, **NEUTRAL_ENVIRONMENT}
            )
        except self._git.GitCommandNotFound as exc:
            raise GitMissing(self.executable) from exc
        except self._git.GitCommandError:  # not a configuration: git fails on it as well
            return []
        entries = (entry.partition("\n") for entry in str(listing).split("\0"))
        return [value for key, _, value in entries if value and _is_include(key)]

    def _config_files(self) -> set[Path]:
        """The repository's own configuration files (present or not)."""
        pinned = git_environment(self.root)
        git_dir, common = Path(pinned["GIT_DIR"]), Path(pinned["GIT_COMMON_DIR"])
        return {common / "config", git_dir / "config", git_dir / "config.worktree"}

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
        """The paths `status` lists that a commit can record: not a named pipe, socket or
        device that replaced a note (git lists it as modified, and cannot stage it)."""
        return [p for p in self.status() if not kind_of(self.root / p)]

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
            "--ignore-submodules=all",  # wins over .gitmodules: no look inside (its config)
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

    def linked_folders(self) -> list[str]:
        """The folders the last commit holds files in that are links now (another program
        moved one away and left a link to it, or linked it to .git): git cannot record
        anything under them ("Unable to process path report/README.md"). The topmost
        only, from the commit's folders alone (a few thousand at 100,000 files)."""
        try:
            listing = self.git("ls-tree", "-r", "-d", "-z", "--name-only", "HEAD")
        except GitFailed:  # no commit yet
            return []
        found: list[str] = []
        for rel in listing.split("\0"):  # a folder comes before the folders in it
            inside = any(rel.startswith(f"{link}/") for link in found)
            if rel and not inside and (self.root / rel).is_symlink():
                found.append(rel)
        return found

    def refuse_linked_folders(self) -> None:
        """LinkedFolderError naming the first folder of `linked_folders`, if any."""
        linked = self.linked_folders()
        if linked:
            raise linked_folder_error(self.root, linked[0])

    def stage_all(self) -> None:
        """Stage every change git's status lists, as `git add -A` would, leaving out links
        that leave the memory (their targets are not the memory's to record; the engine
        treats them as absent) and repositories nested in it. Not `git add -A` itself: it
        looked inside a submodule for changes, running the filters its own config names."""
        paths = {
            p
            for p in self.dirty_paths()
            if not p.endswith("/") and not is_absent(self.root, self.root / p)
        }
        if paths:
            self.stage_paths(paths)

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
        meanwhile is not folded into the app's commit. A named pipe, socket or device is
        left out (git fails the whole call on one: "unsupported file type"); the operation
        says so by name (`store.gitdir.special_files`)."""
        paths = {p for p in paths if not kind_of(self.root / p)}
        if not paths:
            return
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
        *,
        always: bool = False,
    ) -> str | None:
        """Stage everything (or only `paths`) and commit; None when there was nothing to
        commit, unless `always` (an event the history must show even when it changed no
        file). A git failure (a full disk, a broken repository) raises HistoryWriteError,
        the index put back as it was."""
        try:
            with self._index_kept():
                if paths is None:
                    self.stage_all()
                elif paths:
                    self.stage_paths(paths)
                faults.reached("staged")
                message = one_line(summary)
                if trailers:  # a value with a newline would forge another trailer
                    message += "\n\n" + "\n".join(
                        f"{k}: {one_line(v)}" for k, v in trailers.items()
                    )
                return self._commit_index(message, always=always)
        except GitFailed as exc:
            self._refuse_linked_after(exc)
            cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
            raise HistoryWriteError(cause) from exc
        except OSError as exc:  # the list of paths for git could not be written (no space)
            raise HistoryWriteError(exc) from exc

    def _refuse_linked_after(self, exc: GitFailed) -> None:
        """A commit git refused because a folder became a link ("Unable to process path
        report/README.md", "beyond a symbolic link") is said naming the link."""
        with contextlib.suppress(GitFailed):
            linked = self.linked_folders()
            if linked:
                raise linked_folder_error(self.root, linked[0]) from exc

    @contextlib.contextmanager
    def _index_kept(self) -> Iterator[None]:
        """The index as it is now, put back if the block fails. `git reset` would write a
        new index, which a full disk refuses (the index then kept the failed commit's files
        staged); a second name for it (and for the shared files of a split index), made
        before anything is staged, is put back with a rename, which needs no space."""
        pinned = git_environment(self.root)
        index, git_dir = Path(pinned["GIT_INDEX_FILE"]), Path(pinned["GIT_DIR"])
        kept: dict[Path, Path] = {}
        for path in (index, *git_dir.glob("sharedindex.*")):
            aside = path.with_name(f"gam-undo-{path.name}")  # a name git never cleans up
            if _second_name(path, aside):
                kept[path] = aside
        had_index = index.exists()
        try:
            yield
        except BaseException:
            if index in kept or not had_index:
                self._put_index_back(index, kept, had_index)
            else:  # no hard links here: as before, git makes the index again
                self.git("reset", "-q", check=False)
            raise
        finally:
            for aside in kept.values():
                with contextlib.suppress(OSError):
                    aside.unlink(missing_ok=True)

    def _put_index_back(self, index: Path, kept: dict[Path, Path], had_index: bool) -> None:
        """The index (and its shared files, where git removed them) renamed back."""
        for path, aside in kept.items():
            try:
                if path == index:
                    os.replace(aside, index)
                elif not path.exists():
                    os.replace(aside, path)
            except OSError:
                if path == index:  # as before: git makes it again, if it can
                    self.git("reset", "-q", check=False)
        if not had_index:  # the first commit failed: no index, as before
            with contextlib.suppress(OSError):
                index.unlink(missing_ok=True)

    def _commit_index(self, message: str, *, always: bool = False) -> str | None:
        """Commit what is staged (None when that is what the last commit holds and not
        `always`), with git's plumbing: `git commit` also re-reads the time of every file
        (a third of a second at 100,000 files) and writes the index a second time."""
        tree = self.git("write-tree").strip()
        parent = self.head()
        if (
            not always
            and parent is not None
            and self.git("rev-parse", f"{parent}^{{tree}}").strip() == tree
        ):
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


def _second_name(path: Path, aside: Path) -> bool:
    """Give the file `path` the name `aside` too: a hard link, or a copy where the file
    system has none (FAT, exFAT). False when `path` is missing or neither can be made (no
    space left: then the commit cannot be made either)."""
    with contextlib.suppress(OSError):
        aside.unlink(missing_ok=True)  # left by a process that died
    if not path.is_file():
        return False
    try:
        os.link(path, aside)
        return True
    except OSError:
        pass
    try:
        shutil.copy2(path, aside)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            aside.unlink(missing_ok=True)
        return False


def one_line(text: str) -> str:
    """`text` as one line of printable characters: a commit summary or trailer value made
    from a title, an id or a statement (untrusted; git refuses a NUL)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
