"""File names with control characters on the command line (tester's finding 07): a name
holding a newline split gam-add's progress line in two, one holding ESC sequences could
retitle or recolour the terminal. Every progress, warning and error line shows them
escaped."""

from __future__ import annotations

from pathlib import Path

from tests.clirun import run_cli


def test_names_with_control_characters_are_escaped_in_every_line(
    llm_server, tmp_path: Path
) -> None:
    newline = tmp_path / "new\nline.txt"
    newline.write_text("Docker images are built in layers.\n")
    escape = tmp_path / "esc\x1b]0;TITLE\x07\x1b[31mred.txt"
    escape.write_text("")  # no text: named in an error line
    out = run_cli(
        ["--gam-dir", str(tmp_path / "m"), "--files", str(newline), str(escape)],
        llm_server.base_url,
    )
    assert out.returncode == 1, out.stderr
    assert "\x1b" not in out.stderr + out.stdout and "\x07" not in out.stderr
    assert "gam-add: Reading document 1 of 2: new\\nline.txt" in out.stderr
    assert "error: esc\\x1b]0;TITLE\\x07\\x1b[31mred.txt: no text found" in out.stderr
    prefixes = ("gam-add: ", "error: ", "warning: ")
    assert [line for line in out.stderr.splitlines() if not line.startswith(prefixes)] == []


def test_shown_escapes_controls_and_bidirectional_overrides_only() -> None:
    from gam_desktop.cli.common import shown

    assert shown("café ☃ 漢字.md") == "café ☃ 漢字.md"
    assert shown("\u202eevil\u202dtxt.md") == "\\u202eevil\\u202dtxt.md"
    assert shown("tab\tname\x7f.md") == "tab\\tname\\x7f.md"
