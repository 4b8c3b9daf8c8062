"""The network guard (tests/network_guard.py): the internet and the local LLM servers' default
ports are refused at once, naming the test; a server the test opened is reached."""

from __future__ import annotations

import socket
import time
import urllib.request

import pytest

from gam_desktop.engine.llm import LLMSettings
from gam_desktop.engine.llm.probe import list_models
from gam_desktop.selfcheck.scripted_llm import RunningServer
from tests import network_guard
from tests.network_guard import NetworkBlocked

pytest_plugins = ("pytester",)

AT_ONCE = 1.0  # s: a refusal, not a time limit met (a real attempt waits on DNS or a SYN)


def refused(address: tuple[str, int], request: pytest.FixtureRequest) -> str:
    started = time.monotonic()
    with socket.socket() as sock, pytest.raises(NetworkBlocked) as caught:
        sock.settimeout(30)
        sock.connect(address)
    assert time.monotonic() - started < AT_ONCE
    message = str(caught.value)
    assert request.node.nodeid in message and f"{address[0]}:{address[1]}" in message
    return message


def test_the_internet_and_local_llm_ports_are_refused_at_once(request) -> None:
    refused(("203.0.113.1", 443), request)  # TEST-NET-3: reserved, so this test still passes
    assert network_guard._state.reached == []
    assert "Ollama" in refused(("127.0.0.1", 11434), request)
    assert network_guard._state.reached == ["127.0.0.1:11434"]  # fails the test at teardown
    network_guard._state.reached.clear()  # (here the refusal is the point)


def test_a_refused_attempt_fails_the_test_even_when_caught(pytester: pytest.Pytester) -> None:
    """The Settings dialog catches the error and says "Nothing answers": the test fails
    anyway, naming itself and the address; with the marker it may reach out."""
    pytester.makeconftest('pytest_plugins = ("tests.network_guard",)')
    pytester.makepyfile(
        """
        import socket
        import pytest

        def ask(address):
            try:
                socket.create_connection(address, timeout=30)
            except OSError:
                pass  # as the dialog does

        def test_asks_ollama():
            ask(("127.0.0.1", 11434))

        def test_asks_the_internet():
            ask(("api.openai.com", 443))

        def test_asks_an_address_that_never_answers():
            ask(("nothing.invalid", 443))
            ask(("192.0.2.1", 443))

        @pytest.mark.allow_network
        def test_allowed():
            from tests import network_guard

            with socket.socket() as sock:
                assert network_guard._check(sock, ("127.0.0.1", 11434)) is None
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*test_asks_ollama tried to reach the network: 127.0.0.1:11434*",
            "*test_asks_the_internet tried to reach the network: api.openai.com (a name lookup)*",
        ]
    )


def test_a_name_lookup_of_the_internet_fails_at_once(request) -> None:
    with pytest.raises(socket.gaierror, match=r"example\.invalid \(a name lookup\)"):
        socket.getaddrinfo("example.invalid", 443)
    assert socket.getaddrinfo("localhost", 80)  # this computer's own name resolves


def test_a_server_the_test_opened_on_port_0_is_reached() -> None:
    with RunningServer() as server:
        assert list_models(LLMSettings(base_url=server.base_url)) == ["scripted"]
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=30) as response:
            assert response.status == 200


def test_unix_sockets_are_untouched(tmp_path) -> None:
    path = str(tmp_path / "bus")
    with socket.socket(socket.AF_UNIX) as listening, socket.socket(socket.AF_UNIX) as client:
        listening.bind(path)
        listening.listen()
        client.connect(path)
