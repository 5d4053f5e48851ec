"""Fixtures: a real lazymemd on a free loopback port over a temporary store.

The binary is $LAZYMEM_BIN, else built with `go build` from the repository
root. Without one the daemon tests are skipped with the reason, unless
CI=true: then they fail, so that a CI run cannot pass by skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run from a checkout too

TOKEN = "test-token-3f9a"
# Limits small enough that a 413 is cheap to provoke.
MAX_BODY = 1 << 20
MAX_BATCH = 100
MAX_AGENTS = 5

_URL = re.compile(r"url=(http://\S+)")


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"lazymemd is needed under CI=true: {why}", pytrace=False)
    pytest.skip(f"no lazymemd to test against: {why} (set LAZYMEM_BIN, or install Go)")


def _repo_root() -> Optional[Path]:
    for p in Path(__file__).resolve().parents:
        if (p / "go.mod").is_file() and (p / "cmd" / "lazymemd").is_dir():
            return p
    return None


@pytest.fixture(scope="session")
def lazymemd_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    env_bin = os.environ.get("LAZYMEM_BIN")
    if env_bin:
        if not os.access(env_bin, os.X_OK):
            _unavailable(f"LAZYMEM_BIN={env_bin} is not an executable file")
        return env_bin
    root = _repo_root()
    if root is None:
        _unavailable("LAZYMEM_BIN is unset and no repository root (go.mod) is above the tests")
    go = shutil.which("go")
    if go is None:
        _unavailable("LAZYMEM_BIN is unset and `go` is not on PATH")
    out = tmp_path_factory.mktemp("bin") / "lazymemd"
    proc = subprocess.run([go, "build", "-o", str(out), "./cmd/lazymemd"], cwd=root,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        _unavailable(f"go build ./cmd/lazymemd failed: {proc.stderr.strip()[-2000:]}")
    return str(out)


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/v1/ready", timeout=5) as r:
            return r.status == 200
    except urllib.error.HTTPError as e:
        if e.code == 503:  # {"status": "opening"}
            return False
        raise


class Daemon:
    """A running lazymemd: url, token, the store directory and its stderr log."""

    def __init__(self, binary: str, workdir: Path, token: Optional[str], extra: list) -> None:
        self.dir = workdir / "db"
        self.log = workdir / "stderr.log"
        self.token = token
        env = dict(os.environ)
        env.pop("LAZYMEMD_TOKEN", None)
        if token:
            env["LAZYMEMD_TOKEN"] = token
        self._logf = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [binary, "--db", str(self.dir), "--addr", "127.0.0.1:0", "--quiet", "--max-body", str(MAX_BODY),
             "--max-batch", str(MAX_BATCH), "--max-agents", str(MAX_AGENTS), *extra],
            stdout=subprocess.DEVNULL, stderr=self._logf, env=env)
        self.url = self._wait_url()

    def _wait_url(self) -> str:
        # The daemon logs `msg="lazymemd listening" url=http://127.0.0.1:PORT`
        # once it is accepting (:0 lets the kernel pick a free port), then
        # opens the store in the background: GET /v1/ready turns 200 when
        # it is open.
        deadline = time.monotonic() + 60
        url = None
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            m = _URL.search(text)
            if m and url is None:
                url = m.group(1)
            if url is not None and _ready(url):
                return url
            if self.proc.poll() is not None:
                self.stop()
                pytest.fail(f"lazymemd exited with {self.proc.returncode}: {text.strip()}", pytrace=False)
            time.sleep(0.02)
        self.stop()
        pytest.fail(f"lazymemd was not ready within 60 s (address {url})", pytrace=False)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._logf.close()


@pytest.fixture(scope="session")
def daemon(lazymemd_bin: str) -> Iterator[Daemon]:
    """One daemon for the session, with a bearer token (tests use their own agent names)."""
    with tempfile.TemporaryDirectory(prefix="lazymem-py-") as d:
        dm = Daemon(lazymemd_bin, Path(d), TOKEN, [])
        try:
            yield dm
        finally:
            dm.stop()


@pytest.fixture()
def client(daemon: Daemon):
    from lazymem import Client

    return Client(daemon.url, token=daemon.token, timeout=30)


@pytest.fixture()
def agent(request: pytest.FixtureRequest) -> str:
    """An agent name of the test's own, so tests never see each other's records."""
    return "py-" + re.sub(r"[^A-Za-z0-9]+", "-", request.node.name)[:80] + "-" + os.urandom(3).hex()
