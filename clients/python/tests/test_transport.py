"""Retries and the status-to-exception mapping, against a scripted local
HTTP server: statuses a healthy daemon cannot be made to return on demand
(503 busy, 507 disk full) are replayed exactly as the daemon writes them."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator, List, Optional, Tuple

import pytest

from lazymem import (
    Busy,
    Client,
    DiskFull,
    Forbidden,
    QuotaExceeded,
    InvalidInput,
    LazymemError,
    MethodNotAllowed,
    NotFound,
    ServerError,
    TooLarge,
    Record,
    Unauthorized,
    UnsupportedMediaType,
)
from lazymem.client import _duration, _retry_after

Reply = Tuple[int, dict, Optional[dict]]  # status, headers, JSON body


class Script:
    """Replies in order (the last one repeats) and records each request."""

    def __init__(self) -> None:
        self.replies: List[Reply] = []
        self.requests: List[Tuple[str, str, dict, bytes]] = []


@pytest.fixture()
def stub() -> Iterator[Tuple[str, Script]]:
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            script.requests.append((self.command, self.path, dict(self.headers), body))
            i = min(len(script.requests) - 1, len(script.replies) - 1)
            status, headers, payload = script.replies[i]
            data = json.dumps(payload).encode() if payload is not None else b""
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _serve

        def log_message(self, *args) -> None:  # quiet
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", script
    finally:
        srv.shutdown()
        srv.server_close()


def err(code: str, message: str, field: Optional[str] = None) -> dict:
    e = {"code": code, "message": message}
    if field:
        e["field"] = field
    return {"error": e}


OK_IDS = (200, {}, {"ids": [7]})
BUSY = (503, {"Retry-After": "1"}, err("busy", "the records being appended fill the budget"))


def test_busy_retried_honouring_retry_after(stub) -> None:
    url, script = stub
    script.replies = [BUSY, BUSY, OK_IDS]
    waits: List[float] = []
    c = Client(url, token="t", retries=3, sleep=waits.append)
    assert c.append("hello", agent="a") == 7
    assert waits == [1.0, 1.0]
    assert len(script.requests) == 3
    # Every attempt sends the same body and the token.
    bodies = {r[3] for r in script.requests}
    assert len(bodies) == 1 and json.loads(bodies.pop()) == {"agent": "a", "text": "hello"}
    assert all(r[2]["Authorization"] == "Bearer t" for r in script.requests)
    assert all(r[2]["Content-Type"] == "application/json" for r in script.requests)


def test_retries_are_bounded(stub) -> None:
    url, script = stub
    script.replies = [BUSY]
    waits: List[float] = []
    c = Client(url, retries=2, sleep=waits.append)
    with pytest.raises(Busy) as ei:
        c.append("x", agent="a")
    assert len(script.requests) == 3 and len(waits) == 2
    assert ei.value.code == "busy" and ei.value.retry_after == 1.0


def test_retry_after_capped_and_backoff_without_it(stub) -> None:
    url, script = stub
    script.replies = [(503, {"Retry-After": "3600"}, err("busy", "b")),
                      (503, {"Retry-After": ""}, err("starting", "opening")),
                      (503, {}, err("starting", "opening")),
                      OK_IDS]
    waits: List[float] = []
    c = Client(url, retries=5, backoff=0.2, max_wait=2.0, sleep=waits.append)
    assert c.append("x", agent="a") == 7
    assert waits[0] == 2.0  # an hour's Retry-After is held to max_wait
    # Exponential backoff with jitter in [0.5, 1] of 0.2 * 2^attempt.
    assert 0.2 <= waits[1] <= 0.4 and 0.4 <= waits[2] <= 0.8


def test_timeout_not_retried_for_appends_but_for_reads(stub) -> None:
    url, script = stub
    timeout = (503, {}, err("timeout", "the request took longer than 30s"))
    script.replies = [timeout, OK_IDS]
    waits: List[float] = []
    c = Client(url, retries=3, sleep=waits.append)
    with pytest.raises(Busy) as ei:
        c.append("x", agent="a")  # it may have been written: not sent twice
    assert ei.value.code == "timeout" and len(script.requests) == 1 and waits == []
    script.requests.clear()
    script.replies = [timeout, (200, {}, {"appended": 1})]
    assert c.stats() == {"appended": 1}
    assert len(script.requests) == 2 and len(waits) == 1


def test_no_retries_when_zero(stub) -> None:
    url, script = stub
    script.replies = [BUSY, OK_IDS]
    c = Client(url, retries=0, sleep=lambda s: pytest.fail("slept"))
    with pytest.raises(Busy):
        c.append("x", agent="a")
    assert len(script.requests) == 1


@pytest.mark.parametrize("status,code,cls", [
    (400, "invalid", InvalidInput),
    (400, "bad_body", InvalidInput),
    (401, "unauthorized", Unauthorized),
    (403, "forbidden_host", Forbidden),
    (404, "not_found", NotFound),
    (405, "method_not_allowed", MethodNotAllowed),
    (403, "quota", QuotaExceeded),
    (413, "too_large", TooLarge),
    (415, "unsupported_media_type", UnsupportedMediaType),
    (500, "internal", ServerError),
    (502, "embedder", ServerError),
    (503, "closed", Busy),
    (507, "disk_full", DiskFull),
    (418, "teapot", LazymemError),
])
def test_status_mapping(stub, status: int, code: str, cls: type) -> None:
    url, script = stub
    script.replies = [(status, {}, err(code, f"{code} happened", field="records[3].agent"))]
    c = Client(url, retries=0)
    with pytest.raises(cls) as ei:
        c.append("x", agent="a")
    e = ei.value
    assert type(e) is cls
    assert (e.status, e.code, e.field, e.message) == (status, code, "records[3].agent", f"{code} happened")
    assert str(e) == f"lazymem: {status} {code}: {code} happened"


def test_daemon_prefix_said_once(stub) -> None:
    """The daemon's messages start "lazymem: "; str(e) does not repeat it, e.message keeps it."""
    url, script = stub
    script.replies = [(404, {}, err("not_found", "lazymem: engine: record not found: id 99"))]
    with pytest.raises(NotFound) as ei:
        Client(url, retries=0).get(99)
    assert ei.value.message == "lazymem: engine: record not found: id 99"
    assert str(ei.value) == "lazymem: 404 not_found: engine: record not found: id 99"


def test_error_without_json_body(stub) -> None:
    url, script = stub
    script.replies = [(502, {}, None)]
    with pytest.raises(ServerError) as ei:
        Client(url, retries=0).stats()
    assert ei.value.status == 502 and ei.value.code == "" and ei.value.message == "HTTP 502"


def test_probes_false_on_503(stub) -> None:
    url, script = stub
    script.replies = [(503, {}, {"status": "opening"})]
    c = Client(url, sleep=lambda s: None)
    assert c.ready() is False and c.health() is False
    assert len(script.requests) == 2  # a probe is not retried
    script.replies = [(503, {}, {"status": "closing"})]
    with pytest.raises(Busy) as ei:
        c._call("GET", "/v1/ready", None, idempotent=True, retries=0)
    assert ei.value.code == "closing" and ei.value.message == "the store is closing"
    script.replies = [(503, {}, {"status": "stopped", "error": "lazymem: segment: the storage engine stopped; restart the process"})]
    with pytest.raises(Busy) as ei:
        c._call("GET", "/v1/ready", None, idempotent=True, retries=0)
    assert ei.value.code == "stopped" and "restart the process" in ei.value.message
    script.replies = [(200, {}, {"status": "ok"})]
    assert c.ready() and c.health() and c.live()


def test_helpers() -> None:
    assert _retry_after("2") == 2.0 and _retry_after("-1") == 0.0 and _retry_after(None) is None
    assert _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    assert _retry_after("soon") is None
    from datetime import timedelta

    assert _duration(timedelta(days=3)) == "259200s"
    assert _duration(timedelta(milliseconds=1500)) == "1.5s"
    assert _duration("72h") == "72h"
    with pytest.raises(ValueError):
        _duration(timedelta(0))


def test_bad_arguments() -> None:
    for bad in ("localhost:7373", "http://", "http://127.0.0.1:port", "ftp://127.0.0.1:7373"):
        with pytest.raises(ValueError, match="base_url"):
            Client(bad)
    with pytest.raises(ValueError, match="retries"):
        Client(retries=-1)
    c = Client()
    with pytest.raises(TypeError, match="agent"):
        c.append("x")
    with pytest.raises(TypeError, match="agents"):
        c.recall("x", agents="a1")


RECALL_EMPTY = (200, {}, {"memories": [], "recall_id": 1, "stats": {
    "mode": "sparse", "text": "x", "dense_text": "", "time_expr": "", "speakers": [], "expansion": "", "notes": [],
    "filtered": 0, "bm25_hits": 0, "session_turns": 0, "fallback": 0, "speaker_records": 0, "neighbours": 0,
    "candidates": 0, "embedded": 0, "cache_hits": 0, "disk_hits": 0, "shared": 0, "stage_us": {}}})
RECORD = (200, {}, {"id": 5, "time": "2026-01-01T00:00:00Z", "agent": "a", "text": "x"})


def test_cluster_reads_carry_the_agents_last_append(stub) -> None:
    """Cluster mode: an append's seq goes with that agent's later reads as
    ?min_seq= (read your writes through any node); the highest with a get;
    another agent's reads carry none."""
    url, script = stub
    c = Client(url, retries=0)
    script.replies = [(200, {}, {"ids": [5], "seq": 42}), (200, {}, {"ids": [6, 7], "seq": 44}),
                      RECALL_EMPTY, RECALL_EMPTY, RECALL_EMPTY, RECORD, (200, {}, {"units": []})]
    c.append("first", agent="a")
    c.append_batch([Record(agent="b", text="x"), Record(agent="c", text="y")])
    c.recall("first", agent="a")
    c.recall("x", agent="z")
    c.recall("x", agents=["a", "c"])
    c.get(5)
    c.core(agent="b")
    paths = [r[1] for r in script.requests]
    assert paths[2] == "/v1/recall?min_seq=42", paths
    assert paths[3] == "/v1/recall", paths
    assert paths[4] == "/v1/recall?min_seq=44", paths
    assert paths[5] == "/v1/records/5?min_seq=44", paths
    assert paths[6] == "/v1/core?agent=b&min_seq=44", paths


def test_standalone_reads_carry_no_sequence(stub) -> None:
    url, script = stub
    c = Client(url, retries=0)
    script.replies = [OK_IDS, RECALL_EMPTY, RECORD]
    c.append("x", agent="a")
    c.recall("x", agent="a")
    c.get(7)
    assert [r[1] for r in script.requests] == ["/v1/records", "/v1/recall", "/v1/records/7"]
