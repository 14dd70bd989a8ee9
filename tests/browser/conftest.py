"""A throwaway JupyterLab server and a headless Chromium page, for the real-browser tests.

JupyterLab runs on 127.0.0.1 with a free port, token auth, and config, data, runtime,
settings and workspace directories in a temporary folder, so nothing of the user's setup is
read or written. It serves a temporary copy of notebooks/ and exercises/, so running them in
the browser never touches the committed files. Chromium is Debian's (/usr/bin/chromium), driven by
playwright; `scripts/install_browser.sh` installs both. Without them the tests are skipped,
except in CI (the environment variable CI is set), where they must run.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
# Settings for the throwaway JupyterLab: every cell stays in the DOM (no virtual scrolling), no autosave,
# no news or update checks (no network).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


def _missing() -> str:
    reasons = []
    if not os.path.exists(CHROMIUM):
        reasons.append(f"{CHROMIUM} is missing")
    try:
        import playwright  # noqa: F401
    except ImportError:
        reasons.append("the playwright package is missing")
    return " and ".join(reasons)


@pytest.fixture(scope="session")
def browser_ready():
    missing = _missing()
    if missing:
        message = f"real-browser test needs Debian's chromium and playwright: {missing}; run scripts/install_browser.sh"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the browser test must run, but {message}")
        pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def jupyter_lab(browser_ready, tmp_path_factory):
    """Start JupyterLab on a copy of notebooks/ and exercises/; yield (base_url, token, served_dir); stop it."""
    home = tmp_path_factory.mktemp("jupyter")
    served = home / "served"
    for folder in ("notebooks", "exercises"):
        shutil.copytree(ROOT / folder, served / folder, ignore=shutil.ignore_patterns("*.py", ".ipynb_checkpoints"))
    config = home / "config"
    for name, values in LAB_SETTINGS.items():
        path = config / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(config / "lab" / "user-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        MPLBACKEND="module://matplotlib_inline.backend_inline",
    )
    port, token = _free_port(), secrets.token_hex(16)
    log = open(home / "jupyterlab.log", "w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--ServerApp.root_dir={served}",
            f"--IdentityProvider.token={token}",
            "--ServerApp.port_retries=0",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=served,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with {server.returncode}:\n{(home / 'jupyterlab.log').read_text()}"
                )
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer within 90 s:\n{(home / 'jupyterlab.log').read_text()}")
            time.sleep(0.5)
        yield base, token, served
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def browser(browser_ready):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, tmp_path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    page.screenshot(path=str(tmp_path / "last.png"))  # kept by pytest's tmp_path for a look after a failure
    context.close()
