"""The packaged app: build the Linux bundle with PyInstaller and run its --self-test.

Slow (about a minute to build): excluded from the default run; `.ci/run` runs it with
`-m packaging`, and so can you: .venv/bin/python -m pytest -m packaging
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.packaging,
    pytest.mark.timeout(900),
    pytest.mark.linux_only("builds and runs the Linux bundle"),
]


def run_in_own_group(command: list[str], timeout: float, **kwargs) -> tuple[int, str, str]:
    """`command` in a process group of its own: when it runs out of time the whole group is
    ended (subprocess.run's timeout kills only the script, and PyInstaller, its child, went
    on building in the background)."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"{command} ran out of its {timeout} s:\n{out[-2000:]}{err[-2000:]}")
    return process.returncode, out, err


@pytest.fixture(scope="module")
def bundle() -> Path:
    env = {**os.environ, "PYTHON": sys.executable}
    code, out, err = run_in_own_group(
        ["bash", "packaging/build_linux.sh"], timeout=840, cwd=ROOT, env=env
    )
    assert code == 0, out[-3000:] + err[-3000:]
    return ROOT / "dist" / "gam-desktop"


def test_the_frozen_app_passes_its_self_test(bundle: Path, tmp_path: Path) -> None:
    binary = bundle / "gam-desktop"
    assert binary.is_file() and os.access(binary, os.X_OK)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [str(binary), "--self-test"], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "self-test passed" in out.stdout


def test_the_frozen_app_runs_gam_mcp_over_stdio(bundle: Path, make_workflow, tmp_path) -> None:
    """What the app's MCP client configuration starts: its own executable with `mcp` (the
    mcp SDK and anyio's backend are in the bundle, stdout is the protocol's)."""
    workflow = make_workflow()
    workflow.add(text="# Boiler\n\nThe boiler is serviced every October by Nordheat.\n")
    root = workflow.folder.root
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "unused"}
    params = StdioServerParameters(
        command=str(bundle / "gam-desktop"), args=["mcp", "--gam-dir", str(root)], env=env
    )

    async def scenario() -> None:
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"search", "read", "list", "ask"}
            found = await client.call_tool("search", {"query": "boiler serviced"})
            assert not found.is_error and "Nordheat" in str(found.content)

    anyio.run(scenario)


def test_the_bundle_carries_its_resources(bundle: Path) -> None:
    internal = bundle / "_internal"
    tokenizers = internal / "resources" / "tokenizers"
    assert (tokenizers / "SHA256SUMS").is_file()
    assert len(list(tokenizers.iterdir())) == 3
    assert (internal / "resources" / "style.qss").is_file()
    # python-pptx imports Pillow (see the spec), not its font and AVIF libraries
    assert (internal / "PIL").is_dir() and not list(internal.glob("libavif*"))
    # as python-docx and python-pptx find their templates: beside their modules' folders
    assert (internal / "docx" / "parts" / ".." / "templates" / "default-styles.xml").is_file()
    assert (internal / "pptx" / "oxml" / ".." / "templates" / "notesMaster.xml").is_file()


def test_the_tarball_installs_with_a_desktop_entry(bundle: Path, tmp_path: Path) -> None:
    tarball = next((ROOT / "dist").glob("gam-desktop-*-linux-*.tar.gz"))
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp_path, filter="data")
    unpacked = next(p for p in tmp_path.iterdir() if p.is_dir())
    prefix = tmp_path / "prefix"
    env = {**os.environ, "PREFIX": str(prefix), "HOME": str(tmp_path)}
    subprocess.run(
        ["bash", str(unpacked / "install.sh")],
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
    )
    desktop = (prefix / "share/applications/gam-desktop.desktop").read_text()
    assert f"Exec={prefix}/bin/gam-desktop %F" in desktop and "Icon=gam-desktop" in desktop
    version = subprocess.run(
        [str(prefix / "bin" / "gam-desktop"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert version.stdout.strip() == "0.1.0"
    subprocess.run(
        ["bash", str(unpacked / "uninstall.sh")],
        env=env,
        check=True,
        timeout=60,
        capture_output=True,
    )
    assert not (prefix / "bin" / "gam-desktop").exists()
