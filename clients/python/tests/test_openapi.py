"""Replies of the real daemon checked against docs/openapi.yaml, so that the
description, the daemon and this client cannot drift apart unnoticed."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, List, Optional

import pytest

SPEC = Path(__file__).resolve().parents[3] / "docs" / "openapi.yaml"


@pytest.fixture(scope="module")
def spec() -> dict:
    try:
        import yaml  # PyYAML: Debian's python3-yaml; a test-only dependency
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("PyYAML is needed under CI=true to read docs/openapi.yaml")
        pytest.skip("PyYAML is not installed: cannot read docs/openapi.yaml")
    if not SPEC.is_file():
        pytest.skip(f"{SPEC} is not here (the client was copied out of the repository)")
    return yaml.safe_load(SPEC.read_text())


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def check(spec: dict, schema: dict, v: Any, path: str = "$") -> List[str]:
    """The violations of v against a schema: the subset of JSON Schema the
    description uses ($ref, type, required, properties, additionalProperties,
    items, oneOf, enum, const, minimum, maximum)."""
    if "$ref" in schema:
        node: Any = spec
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        return check(spec, node, v, path)
    if "oneOf" in schema:
        ok = [s for s in schema["oneOf"] if not check(spec, s, v, path)]
        return [] if len(ok) == 1 else [f"{path}: matches {len(ok)} of oneOf, want 1"]
    errs: List[str] = []
    t = schema.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        if not any(_TYPES[x](v) for x in types):
            return [f"{path}: {json.dumps(v)[:60]} is not {t}"]
    if "enum" in schema and v not in schema["enum"]:
        errs.append(f"{path}: {v!r} not in {schema['enum']}")
    if "const" in schema and v != schema["const"]:
        errs.append(f"{path}: {v!r} != {schema['const']!r}")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if "minimum" in schema and v < schema["minimum"]:
            errs.append(f"{path}: {v} < {schema['minimum']}")
        if "maximum" in schema and v > schema["maximum"]:
            errs.append(f"{path}: {v} > {schema['maximum']}")
    if isinstance(v, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in v:
                errs.append(f"{path}: missing required {name!r}")
        extra = schema.get("additionalProperties", True)
        for name, x in v.items():
            if name in props:
                errs += check(spec, props[name], x, f"{path}.{name}")
            elif extra is False:
                errs.append(f"{path}: property {name!r} is not in the description")
            elif isinstance(extra, dict):
                errs += check(spec, extra, x, f"{path}.{name}")
    if isinstance(v, list) and "items" in schema:
        for i, x in enumerate(v):
            errs += check(spec, schema["items"], x, f"{path}[{i}]")
    return errs


def call(daemon, method: str, path: str, body: Optional[Any] = None, token: bool = True, headers=None):
    headers = {"Content-Type": "application/json", **(headers or {})}
    if token:
        headers["Authorization"] = "Bearer " + daemon.token
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(daemon.url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")  # a 202 has no body
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def reply_schema(spec: dict, path: str, method: str, status: int) -> dict:
    """The JSON schema the description gives for this reply; fails if it has none."""
    item = spec["paths"][path]
    op = item.get(method.lower())
    if op is None and status == 405:  # described on the methods the path has
        op = next(iter(item.values()))
    assert op is not None, f"{method} {path} is not described"
    resp = op["responses"].get(str(status))
    assert resp is not None, f"{method} {path}: status {status} is not described"
    if "$ref" in resp:
        resp = spec["components"]["responses"][resp["$ref"].split("/")[-1]]
    return resp["content"]["application/json"]["schema"]


def assert_conforms(spec: dict, daemon, method: str, path: str, template: str, body: Any = None,
                    want: int = 200, token: bool = True) -> Any:
    status, reply = call(daemon, method, path, body, token)
    assert status == want, reply
    errs = check(spec, reply_schema(spec, template, method, status), reply)
    assert not errs, errs
    return reply


def test_request_schemas_accept_what_the_client_sends(spec: dict) -> None:
    from lazymem import Record

    s = spec["components"]["schemas"]
    rec = Record(agent="a", text="t", session="s", role="r", meta={"k": "v", "tags": ["x"]}).to_json()
    assert not check(spec, s["RecordInput"], rec)
    assert not check(spec, s["RecordBatch"], {"records": [rec]})
    assert check(spec, s["RecordInput"], {"agent": "a", "text": "t", "bogus": 1})
    assert not check(spec, s["Query"], {"text": "q", "agent": "a", "mode": "sparse", "fusion": "rrf", "k": 5,
                                        "where": {"k": ["v"]}, "synonyms": {"pg": ["postgres"]}})
    assert check(spec, s["Query"], {"agent": "a", "mode": "eager"})


def test_replies_conform(spec: dict, daemon) -> None:
    agent = "openapi-" + os.urandom(3).hex()
    # Written "yesterday" for the recall below, whose reply must carry the
    # parsed window (an empty one is dropped when a record says its words).
    rec = {"agent": agent, "session": "s1", "role": "user", "text": "pool size twenty", "meta": {"tags": ["db"]},
           "time": "2026-05-01T09:00:00Z"}
    ids = assert_conforms(spec, daemon, "POST", "/v1/records", "/v1/records", rec)["ids"]
    assert_conforms(spec, daemon, "POST", "/v1/records", "/v1/records",
                    {"records": [{"agent": agent, "text": "no meta, no session"}]})
    assert_conforms(spec, daemon, "GET", f"/v1/records/{ids[0]}", "/v1/records/{id}")
    res = assert_conforms(spec, daemon, "POST", "/v1/recall", "/v1/recall",
                          {"agent": agent, "text": "pool yesterday", "explain": True, "now": "2026-05-02T10:00:00Z"})
    assert res["stats"]["time_expr"]  # "yesterday" was parsed: the optional fields were checked too
    res = assert_conforms(spec, daemon, "POST", "/v1/recall", "/v1/recall", {"agent": agent, "text": "pool"})
    assert res["memories"]
    assert_conforms(spec, daemon, "GET", "/v1/stats", "/v1/stats")
    # Core memory: a consolidation's report, the units, a core recall and feedback.
    dec = assert_conforms(spec, daemon, "POST", "/v1/records", "/v1/records",
                          {"agent": agent, "session": "s1", "role": "ann", "text": "We decided to move billing to Postgres 16."})["ids"]
    rep = assert_conforms(spec, daemon, "POST", "/v1/consolidate", "/v1/consolidate", {"agent": agent, "ids": dec})
    assert rep["units"]
    assert_conforms(spec, daemon, "GET", f"/v1/core?agent={agent}&history=true", "/v1/core")
    res = assert_conforms(spec, daemon, "POST", "/v1/recall", "/v1/recall", {"agent": agent, "text": "billing Postgres", "tier": "core"})
    assert res["memories"] and res["memories"][0]["kind"] == "core"
    assert_conforms(spec, daemon, "POST", "/v1/feedback", "/v1/feedback",
                    {"agent": agent, "recall_id": res["recall_id"], "ids": [res["memories"][0]["unit"]["id"]], "signal": 1})
    for probe in ("/v1/health", "/v1/live", "/v1/ready"):
        assert_conforms(spec, daemon, "GET", probe, probe, token=False)


def test_errors_conform(spec: dict, daemon) -> None:
    cases = [
        ("POST", "/v1/records", "/v1/records", {"records": [{"agent": "", "text": "x"}]}, 400, True),
        ("POST", "/v1/recall", "/v1/recall", {"agent": "a", "k": -1}, 400, True),
        ("POST", "/v1/recall", "/v1/recall", {"agent": "a", "bogus": 1}, 400, True),
        ("GET", "/v1/records/abc", "/v1/records/{id}", None, 400, True),
        ("GET", "/v1/records/999999999", "/v1/records/{id}", None, 404, True),
        ("GET", "/v1/records", "/v1/records", None, 405, True),
        ("POST", "/v1/recall", "/v1/recall", {"agent": "a"}, 401, False),
        ("GET", "/v1/stats", "/v1/stats", None, 401, False),
        ("POST", "/v1/records", "/v1/records", {"records": [{"agent": "a", "text": "x"}] * 101}, 413, True),
        ("POST", "/v1/recall", "/v1/recall", {"agent": "a", "agents": ["b", "c", "d", "e", "f"]}, 413, True),
    ]
    for method, path, template, body, want, token in cases:
        reply = assert_conforms(spec, daemon, method, path, template, body, want, token)
        if want == 400:
            assert reply["error"]["code"] in ("invalid", "bad_body")
            assert reply["error"].get("field"), reply  # bad input names the field


def test_mcp_conforms(spec: dict, daemon) -> None:
    agent = "openapi-mcp-" + os.urandom(3).hex()
    for msg in (
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "remember", "arguments": {"agent": agent, "text": "the pool is 20"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such"},
    ):
        assert not check(spec, spec["components"]["schemas"]["RpcRequest"], msg)
        reply = assert_conforms(spec, daemon, "POST", "/mcp", "/mcp", msg)
        assert reply["id"] == msg["id"]
    status, reply = call(daemon, "POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (status, reply) == (202, None)
    status, reply = call(daemon, "POST", "/mcp", {"jsonrpc": "2.0", "id": 5, "method": "ping"},
                         headers={"Mcp-Protocol-Version": "1999-01-01"})
    assert status == 400 and not check(spec, reply_schema(spec, "/mcp", "POST", 400), reply), reply
