"""The client against a real lazymemd (see conftest.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone

import pytest

from lazymem import (
    Busy,
    Client,
    ConnectionFailed,
    Forbidden,
    InvalidInput,
    LazymemError,
    MethodNotAllowed,
    NotFound,
    RecallResult,
    Record,
    TooLarge,
    Unauthorized,
)

from conftest import MAX_AGENTS, MAX_BATCH, MAX_BODY


def test_append_get_roundtrip(client: Client, agent: str) -> None:
    t = datetime(2026, 5, 1, 14, 3, 0, 123456, tzinfo=timezone.utc)
    rid = client.append("Let's set the connection pool to 20 on billing-api.", agent=agent,
                        session="s-42", role="user", time=t, meta={"tags": ["db", "config"], "team": "infra"})
    assert rid >= 1
    rec = client.get(rid)
    assert rec == Record(id=rid, time=t, agent=agent, session="s-42", role="user",
                         text="Let's set the connection pool to 20 on billing-api.",
                         meta={"tags": ["db", "config"], "team": ["infra"]})


def test_append_record_object_and_server_clock(client: Client, agent: str) -> None:
    before = datetime.now(timezone.utc) - timedelta(seconds=5)
    rid = client.append(Record(agent=agent, text="no time given: the daemon's clock"))
    rec = client.get(rid)
    assert rec.time >= before
    assert rec.session == "" and rec.role == "" and rec.meta == {}


def test_append_batch_ids_consecutive(client: Client, agent: str) -> None:
    recs = [Record(agent=agent, session="s1", role="user" if i % 2 == 0 else "assistant", text=f"turn {i} about kafka")
            for i in range(5)]
    ids = client.append_batch(recs)
    assert ids == list(range(ids[0], ids[0] + 5))
    assert [client.get(i).text for i in ids] == [r.text for r in recs]
    assert client.append_batch([]) == []


def test_batch_with_bad_record_writes_nothing(client: Client, agent: str) -> None:
    before = client.stats()["log"]["next_id"]
    with pytest.raises(InvalidInput) as ei:
        client.append_batch([Record(agent=agent, text="fine"), Record(agent="", text="no agent")])
    e = ei.value
    assert (e.status, e.code, e.field) == (400, "invalid", "records[1].agent")
    assert "records[1].agent" in e.message
    assert client.stats()["log"]["next_id"] == before


def test_recall_finds_and_explains(client: Client, agent: str) -> None:
    client.append_batch([
        Record(agent=agent, session="s1", role="user", text="We picked Postgres for the billing service."),
        Record(agent=agent, session="s1", role="assistant", text="Noted: the pool size is 20 connections."),
        Record(agent=agent, session="s2", role="user", text="Lunch is at noon on Friday."),
    ])
    res = client.recall("what pool size did we choose?", agent=agent, k=2, explain=True)
    assert isinstance(res, RecallResult)
    assert 1 <= len(res.memories) <= 2
    top = res.memories[0]
    assert "pool size is 20" in top.text
    assert top.agent == agent and top.reasons
    assert top.score > 0 and top.sparse > 0
    st = res.stats
    assert st.mode == "lazy" and st.filtered == 3 and st.bm25_hits >= 1
    assert set(st.stage_us) == {"filter", "broad", "fetch", "embed", "score", "total"}
    # Scores are best first.
    assert [m.score for m in res.memories] == sorted((m.score for m in res.memories), reverse=True)


def test_feedback_consolidate_core(client: Client, agent: str) -> None:
    a, b = client.append_batch([
        Record(agent=agent, session="s1", role="ann", text="We decided to move the billing service to Postgres 16."),
        Record(agent=agent, session="s1", role="bo", text="Bo will write the migration script by Friday."),
    ])
    rep = client.consolidate(agent=agent, ids=[a, b])
    assert rep.selected >= 1 and rep.units and rep.duration_us >= 0
    units = client.core(agent=agent)
    assert sorted(u.id for u in units) == sorted(u.id for u in rep.units)
    assert all(u.agent == agent and u.superseded_by == 0 and u.source_ids for u in units)
    assert len(client.core(agent=agent, history=True)) >= len(units)
    res = client.recall("billing Postgres", agent=agent, tier="core")
    assert res.recall_id > 0 and res.memories
    m = res.memories[0]
    assert m.kind == "core" and m.id == 0 and m.unit is not None and m.unit.id > 0
    assert client.feedback([m.unit.id], True, recall_id=res.recall_id, agent=agent) == {"judged": 1, "signal": 1}
    assert client.feedback([a], False, agent=agent) == {"judged": 1, "signal": -1}
    with pytest.raises(InvalidInput) as ei:
        client.feedback([424242], True, recall_id=res.recall_id, agent=agent)
    assert ei.value.field == "feedback.ids[0]"
    with pytest.raises(NotFound):
        client.feedback([a], True, recall_id=99999999, agent=agent)
    with pytest.raises(InvalidInput) as ei:
        client.consolidate()
    assert ei.value.field == "consolidate.agent"


def test_recall_filters_and_modes(client: Client, agent: str) -> None:
    t0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
    client.append_batch([
        Record(agent=agent, session="a", role="user", text="deploy the cache on monday", time=t0, meta={"env": "prod"}),
        Record(agent=agent, session="b", role="user", text="deploy the cache on tuesday", time=t0 + timedelta(days=1), meta={"env": "dev"}),
        Record(agent=agent, session="b", role="bot", text="deploy the cache on wednesday", time=t0 + timedelta(days=2), meta={"env": "prod"}),
    ])
    res = client.recall("deploy cache", agent=agent, mode="sparse", where={"env": "prod"}, roles=["user"])
    assert [m.text for m in res.memories] == ["deploy the cache on monday"]
    assert res.stats.mode == "sparse" and res.memories[0].dense == 0
    assert res.stats.dense_text == "" and res.stats.speakers == [] and res.stats.notes == []
    assert res.stats.disk_hits == 0 and res.stats.shared == 0 and res.stats.fallback >= 0
    res = client.recall("deploy cache", agent=agent, since=t0 + timedelta(hours=12), until=t0 + timedelta(days=2),
                        parse_time=False, fusion="rrf")
    assert [m.text for m in res.memories] == ["deploy the cache on tuesday"]
    assert res.stats.since == t0 + timedelta(hours=12)
    res = client.recall("deploy cache", agent=agent, not_={"env": "prod"}, mode="dense",
                        recency_half_life=timedelta(days=3), synonyms={"deploy": ["ship"]})
    assert [m.session for m in res.memories] == ["b"]
    res = client.recall("deploy cache", agent=agent, recency_half_life="off", no_expansion=True,
                        feedback_docs=2, fallback_scan=-1, max_dense_scan=1000)
    assert res.memories
    # Another agent's records are never seen.
    assert client.recall("deploy cache", agent=agent + "-other").memories == []


def test_recall_invalid_names_field(client: Client, agent: str) -> None:
    for kwargs, field in (({"k": -1}, "query.k"), ({"mode": "eager"}, "query.mode"),
                          ({"fusion": "max"}, "query.fusion"), ({"recency_half_life": "soon"}, "query.recency_half_life"),
                          ({"feedback_docs": 51}, "query.feedback_docs")):
        with pytest.raises(InvalidInput) as ei:
            client.recall("x", agent=agent, **kwargs)
        assert ei.value.status == 400 and ei.value.code == "invalid"
        assert ei.value.field == field, kwargs
    with pytest.raises(InvalidInput) as ei:
        client.recall("x")  # no agent
    assert ei.value.field is not None and "agent" in ei.value.field


def test_naive_time_refused_locally(client: Client, agent: str) -> None:
    with pytest.raises(ValueError, match="record.time"):
        client.append("x", agent=agent, time=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="records\\[0\\].time"):
        client.append_batch([Record(agent=agent, text="x", time=datetime(2026, 1, 1))])


def test_get_unknown_and_bad_id(client: Client) -> None:
    with pytest.raises(NotFound) as ei:
        client.get(10**12)
    assert ei.value.status == 404 and ei.value.code == "not_found"
    with pytest.raises(ValueError):
        client.get(0)


def test_too_large(client: Client, agent: str) -> None:
    with pytest.raises(TooLarge) as ei:
        client.append("x" * (MAX_BODY + 1), agent=agent)
    assert ei.value.status == 413 and ei.value.code == "too_large"
    before = client.stats()["log"]["next_id"]
    with pytest.raises(TooLarge) as ei:
        client.append_batch([Record(agent=agent, text=f"r{i}") for i in range(MAX_BATCH + 1)])
    assert (ei.value.code, ei.value.field) == ("too_large", "records")
    assert client.stats()["log"]["next_id"] == before
    assert len(client.append_batch([Record(agent=agent, text=f"r{i}") for i in range(MAX_BATCH)])) == MAX_BATCH
    with pytest.raises(TooLarge) as ei:
        client.recall("x", agent=agent, agents=[f"a{i}" for i in range(MAX_AGENTS)])
    assert (ei.value.code, ei.value.field) == ("too_large", "query.agents")


def test_unauthorized(daemon, agent: str) -> None:
    for token in (None, "wrong"):
        with pytest.raises(Unauthorized) as ei:
            Client(daemon.url, token=token).recall("x", agent=agent)
        assert ei.value.status == 401 and ei.value.code == "unauthorized"
    # The probes need no token.
    assert Client(daemon.url).ready() is True


def test_forbidden_origin(daemon, agent: str) -> None:
    c = Client(daemon.url, token=daemon.token, headers={"Origin": "http://evil.example"})
    with pytest.raises(Forbidden) as ei:
        c.append("x", agent=agent)
    assert ei.value.status == 403 and ei.value.code.startswith("forbidden_")


def test_method_not_allowed(client: Client) -> None:
    with pytest.raises(MethodNotAllowed) as ei:
        client._call("DELETE", "/v1/records", None, idempotent=False)
    assert ei.value.status == 405 and ei.value.code == "method_not_allowed"


def test_stats(client: Client, agent: str) -> None:
    client.append("counted", agent=agent)
    st = client.stats()
    assert st["scope"] == "store" and st["appended"] >= 1 and st["log"]["next_id"] >= 2 and "index" in st and "cache" in st


def test_probes(daemon, client: Client) -> None:
    anon = Client(daemon.url)  # the probes need no token
    for c in (client, anon):
        assert c.live() is True
        assert c.ready() is True
        assert c.health() is True
    anon.wait_ready(timeout=5)


def test_connection_failed() -> None:
    # A port nothing listens on: bind one, learn it, close it.
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ConnectionFailed) as ei:
        Client(f"http://127.0.0.1:{port}", timeout=2).health()
    assert isinstance(ei.value, LazymemError) and ei.value.status == 0


def test_unicode_roundtrip(client: Client, agent: str) -> None:
    rid = client.append("昨天我们决定把连接池设为20 🚀", agent=agent, role="用户")
    assert client.get(rid).text == "昨天我们决定把连接池设为20 🚀"
    res = client.recall("连接池", agent=agent, mode="sparse", parse_time=False)
    assert [m.id for m in res.memories] == [rid]


def test_context_block(client: Client, agent: str) -> None:
    t0 = datetime(2026, 2, 1, 9, 0, tzinfo=timezone.utc)
    client.append_batch([
        Record(agent=agent, role="user", text="the pool should be 20", time=t0 + timedelta(minutes=5)),
        Record(agent=agent, role="assistant", text="pool set to 20", time=t0),
    ])
    res = client.recall("pool", agent=agent, mode="sparse")
    block = res.context(budget=4000)
    assert block.splitlines() == ["[2026-02-01 09:00] assistant: pool set to 20",
                                  "[2026-02-01 09:05] user: the pool should be 20"]
    assert res.context(budget=45).count("\n") == 0  # only one line fits


def test_raw_error_body_shape(daemon) -> None:
    # The error body every status shares, read without the client.
    req = urllib.request.Request(daemon.url + "/v1/nowhere", headers={"Authorization": "Bearer " + daemon.token})
    with pytest.raises(urllib.error.HTTPError) as ei:
        urllib.request.urlopen(req, timeout=10)
    body = json.loads(ei.value.read())
    assert ei.value.code == 404 and set(body) == {"error"} and body["error"]["code"] == "not_found"


def test_example_agent_loop(daemon) -> None:
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"
    out = subprocess.run([sys.executable, str(example), "--url", daemon.url, "--token", daemon.token],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    answers = [line for line in out.stdout.splitlines() if line.startswith("agent> ")]
    assert answers[0] == "agent> I don't remember anything about that yet."
    assert "connection pool should be 20" in answers[2]
    assert "on-call rotation switches on Mondays" in answers[3]


def test_busy_retried_against_the_daemon(lazymemd_bin: str, tmp_path) -> None:
    """A real 503 busy: a stalled request holds the daemon's --max-decode-bytes
    budget, the client's append is refused with Retry-After, and the retry,
    once the stalled request is finished, succeeds."""
    import select
    import socket
    import time

    from conftest import TOKEN, Daemon

    budget = 65536  # --max-body and --max-decode-bytes: one body fills it
    dm = Daemon(lazymemd_bin, tmp_path, TOKEN, ["--max-body", str(budget), "--max-decode-bytes", str(budget)])
    try:
        host, port = dm.url.removeprefix("http://").split(":")
        stalled = json.dumps({"agent": "stall", "text": "s" * (budget - 200)}).encode()  # leaves < 200 bytes
        head = (f"POST /v1/records HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(stalled)}\r\nConnection: close\r\n\r\n")
        probe = Client(dm.url, token=TOKEN, retries=0)

        def stall() -> "socket.socket | None":
            """Sends the headers and the start of the body; returns once the
            daemon holds the budget (a harmless recall of the client's size
            is refused), or None when the daemon refused the stalled request
            itself (a probe held part of the budget at that moment)."""
            sock = socket.create_connection((host, int(port)), timeout=30)
            sock.sendall(head.encode() + stalled[:100])  # the daemon reserves the announced length
            while True:
                try:
                    probe.recall("y" * 300, agent="busy-test")
                except Busy as e:
                    assert e.code == "busy"
                    return sock
                if select.select([sock], [], [], 0)[0]:  # the stalled request got its reply: a 503
                    sock.close()
                    return None
                time.sleep(0.01)

        deadline = time.monotonic() + 30
        while (sock := stall()) is None:
            assert time.monotonic() < deadline, "the stalled request never held the budget: " + dm.log.read_text()[-2000:]
        waits = []

        def finish_stalled(seconds: float) -> None:
            waits.append(seconds)
            if len(waits) == 1:
                sock.sendall(stalled[100:])
                reply = b""
                while chunk := sock.recv(65536):
                    reply += chunk
                assert reply.startswith(b"HTTP/1.1 200"), reply[-300:]

        c = Client(dm.url, token=TOKEN, retries=3, sleep=finish_stalled)
        # Refused at first: not enough of the budget is left for this body.
        rid = c.append("x" * 300, agent="busy-test")
        assert waits == [1.0]  # the daemon's Retry-After
        assert c.get(rid).text == "x" * 300
        sock.close()
    finally:
        dm.stop()
