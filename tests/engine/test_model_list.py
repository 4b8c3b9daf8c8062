"""The models a server offers (Settings fills its model lists from them), against the
scripted server over real HTTP; what went wrong said in words."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gam_desktop.engine.llm import LLMAuthError, LLMSettings, LLMUnreachable, NoModels
from gam_desktop.engine.llm.probe import list_models
from gam_desktop.selfcheck.scripted_llm import Fault
from tests.engine.test_words import refusing_server


def test_the_servers_models_are_listed_in_its_order(llm_server, settings) -> None:
    llm_server.state.models = ["qwen2.5:7b", "llama3.2:3b", "qwen2.5:7b"]
    assert list_models(settings) == ["qwen2.5:7b", "llama3.2:3b"]


def test_a_refused_key_is_said_as_such(llm_server, settings) -> None:
    llm_server.state.faults.append(Fault("401", task="models"))
    with pytest.raises(LLMAuthError, match=r"refused the API key \(HTTP 401\)"):
        list_models(settings)


def test_a_server_wanting_a_key_that_was_not_given_says_so() -> None:
    with refusing_server() as url, pytest.raises(LLMAuthError, match="wants an API key"):
        list_models(LLMSettings(base_url=url))


def test_a_server_with_no_models_says_so(llm_server, settings) -> None:
    llm_server.state.models = []
    with pytest.raises(NoModels, match="answered, but offers no models"):
        list_models(settings)


def test_nothing_listening_is_unreachable_in_words() -> None:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", timeout=2)
    with pytest.raises(LLMUnreachable, match=r"Nothing answers at .*connection was refused"):
        list_models(settings)


@contextlib.contextmanager
def web_page() -> Iterator[str]:
    """A web site's address where the API's was meant: every path answers a page."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body>Welcome</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_address_that_is_not_the_api_says_so() -> None:
    with web_page() as url, pytest.raises(NoModels, match="the address that ends in /v1"):
        list_models(LLMSettings(base_url=url))
