"""The command line shows a document's name as the memory stores it (issue 36): by one
rule, the engine's `stored_name` (reached through gam_desktop.engine.api, as a front end
must), not a copy of its pattern kept beside it, which could drift: a name reads the same in
a note's `source:` and on gam-add's line."""

from __future__ import annotations

from gam_desktop.cli import common
from gam_desktop.engine.api import stored_name


def test_the_command_line_shows_names_by_the_engines_rule() -> None:
    assert not any(hasattr(common, name) for name in ("_UNSHOWN", "re")), (
        "cli.common keeps an escaping rule of its own"
    )
    every = "".join(map(chr, range(0x110000)))  # every code point, surrogates too
    assert common.shown(every) == stored_name(every)
    assert common.shown("new\nline\u202e.txt") == "new\\nline\\u202e.txt"
