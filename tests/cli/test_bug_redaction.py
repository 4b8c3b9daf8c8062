"""A command's bug is reported with its traceback (exit 70); the traceback holds no key
the command sends (an error quoting a server's reply may carry one)."""

from __future__ import annotations

import pytest

from gam_desktop.cli.common import EX_SOFTWARE, entry_point
from gam_desktop.engine.llm import LLMClient, LLMSettings
from gam_desktop.engine.llm.redact import LABEL

KEY = "sk-bug-report-secret-0123456789"


def test_a_bugs_traceback_holds_no_key(capsys: pytest.CaptureFixture[str]) -> None:
    LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", api_key=KEY))  # the key it sends

    @entry_point("gam-test")
    def main(_argv: object = None) -> int:
        raise RuntimeError(f"the server said: bad key {KEY}")

    assert main() == EX_SOFTWARE
    err = capsys.readouterr().err
    assert "Traceback" in err and f"bad key {LABEL}" in err and "(a bug" in err
    assert KEY not in err
