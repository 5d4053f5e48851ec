"""The synchronous HTTP client of lazymemd (standard library only: http.client, json)."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import threading
import time as _time
import urllib.parse
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .errors import Busy, ConnectionFailed, LazymemError, error_for
from .types import ConsolidateReport, MetaValue, RecallResult, Record, Unit, format_time

DEFAULT_URL = "http://127.0.0.1:7373"

# 503 codes after which nothing was done, so any request may be sent again
# unchanged. Other 503s (timeout, closed, canceled) may follow work that was
# done (an append that timed out after its write), so only requests that
# change nothing are retried after them.
_RETRY_ANY = frozenset({"busy", "starting"})

# How many agents' last append sequences a client keeps (cluster mode).
_SEQ_AGENTS = 10000


class Client:
    """A client of one lazymemd daemon. Safe to share between threads (each
    call opens its own connection).

    base_url: the daemon, e.g. "http://127.0.0.1:7373".
    token: the bearer token of a daemon started with --token-file.
    timeout: seconds per HTTP attempt.
    retries: how many times a 503 is retried (0: never). A 503 "busy" or
        "starting" is retried for every call; other 503s only for calls
        that change nothing (get, recall, stats, probes).
    backoff: first wait in seconds when the reply has no Retry-After; it
        doubles per attempt, with jitter.
    max_wait: bound of one wait in seconds, Retry-After included.
    headers: extra headers sent with every request.

    Against a cluster (lazymemd --cluster, docs/CLUSTER.md) an append's
    reply carries the stream sequence that stored it; the client keeps
    the last one of each agent and sends it as ?min_seq= with that agent's
    recalls, feedback, consolidations and core reads (the highest of all
    with a get, or a call naming no agent), so it reads its own appends
    through any node. A standalone daemon answers no sequence: nothing is
    added.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        token: Optional[str] = None,
        timeout: float = 30.0,
        *,
        retries: int = 3,
        backoff: float = 0.1,
        max_wait: float = 10.0,
        headers: Optional[Mapping[str, str]] = None,
        sleep: Callable[[float], None] = _time.sleep,
    ) -> None:
        if retries < 0:
            raise ValueError(f"retries: {retries}, want >= 0")
        if timeout <= 0:
            raise ValueError(f"timeout: {timeout}, want > 0 seconds")
        if backoff < 0 or max_wait < 0:
            raise ValueError("backoff and max_wait: want >= 0 seconds")
        parsed = urllib.parse.urlsplit(base_url)
        try:
            port_ok = parsed.port is None or parsed.port > 0
        except ValueError:
            port_ok = False
        if parsed.scheme not in ("http", "https") or not parsed.hostname or not port_ok:
            raise ValueError(f"base_url: {base_url!r}, want http(s)://host:port")
        self.base_url = base_url.rstrip("/")
        self._url = parsed
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.headers = dict(headers or {})
        self._sleep = sleep
        self._seq_lock = threading.Lock()
        self._seqs: "OrderedDict[str, int]" = OrderedDict()  # agent -> its last append's sequence
        self._seq = 0  # the highest of all

    def __repr__(self) -> str:
        return f"Client({self.base_url!r})"

    # Records.

    def append(
        self,
        record: Union[Record, str],
        *,
        agent: Optional[str] = None,
        session: str = "",
        role: str = "",
        time: Optional[Union[datetime, str]] = None,
        meta: Optional[Mapping[str, MetaValue]] = None,
    ) -> int:
        """Appends one record and returns its id once it is durable.

        Pass a Record, or the text with agent= (and optionally session, role,
        time, meta).
        """
        if isinstance(record, Record):
            if agent is not None or session or role or time is not None or meta is not None:
                raise TypeError("append: give a Record or text with keywords, not both")
            body = record.to_json()
        else:
            if agent is None:
                raise TypeError("append: agent= is required with a text")
            body = Record(agent=agent, text=record, session=session, role=role, meta=dict(meta) if meta else None).to_json()
            if time is not None:
                body["time"] = format_time(time, "record.time")
        reply = self._call("POST", "/v1/records", body, idempotent=False)
        self._saw([body.get("agent", "")], reply)
        return int(reply["ids"][0])

    def append_batch(self, records: Iterable[Record]) -> List[int]:
        """Appends records as one durable write; returns their ids in order.

        One invalid record rejects the whole batch (InvalidInput, field like
        "records[3].agent") and nothing is written.
        """
        body = [r.to_json(f"records[{i}]") for i, r in enumerate(records)]
        if not body:
            return []
        reply = self._call("POST", "/v1/records", {"records": body}, idempotent=False)
        # A batch's sequence is its last record's: an upper bound for each
        # of its agents, which the owner caps at its partition's last.
        self._saw([r.get("agent", "") for r in body], reply)
        return [int(i) for i in reply["ids"]]

    def get(self, id: int) -> Record:
        """Reads one stored record; NotFound for an id never assigned, another tenant's or a forgotten one."""
        if isinstance(id, bool) or not isinstance(id, int) or id < 1:
            raise ValueError(f"id: {id!r}, want a positive integer")
        return Record.from_json(self._call("GET", self._after(f"/v1/records/{id}", None), None, idempotent=True))

    # Recall.

    def recall(
        self,
        text: str = "",
        *,
        agent: Optional[str] = None,
        agents: Optional[Sequence[str]] = None,
        sessions: Optional[Sequence[str]] = None,
        roles: Optional[Sequence[str]] = None,
        since: Optional[Union[datetime, str]] = None,
        until: Optional[Union[datetime, str]] = None,
        where: Optional[Mapping[str, MetaValue]] = None,
        not_: Optional[Mapping[str, MetaValue]] = None,
        k: Optional[int] = None,
        candidates: Optional[int] = None,
        current_session: Optional[str] = None,
        session_turns: Optional[int] = None,
        mode: Optional[str] = None,
        fusion: Optional[str] = None,
        dense_weight: Optional[float] = None,
        speaker_boost: Optional[float] = None,
        recency_half_life: Optional[Union[timedelta, str]] = None,
        recency_weight: Optional[float] = None,
        now: Optional[Union[datetime, str]] = None,
        parse_time: Optional[bool] = None,
        synonyms: Optional[Mapping[str, Sequence[str]]] = None,
        explain: Optional[bool] = None,
        tier: Optional[str] = None,
        fallback_scan: Optional[int] = None,
        no_expansion: Optional[bool] = None,
        feedback_docs: Optional[int] = None,
        max_dense_scan: Optional[int] = None,
    ) -> RecallResult:
        """Finds the memories that answer text, best first.

        Every argument but agent (or agents) is optional and takes the
        daemon's default; mode is "lazy", "sparse" or "dense", fusion
        "weighted" or "rrf"; not_ is the query's "not" filter. parse_time is
        on unless False: "yesterday" in text narrows the window. tier is
        "all" (default: records and core memory), "core" or "raw".
        recency_half_life "off" turns the recency prior off. max_dense_scan
        may lower the daemon's --max-dense-scan, never raise it.
        """
        q: Dict[str, Any] = {"text": text}
        for name, v in (("agent", agent), ("current_session", current_session), ("mode", mode),
                        ("fusion", fusion), ("k", k), ("candidates", candidates),
                        ("session_turns", session_turns), ("dense_weight", dense_weight),
                        ("speaker_boost", speaker_boost), ("recency_weight", recency_weight),
                        ("parse_time", parse_time), ("explain", explain), ("tier", tier),
                        ("fallback_scan", fallback_scan), ("no_expansion", no_expansion),
                        ("feedback_docs", feedback_docs), ("max_dense_scan", max_dense_scan)):
            if v is not None:
                q[name] = v
        for name, seq in (("agents", agents), ("sessions", sessions), ("roles", roles)):
            if seq is not None:
                if isinstance(seq, str):
                    raise TypeError(f"{name}: want a list of strings, got a string")
                q[name] = list(seq)
        for name, t in (("since", since), ("until", until), ("now", now)):
            if t is not None:
                q[name] = format_time(t, "query." + name)
        for name, m in (("where", where), ("not", not_)):
            if m is not None:
                q[name] = {key: v if isinstance(v, str) else list(v) for key, v in m.items()}
        if synonyms is not None:
            q["synonyms"] = {key: list(v) for key, v in synonyms.items()}
        if recency_half_life is not None:
            q["recency_half_life"] = _duration(recency_half_life)
        named = [agent] if agent is not None else (list(agents) if agents is not None else None)
        return RecallResult.from_json(self._call("POST", self._after("/v1/recall", named), q, idempotent=True))

    # Value feedback and core memory.

    def feedback(self, ids: Sequence[int], useful: bool, *, recall_id: Optional[int] = None,
                 agent: Optional[str] = None) -> Dict[str, int]:
        """Judges memories a recall returned: useful (+1) or not (-1).

        Pass the recall's recall_id and ids it returned (a record's id, or a
        core memory's unit.id); without recall_id the ids are record ids.
        agent may be left out for a key of one agent. Not retried: feedback
        counts. Returns {"judged": n, "signal": +1 or -1}.
        """
        body: Dict[str, Any] = {"ids": [int(i) for i in ids], "signal": 1 if useful else -1}
        if recall_id is not None:
            body["recall_id"] = int(recall_id)
        if agent is not None:
            body["agent"] = agent
        return self._call("POST", self._after("/v1/feedback", None if agent is None else [agent]), body, idempotent=False)

    def consolidate(self, *, agent: Optional[str] = None, session: Optional[str] = None,
                    ids: Optional[Sequence[int]] = None) -> ConsolidateReport:
        """Turns the agent's queued records (of one session, when named; plus
        ids, whatever their value) into units of core memory."""
        body: Dict[str, Any] = {}
        if agent is not None:
            body["agent"] = agent
        if session is not None:
            body["session"] = session
        if ids is not None:
            body["ids"] = [int(i) for i in ids]
        path = self._after("/v1/consolidate", None if agent is None else [agent])
        return ConsolidateReport.from_json(self._call("POST", path, body, idempotent=False))

    def core(self, *, agent: Optional[str] = None, history: bool = False) -> List[Unit]:
        """The agent's core memory: its live units, or with history also the superseded ones."""
        q: Dict[str, str] = {}
        if agent is not None:
            q["agent"] = agent
        if history:
            q["history"] = "true"
        path = "/v1/core" + ("?" + urllib.parse.urlencode(q) if q else "")
        path = self._after(path, None if agent is None else [agent])
        return [Unit.from_json(u) for u in self._call("GET", path, None, idempotent=True).get("units") or []]

    # Store and probes.

    def stats(self) -> Dict[str, Any]:
        """The store's metrics, as the daemon sends them: snake-case keys ("appended", "log": {"next_id": ...}); for a key limited to some agents, {"scope": "agents", "agents": [...]}."""
        return self._call("GET", "/v1/stats", None, idempotent=True)

    def live(self) -> bool:
        """True when the process answers its liveness probe (GET /v1/live),
        which it does while the store is still opening too."""
        return self._call("GET", "/v1/live", None, idempotent=True).get("status") == "ok"

    def ready(self) -> bool:
        """True when the store is open and serving (GET /v1/ready answers 200);
        False while it opens or closes (503). Not retried: a probe reports
        the moment."""
        return self._probe("/v1/ready")

    def health(self) -> bool:
        """GET /v1/health, the same as ready() (kept for older supervisors)."""
        return self._probe("/v1/health")

    def _probe(self, path: str) -> bool:
        try:
            return self._call("GET", path, None, idempotent=True, retries=0).get("status") == "ok"
        except Busy:
            return False

    def wait_ready(self, timeout: float = 30.0, interval: float = 0.1) -> None:
        """Polls ready() until it is True; ConnectionFailed or Busy after timeout seconds."""
        deadline = _time.monotonic() + timeout
        while True:
            try:
                if self.ready():
                    return
                err: LazymemError = Busy("the store is not open yet", status=503, code="opening")
            except ConnectionFailed as e:
                err = e
            if _time.monotonic() >= deadline:
                raise err
            self._sleep(interval)

    # Read your writes in cluster mode.

    def _saw(self, agents: Sequence[str], reply: Any) -> None:
        """Keeps an append reply's sequence (cluster mode) for its agents."""
        seq = reply.get("seq") if isinstance(reply, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or seq <= 0:
            return
        with self._seq_lock:
            self._seq = max(self._seq, seq)
            for a in agents:
                self._seqs[a] = max(self._seqs.pop(a, 0), seq)
            while len(self._seqs) > _SEQ_AGENTS:
                self._seqs.popitem(last=False)

    def _after(self, path: str, agents: Optional[Sequence[str]]) -> str:
        """path with ?min_seq= of the agents' last appends through this
        client (all of them when agents is None); path itself when there
        is none (a standalone daemon)."""
        with self._seq_lock:
            if agents is None:
                seq = self._seq
            else:
                seq = max((self._seqs.get(a, 0) for a in agents), default=0)
        if seq == 0:
            return path
        return path + ("&" if "?" in path else "?") + "min_seq=" + str(seq)

    # Transport.

    def _call(self, method: str, path: str, body: Any, *, idempotent: bool, retries: Optional[int] = None) -> Any:
        data = None
        headers = {"Accept": "application/json", "User-Agent": "lazymem-python/0.1"}
        headers.update(self.headers)
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        limit = self.retries if retries is None else retries
        attempt = 0
        while True:
            try:
                return self._once(method, path, data, headers)
            except Busy as e:
                if attempt >= limit or not (idempotent or e.code in _RETRY_ANY):
                    raise
                self._sleep(self._wait(attempt, e.retry_after))
                attempt += 1

    def _wait(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_wait)
        wait = self.backoff * (2 ** attempt)
        return min(wait * (0.5 + random.random() / 2), self.max_wait)

    def _once(self, method: str, path: str, data: Optional[bytes], headers: Dict[str, str]) -> Any:
        # http.client rather than urllib.request: when the daemon refuses a
        # body early (413 over --max-body) it answers before reading it and
        # closes, so sending the rest fails with a broken pipe; the reply is
        # already in the socket and getresponse() still reads it. urllib
        # drops the connection on that error and reports only the pipe.
        u = self._url
        conn_cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(u.hostname or "", u.port, timeout=self.timeout)
        target = u.path.rstrip("/") + path
        try:
            try:
                conn.request(method, target, body=data, headers=headers)
            except (BrokenPipeError, ConnectionResetError) as e:
                send_err: Optional[OSError] = e
            else:
                send_err = None
            try:
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException) as e:
                raise send_err or e
        except (OSError, http.client.HTTPException) as e:  # refused, reset, timed out
            raise ConnectionFailed(f"{method} {self.base_url}{path}: {e}") from e
        finally:
            conn.close()
        if resp.status >= 400:
            raise error_for(resp.status, _decode(raw), _retry_after(resp.getheader("Retry-After")))
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError as e:
            raise LazymemError(f"{method} {path}: the reply is not JSON: {e}", status=resp.status) from None


def _decode(raw: bytes) -> Any:
    text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _retry_after(v: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: a number of seconds, or an HTTP date."""
    if not v:
        return None
    v = v.strip()
    try:
        return max(float(v), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)


def _duration(d: Union[timedelta, str]) -> str:
    """A Go duration string ("72h", "1.5s") from a timedelta; strings pass through."""
    if isinstance(d, str):
        return d
    secs = d.total_seconds()
    if secs <= 0:
        raise ValueError(f"recency_half_life: {d}, want a positive duration")
    return f"{secs:.6f}".rstrip("0").rstrip(".") + "s"
