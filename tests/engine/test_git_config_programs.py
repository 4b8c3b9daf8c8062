"""A memory's .git/config (and what it includes) names programs for git to run: a signature
checker for `git log`, an external diff, editors, pagers, credential helpers. A memory is
untrusted ground (a zip, a synced folder): none of them may run when the app reads or
writes its history (issue 36, section 2, finding 1)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gam_desktop.engine.history.gitrepo import MemoryRepo, neutral_overrides
from gam_desktop.engine.history.log import History
from tests.clirun import run_cli
from tests.documents import topic_document
from tests.repos import git

pytestmark = pytest.mark.posix_only("the programs are shell scripts")

# git tells a signature's program by its first line (gpg.format only chooses how to sign)
ARMOR = {"openpgp": "PGP SIGNATURE", "x509": "SIGNED MESSAGE", "ssh": "SSH SIGNATURE"}


def signature(kind: str) -> str:
    armor = ARMOR[kind]
    return f"-----BEGIN {armor}-----\n iQEzBAABCAAdFiEEfakefakefakefake\n -----END {armor}-----"


def evil_program(folder: Path, name: str) -> tuple[Path, Path]:
    """A program that notes each run in a marker file (and reads its input, as gpg does)."""
    marker = folder / f"ran-{name}"
    program = folder / f"{name}.sh"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\ncat >/dev/null\nexit 0\n')
    program.chmod(0o755)
    return program, marker


def sign_head(memory: Path, kind: str = "openpgp") -> str:
    """Replace HEAD by a copy of it carrying a (fake) signature: `git log` with
    log.showSignature hands it to the signature program to check."""
    head = git(memory, "cat-file", "commit", "HEAD")
    headers, _, message = head.partition("\n\n")
    crafted = f"{headers}\ngpgsig {signature(kind)}\n\n{message}"
    sha = (
        subprocess.run(
            ["git", "-C", str(memory), "hash-object", "-t", "commit", "-w", "--stdin"],
            input=crafted.encode(),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    git(memory, "update-ref", "HEAD", sha)
    assert "gpgsig" in git(memory, "cat-file", "commit", "HEAD")
    return sha


# git's keys that name a program (git-config(1)), as a crafted memory would set them
PROGRAM_KEYS = (
    *("gpg.program", "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program"),
    *("gpg.ssh.defaultKeyCommand", "core.pager", "core.editor", "sequence.editor"),
    *("core.askPass", "core.sshCommand", "core.gitProxy", "core.alternateRefsCommand"),
    *("core.fsmonitor", "diff.external", "interactive.diffFilter", "credential.helper"),
    *("credential.https://example.com.helper", "uploadpack.packObjectsHook"),
    *("pager.log", "pager.diff", "pager.status", "pager.show"),
    *("diff.evil.command", "diff.evil.textconv", "merge.evil.driver"),
    *("filter.evil.clean", "filter.evil.smudge", "filter.evil.process"),
    *("remote.origin.uploadpack", "remote.origin.receivepack", "remote.origin.proxy"),
    *("difftool.evil.cmd", "mergetool.evil.cmd", "trailer.evil.command", "trailer.evil.cmd"),
    *("browser.evil.cmd", "man.evil.cmd", "guitool.evil.cmd", "sendemail.tocmd"),
)


@pytest.fixture
def memory(make_workflow, memory_dir: Path) -> Path:
    workflow = make_workflow()
    workflow.add(text=topic_document({"python": 3}))
    workflow.add(text=topic_document({"rust": 3}))
    return memory_dir


def history_of(memory: Path) -> History:
    """What the History panel reads (gui/history_panel.HistorySource.open) and gam-history."""
    return History(MemoryRepo.open(memory))


def test_a_signed_commit_runs_no_signature_program_in_the_history(
    memory: Path, tmp_path: Path, llm_server
) -> None:
    program, marker = evil_program(tmp_path, "gpg")
    sign_head(memory)
    git(memory, "config", "log.showSignature", "true")
    git(memory, "config", "gpg.program", str(program))
    # The user's own git does run it: the trap is real.
    git(memory, "log", "-n1")
    assert marker.exists(), "the crafted repository should make git run the program"
    marker.unlink()

    operations = history_of(memory).operations()
    assert operations[0].summary.startswith("Added")
    history_of(memory).get(operations[0].sha)
    listed = run_cli(["--gam-dir", str(memory)], llm_server.base_url, entry="history_main")
    shown = run_cli(
        ["--gam-dir", str(memory), "show", operations[0].sha[:10]],
        llm_server.base_url,
        entry="history_main",
    )
    assert listed.returncode == 0 and shown.returncode == 0, listed.stderr + shown.stderr
    assert "Added" in listed.stdout
    assert not marker.exists(), f"gpg.program ran: {marker.read_text()}"


@pytest.mark.parametrize("signing_format", ["ssh", "x509"])
def test_no_signature_program_of_another_format_runs(
    memory: Path, tmp_path: Path, signing_format: str
) -> None:
    program, marker = evil_program(tmp_path, signing_format)
    sign_head(memory, signing_format)
    git(memory, "config", "log.showSignature", "true")
    git(memory, "config", f"gpg.{signing_format}.program", str(program))
    (tmp_path / "signers").write_text("")
    git(memory, "config", "gpg.ssh.allowedSignersFile", str(tmp_path / "signers"))
    git(memory, "log", "-n1")
    assert marker.exists(), "the crafted repository should make git run the program"
    marker.unlink()
    history_of(memory).operations()
    assert not marker.exists(), f"gpg.{signing_format}.program ran"


def test_a_signature_program_from_an_included_file_does_not_run(
    memory: Path, tmp_path: Path
) -> None:
    """The config may include another file (here one in the memory's own folder, which a
    sync may change at any time): what that says is neutralized as well, also when it
    changes after the repository was opened."""
    repo = MemoryRepo.open(memory)
    history = History(repo)
    history.operations()  # the configuration as it was is read (and remembered)
    program, marker = evil_program(tmp_path, "included")
    sign_head(memory, "ssh")
    git(memory, "config", "include.path", "../.gam/more.cfg")
    included = memory / ".gam" / "more.cfg"
    (tmp_path / "signers").write_text("")
    signers = f'[gpg "ssh"]\n\tallowedSignersFile = {tmp_path / "signers"}\n'
    included.write_text(f"[log]\n\tshowSignature = true\n{signers}")
    history.operations()
    with included.open("a") as more:  # the included file alone changes
        more.write(f'[gpg "ssh"]\n\tprogram = {program}\n')
    git(memory, "log", "-n1")
    assert marker.exists(), "the crafted include should make git run the program"
    marker.unlink()
    history.operations()
    assert not marker.exists(), "a program named by an included file ran"


def test_an_external_diff_does_not_run_in_the_diff_view(
    memory: Path, tmp_path: Path, llm_server
) -> None:
    program, marker = evil_program(tmp_path, "diff")
    git(memory, "config", "diff.external", str(program))
    git(memory, "diff", "HEAD~1", "HEAD")
    assert marker.exists(), "the crafted repository should make git run the program"
    marker.unlink()

    history = history_of(memory)
    operation = history.operations()[0]
    changes = history.changes(operation.sha)
    patches = [history.diff(operation.sha, change.path) for change in changes]
    assert any(patch.startswith("diff --git") for patch in patches)
    shown = run_cli(
        ["--gam-dir", str(memory), "show", operation.sha, "--diff", changes[0].path],
        llm_server.base_url,
        entry="history_main",
    )
    assert shown.returncode == 0 and shown.stdout.startswith("diff --git"), shown.stderr
    assert not marker.exists(), f"diff.external ran: {marker.read_text()}"


def test_no_program_named_by_the_config_runs_in_any_operation(
    make_workflow, memory: Path, tmp_path: Path
) -> None:
    """Every key of git's that names a program, in the memory's config and in a file it
    includes, with drivers named by the memory's .gitattributes: adding, listing, showing,
    rolling back and restoring run none of them."""
    program, marker = evil_program(tmp_path, "any")
    lines = []
    for key in PROGRAM_KEYS:
        section, _, rest = key.partition(".")
        name, _, variable = rest.rpartition(".")
        header = f'[{section} "{name}"]' if name else f"[{section}]"
        lines += [header, f"\t{variable} = {program}"]
    lines += ["[log]", "\tshowSignature = true", "[merge]", "\tverifySignatures = true"]
    lines += ["[commit]", "\tgpgSign = true", "[protocol]", "\tallow = always"]
    (memory / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n")
    git(memory, "add", ".gitattributes")
    git(memory, "-c", "user.name=Me", "-c", "user.email=me@x", "commit", "-qm", "attributes")
    sign_head(memory)
    included = tmp_path / "included.cfg"
    included.write_text("\n".join(lines) + "\n")
    git(memory, "config", "include.path", str(included))
    git(memory, "config", "filter.evil.required", "true")
    subprocess.run(["git", "-C", str(memory), "log", "-n1"], capture_output=True, check=False)
    assert marker.exists(), "the crafted repository should make git run the programs"
    marker.unlink()

    workflow = make_workflow()
    workflow.add(text=topic_document({"git": 3}))
    history = workflow.history
    assert history is not None
    operations = history.operations()
    for operation in operations[:3]:
        for change in history.changes(operation.sha):
            history.diff(operation.sha, change.path)
    added = next(op for op in operations if op.summary.startswith("Added"))
    workflow.rollback(added.sha)
    workflow.restore_before(added.sha)
    workflow.recover(restore=True)  # nothing to recover: still reads the journal and git
    assert not marker.exists(), f"programs ran: {marker.read_text()}"


def test_the_named_programs_are_found_in_a_listing() -> None:
    listing = "\0".join(
        [
            "diff.My Driver.textconv\nevil",
            "filter.lfs.process\ngit-lfs filter-process",
            "pager.log\nless",
            "user.name\nMe",
            "credential.https://x.example.helper\nstore",
            "diff.a=b.command\nevil",  # not expressible with -c: left to NO_DRIVERS
            "gpg.ssh.program\nevil",
            "core.pager",  # a key without a value
        ]
    )
    assert neutral_overrides(listing) == [
        ("credential.https://x.example.helper", ""),
        ("diff.My Driver.textconv", ""),
        ("filter.lfs.process", ""),
        ("gpg.ssh.program", ""),
        ("pager.log", "false"),
    ]


def test_a_submodules_own_config_runs_nothing(make_workflow, memory: Path, tmp_path: Path) -> None:
    """A repository nested in the memory as a submodule has a config of its own, out of
    reach of the overrides: `git status` (every operation) and `git diff` (a rollback)
    looked inside it for changes, running the filter its attributes name; .gitmodules
    asking for that (`ignore = none`) must not bring it back."""
    program, marker = evil_program(tmp_path, "submodule")
    nested = memory / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / ".gitattributes").write_text("* filter=evil\n")
    (nested / "data.txt").write_text("one\n")
    earlier = (nested / "data.txt").stat().st_mtime - 100
    os.utime(nested / "data.txt", (earlier, earlier))  # never racily clean, as on a busy machine
    git(nested, "add", ".")
    git(nested, "-c", "user.name=Me", "-c", "user.email=me@x", "commit", "-qm", "nested")
    git(nested, "config", "filter.evil.clean", f"{program} clean")
    (memory / ".gitmodules").write_text('[submodule "vendor"]\n\tpath = vendor\n\tignore = none\n')
    nested_head = git(nested, "rev-parse", "HEAD").strip()
    git(memory, "update-index", "--add", "--cacheinfo", f"160000,{nested_head},vendor")
    git(memory, "add", ".gitmodules")
    git(memory, "-c", "user.name=Me", "-c", "user.email=me@x", "commit", "-qm", "vendor")
    # Same size, later mtime: git must read the file through the filter to know whether it
    # changed. A size change alone marks it modified without the filter unless the index
    # entry happens to be racily clean (written in the same second), which a busy machine
    # does not guarantee.
    changed = nested / "data.txt"
    changed.write_text("two\n")
    later = changed.stat().st_mtime + 100
    os.utime(changed, (later, later))
    git(memory, "status", "--porcelain")
    assert marker.exists(), "the user's own git status should run the nested filter"
    marker.unlink()

    workflow = make_workflow()
    workflow.add(text=topic_document({"git": 3}))
    history = workflow.history
    assert history is not None
    added = history.operations()[0]
    workflow.rollback(added.sha)
    assert not marker.exists(), f"the submodule's filter ran: {marker.read_text()}"
