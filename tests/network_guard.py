"""The tests reach no network: neither the internet nor a server the developer runs.

Why: a test that asks api.openai.com waits on DNS offline and sends requests out; one that
asks Ollama, LM Studio, llama.cpp or vLLM on its default port passes or fails by what the
developer has running (a real local server answers), and this machine's evaluation servers
(8089, 8090) are busy. Tests talk only to servers they start themselves (the scripted LLM,
gam_desktop/selfcheck/scripted_llm.py, on port 0).

How (a pytest plugin, loaded by tests/conftest.py, on for the whole run):
- a socket connection to an address that is not loopback, or to a loopback port of a
  well-known local LLM server (LOCAL_LLM_PORTS), fails at once with `NetworkBlocked` (a
  ConnectionRefusedError: the code under test sees "nothing answers there", nothing waits);
- a name lookup (socket.getaddrinfo) of any name but localhost fails at once (a gaierror);
- each such attempt also fails the test that made it (at its teardown), naming the test and
  the address, even when the code under test caught the error (the Settings dialog says
  "Nothing answers" and goes on), unless the test is marked `@pytest.mark.allow_network`.
  Reserved names and addresses that can never answer (*.invalid, *.test, *.example; the
  TEST-NET blocks of RFC 5737 and 2001:db8::/32) are refused the same way but fail no test:
  they are how a test says "an address where nothing answers".
Unix sockets (D-Bus, the keychain, Qt's local sockets) and every other loopback port (the
servers tests open on port 0) are untouched. Subprocesses are not guarded.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any

import pytest

MARKER = "allow_network"
LOCAL_LLM_PORTS = {
    11434: "Ollama",
    1234: "LM Studio",
    8080: "llama.cpp",
    8000: "vLLM",
    8089: "this machine's evaluation LLM server",
    8090: "this machine's evaluation embedding server",
}
LOCAL_NAMES = {"", "localhost", "localhost."}  # "": any address of this computer
RESERVED_SUFFIXES = (".invalid", ".test", ".example")  # RFC 2606 / 6761: never resolve
RESERVED_NETWORKS = tuple(
    ipaddress.ip_network(net)
    for net in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)


class NetworkBlocked(ConnectionRefusedError):
    """A test tried to reach the network (tests/network_guard.py says why it may not)."""


@dataclass
class _State:
    test: str = "(no test running)"
    allowed: bool = False
    reached: list[str] = field(default_factory=list)  # what the running test tried to reach


_state = _State()
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _text(host: Any) -> str:
    return host.decode() if isinstance(host, bytes) else str(host)


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def _is_loopback(host: str) -> bool:
    ip = _address(host)
    if ip is None:
        return host.lower() in LOCAL_NAMES
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or ip.is_unspecified or bool(mapped and mapped.is_loopback)


def _is_reserved(host: str) -> bool:
    ip = _address(host)
    if ip is None:
        return host.lower().rstrip(".").endswith(RESERVED_SUFFIXES)
    return any(ip.version == net.version and ip in net for net in RESERVED_NETWORKS)


def _why_not(host: str, port: object) -> str | None:
    """Why a connection to host:port is refused, or None when it may go ahead."""
    if not _is_loopback(host):
        return "not this computer"
    if port in LOCAL_LLM_PORTS:
        return f"the default port of {LOCAL_LLM_PORTS[port]}, not a server the test started"
    return None


def _refuse(where: str, why: str, reserved: bool) -> str:
    """Records the attempt (unless reserved), and says what was refused and why."""
    if not reserved:
        _state.reached.append(where)
    return (
        f"{_state.test} tried to reach {where} ({why}): tests reach no network "
        f"(tests/network_guard.py). Use a server of the test's own on port 0 (the scripted "
        f"LLM), or mark the test @pytest.mark.{MARKER}."
    )


def _check(sock: socket.socket, address: Any) -> str | None:
    """What is said when a connection to `address` is refused; None: it may go ahead."""
    if _state.allowed or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None  # allowed, or a Unix socket (D-Bus, the keychain), or another family
    if not isinstance(address, tuple) or len(address) < 2:
        return None  # not an address: the socket itself says so
    host, port = _text(address[0]), address[1]
    why = _why_not(host, port)
    return None if why is None else _refuse(f"{host}:{port}", why, _is_reserved(host))


def _connect(self: socket.socket, address: Any) -> None:
    refusal = _check(self, address)
    if refusal is not None:
        raise NetworkBlocked(errno.ECONNREFUSED, refusal)
    return _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    if _check(self, address) is not None:
        return errno.ECONNREFUSED  # connect_ex reports, it does not raise
    return _real_connect_ex(self, address)


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    name = "" if host is None else _text(host)
    if _state.allowed or not name or _address(name) is not None or name.lower() in LOCAL_NAMES:
        return _real_getaddrinfo(host, port, *args, **kwargs)
    message = _refuse(f"{name} (a name lookup)", "not this computer", _is_reserved(name))
    raise socket.gaierror(socket.EAI_NONAME, message)


_installed = 0  # how many pytest runs installed it (pytester runs one inside another)


def install() -> None:
    global _installed
    _installed += 1
    socket.socket.connect = _connect  # type: ignore[method-assign, assignment]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign, assignment]
    socket.getaddrinfo = _getaddrinfo


def uninstall() -> None:
    global _installed
    _installed -= 1
    if _installed == 0:
        socket.socket.connect = _real_connect  # type: ignore[method-assign, assignment]
        socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign, assignment]
        socket.getaddrinfo = _real_getaddrinfo


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: the test may reach the network (tests/network_guard.py)"
    )
    install()


def pytest_unconfigure(config: pytest.Config) -> None:
    uninstall()


@pytest.fixture(autouse=True)
def _no_network(request: pytest.FixtureRequest) -> Any:
    """Names the running test in the guard's errors; fails it if it tried to reach out."""
    global _state
    outer = _state  # no test, or the test that runs this one (pytester)
    _state = _State(request.node.nodeid, request.node.get_closest_marker(MARKER) is not None)
    yield
    reached, _state = _state.reached, outer
    if reached:
        pytest.fail(
            f"{request.node.nodeid} tried to reach the network: {', '.join(reached)} "
            "(tests/network_guard.py; the code under test may have caught the error; a "
            "thread an earlier test left running is counted in the test running now)",
            pytrace=False,
        )
