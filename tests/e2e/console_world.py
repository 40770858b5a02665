"""The world the console's browser tests share (one per module, to keep CI time): two
indexed repositories (a polyglot one, A, and a hostile one, B), a real ``semgraph serve``
with three tokens (admin, read-only, limited to A), a real worker, and Debian's chromium
driven by Playwright (launched at the system binary with the closed-network flags).

Screenshots go to ``$SEMGRAPH_CONSOLE_SCREENSHOTS`` when set, else to the pytest tmp
folder (``.../console-screens*``); each test names its files after its flow."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page, Request, sync_playwright

from tests.e2e.test_mcp_stdio import index
from tests.e2e.test_web_serve import start_serve
from tests.repos import POLYGLOT, commit, make_repo

ADMIN = "console-admin-token-0123456789"
READER = "console-reader-token-0123456789"
LIMITED = "console-limited-token-0123456789"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
HOSTILE_MESSAGE = (
    "<script>alert('commit')</script> <img src=x onerror=alert(8)> javascript:alert(9)"
)
# file names, code and docstrings a repository controls; symbol names are identifiers in
# every parsed language, so the hostile text reaches them through module paths instead
HOSTILE: dict[str, str] = {
    "x<svg onload=alert(1)>.py": (
        "def on_error_img():\n"
        '    """<img src=x onerror=alert(2)> javascript:alert(2)"""\n'
        '    return "<script>alert(3)</script>"\n'
    ),
    "javascript:alert(4).py": (
        "from importlib import import_module\n\n\n"
        "def javascript_alert():\n"
        '    """<a href="javascript:alert(4)">click</a>"""\n'
        "    return on_error_img()\n\n\n"
        "def on_error_img():\n"
        '    return "\\"><script>alert(5)</script>"\n'
    ),
    'q"onmouseover=alert(6) x=".js': (
        'function xssHandler() { return "<script>alert(6)</script>"; }\n'
        "// <body onload=alert(7)> javascript:alert(7)\n"
        "function caller() { return xssHandler(); }\n"
    ),
}


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "Debian's chromium is not installed: run ops/install.sh"
    return found


def axe_script() -> Path:
    explicit = os.environ.get("SEMGRAPH_AXE_JS")
    if explicit:
        return Path(explicit)
    found = sorted(Path.home().glob(".cache/semgraph/axe-core-*/node_modules/axe-core/axe.min.js"))
    assert found, "axe-core is not fetched: run ops/install.sh"
    return found[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@dataclass
class Watch:
    """What a page did that a hostile repository could want: dialogs, and requests that left
    the console's own address."""

    base: str
    dialogs: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        def dialog(d: Any) -> None:
            self.dialogs.append(str(d.message))
            d.dismiss()

        def request(r: Request) -> None:
            if not r.url.startswith(self.base + "/") and r.url != self.base:
                self.foreign.append(r.url)

        page.on("dialog", dialog)
        page.on("request", request)


@dataclass
class World:
    base: str
    repo_a: str
    repo_b: str
    tmp: Path
    shots: Path
    browser: Browser
    worker_env: dict[str, str]
    _n: int = 0

    def context(self, *, bypass_csp: bool = False, bearer: str | None = None) -> BrowserContext:
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else None
        return self.browser.new_context(bypass_csp=bypass_csp, extra_http_headers=headers)

    def login(self, ctx: BrowserContext, token: str) -> tuple[Page, Watch]:
        page = ctx.new_page()
        watch = Watch(self.base)
        watch.attach(page)
        page.goto(f"{self.base}/console/queue")
        assert "/console/login" in page.url
        page.fill("#token", token)
        page.click("form.login button[type=submit]")
        page.wait_for_url(re.compile(r".*/console/queue.*"))
        return page, watch

    def shot(self, page: Page, name: str) -> None:
        self._n += 1
        page.screenshot(path=str(self.shots / f"{self._n:02d}-{name}.png"), full_page=True)


def until(check: Callable[[], bool], what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def _stop(proc: subprocess.Popen[Any]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=40)
    except subprocess.TimeoutExpired:
        proc.kill()
    with proc:
        pass


def start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "semgraph", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def build_world(tmp: Path, shots: Path) -> Iterator[World]:
    repo_a = make_repo(tmp / "polyglot", POLYGLOT)
    repo_b = make_repo(tmp / "hostile", {"README.md": "hostile\n"})
    commit(repo_b, HOSTILE, HOSTILE_MESSAGE)
    key_a = index(repo_a)["run"]["repo"]
    key_b = index(repo_b)["run"]["repo"]
    tokens = tmp / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "admin"\ntoken = "{ADMIN}"\nscopes = ["read", "enqueue", "admin"]\n\n'
        f'[[tokens]]\nname = "reader"\ntoken = "{READER}"\nscopes = ["read"]\n\n'
        f'[[tokens]]\nname = "limited"\ntoken = "{LIMITED}"\nscopes = ["read"]\n'
        f'repos = ["{key_a}"]\n'
    )
    port = free_port()
    env = {**os.environ, "SEMGRAPH_API_TOKENS_FILE": str(tokens)}
    worker_env = {
        **os.environ,
        "SEMGRAPH_JOB_MAX_ATTEMPTS": "1",
        "SEMGRAPH_BACKOFF_BASE_S": "0",
        "SEMGRAPH_POLL_INTERVAL_S": "0.2",
        "SEMGRAPH_HEARTBEAT_S": "0.5",
    }
    server = start_serve(port, env)
    worker = start_worker(worker_env)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            try:
                yield World(
                    f"http://127.0.0.1:{port}", key_a, key_b, tmp, shots, browser, worker_env
                )
            finally:
                browser.close()
    finally:
        _stop(worker)
        _stop(server)
