"""Typed forms of the JSON the daemon takes and returns (docs/openapi.yaml)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

MetaValue = Union[str, Sequence[str]]

# Go writes RFC 3339 with up to nine fractional digits; datetime holds six.
_FRACTION = re.compile(r"(\.\d{6})\d+")


def parse_time(s: str) -> datetime:
    """Parses an RFC 3339 time as the daemon writes it (nanoseconds are cut to microseconds)."""
    t = _FRACTION.sub(r"\1", s)
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    return datetime.fromisoformat(t)


def format_time(t: Union[datetime, str], name: str) -> str:
    """RFC 3339 for the daemon. A naive datetime is refused: its zone would be a guess."""
    if isinstance(t, str):
        return t
    if not isinstance(t, datetime):
        raise TypeError(f"{name}: want a datetime or an RFC 3339 string, got {type(t).__name__}")
    if t.tzinfo is None or t.tzinfo.utcoffset(t) is None:
        raise ValueError(f"{name}: a naive datetime has no time zone; use datetime.now(timezone.utc) or .replace(tzinfo=...)")
    return t.isoformat()


def _meta_out(meta: Optional[Mapping[str, MetaValue]]) -> Optional[Dict[str, Any]]:
    if meta is None:
        return None
    out: Dict[str, Any] = {}
    for k, v in meta.items():
        out[k] = v if isinstance(v, str) else list(v)
    return out


@dataclass
class Record:
    """One memory: what an agent saw, said or decided.

    agent and a non-blank text are required. time None means the daemon's
    clock. meta maps a key to a string or a list of strings. id is set on
    records read back (get, recall), None on records to append.
    """

    agent: str
    text: str
    session: str = ""
    role: str = ""
    time: Optional[datetime] = None
    meta: Optional[Dict[str, MetaValue]] = None
    id: Optional[int] = None

    def to_json(self, name: str = "record") -> Dict[str, Any]:
        """The JSON object of POST /v1/records; name prefixes a bad time's message."""
        out: Dict[str, Any] = {"agent": self.agent, "text": self.text}
        if self.session:
            out["session"] = self.session
        if self.role:
            out["role"] = self.role
        if self.time is not None:
            out["time"] = format_time(self.time, name + ".time")
        meta = _meta_out(self.meta)
        if meta:
            out["meta"] = meta
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Record":
        return cls(
            id=int(d["id"]),
            time=parse_time(d["time"]),
            agent=d["agent"],
            session=d.get("session") or "",
            role=d.get("role") or "",
            text=d["text"],
            meta=dict(d.get("meta") or {}),
        )


@dataclass
class ActionItem:
    """A task an action-item unit assigns; due is None when none was said."""

    owner: str
    task: str
    due: Optional[datetime] = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ActionItem":
        return cls(owner=d["owner"], task=d["task"], due=parse_time(d["due"]) if d.get("due") else None)


@dataclass
class Unit:
    """A unit of core memory: a decision, action item, preference, outcome or
    fact distilled from the records it cites (source_ids). superseded_by is
    the unit that replaced it, 0 while it is live."""

    id: int
    type: str
    topic: str
    content: str
    action_items: List[ActionItem]
    participants: List[str]
    source_ids: List[int]
    time: datetime
    confidence: float
    supersedes: List[int]
    superseded_by: int
    agent: str

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Unit":
        return cls(
            id=int(d["id"]),
            type=d["type"],
            topic=d["topic"],
            content=d["content"],
            action_items=[ActionItem.from_json(a) for a in d.get("action_items") or []],
            participants=list(d.get("participants") or []),
            source_ids=[int(i) for i in d.get("source_ids") or []],
            time=parse_time(d["time"]),
            confidence=float(d["confidence"]),
            supersedes=[int(i) for i in d.get("supersedes") or []],
            superseded_by=int(d.get("superseded_by") or 0),
            agent=d["agent"],
        )


@dataclass
class ConsolidateReport:
    """What a consolidation did: records labelled and selected, the units
    stored, the ids of the units it superseded, its duration (microseconds)."""

    labelled: int
    selected: int
    units: List[Unit]
    superseded: List[int]
    duration_us: int

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ConsolidateReport":
        return cls(
            labelled=int(d["labelled"]),
            selected=int(d["selected"]),
            units=[Unit.from_json(u) for u in d.get("units") or []],
            superseded=[int(i) for i in d.get("superseded") or []],
            duration_us=int(d["duration_us"]),
        )


@dataclass
class Memory:
    """A recalled memory with its scores: score is the fused score, sparse the
    BM25 score (0 when not a BM25 hit), dense the cosine with the query (0 in
    sparse mode); reasons is filled when the query asked to explain. kind is
    "raw" for a record, "core" for a unit of core memory: then id is 0 and
    unit is set (feedback names it by unit.id)."""

    id: int
    time: datetime
    agent: str
    session: str
    role: str
    text: str
    meta: Dict[str, List[str]]
    score: float
    sparse: float
    dense: float
    reasons: List[str] = field(default_factory=list)
    kind: str = "raw"
    unit: Optional[Unit] = None

    @property
    def record(self) -> Record:
        return Record(id=self.id, time=self.time, agent=self.agent, session=self.session,
                      role=self.role, text=self.text, meta=dict(self.meta))

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Memory":
        return cls(
            id=int(d["id"]),
            time=parse_time(d["time"]),
            agent=d["agent"],
            session=d.get("session") or "",
            role=d.get("role") or "",
            text=d["text"],
            meta=dict(d.get("meta") or {}),
            score=float(d["score"]),
            sparse=float(d["sparse"]),
            dense=float(d["dense"]),
            reasons=list(d.get("reasons") or []),
            kind=d.get("kind") or "raw",
            unit=Unit.from_json(d["unit"]) if d.get("unit") else None,
        )


@dataclass
class RecallStats:
    """What a recall did: records passing the filters, BM25 hits, candidates,
    texts embedded and served from the cache, time per stage (microseconds)."""

    mode: str
    text: str
    filtered: int
    bm25_hits: int
    session_turns: int
    candidates: int
    embedded: int
    cache_hits: int
    stage_us: Dict[str, int]
    time_expr: str = ""
    since: Optional[datetime] = None
    until: Optional[datetime] = None
    dense_text: str = ""
    speakers: List[str] = field(default_factory=list)
    expansion: str = ""
    notes: List[str] = field(default_factory=list)
    fallback: int = 0
    speaker_records: int = 0
    disk_hits: int = 0
    shared: int = 0

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "RecallStats":
        return cls(
            mode=d["mode"],
            text=d["text"],
            filtered=int(d["filtered"]),
            bm25_hits=int(d["bm25_hits"]),
            session_turns=int(d["session_turns"]),
            candidates=int(d["candidates"]),
            embedded=int(d["embedded"]),
            cache_hits=int(d["cache_hits"]),
            stage_us={k: int(v) for k, v in (d.get("stage_us") or {}).items()},
            time_expr=d.get("time_expr") or "",
            since=parse_time(d["since"]) if d.get("since") else None,
            until=parse_time(d["until"]) if d.get("until") else None,
            dense_text=d.get("dense_text") or "",
            speakers=list(d.get("speakers") or []),
            expansion=d.get("expansion") or "",
            notes=list(d.get("notes") or []),
            fallback=int(d.get("fallback") or 0),
            speaker_records=int(d.get("speaker_records") or 0),
            disk_hits=int(d.get("disk_hits") or 0),
            shared=int(d.get("shared") or 0),
        )


@dataclass
class RecallResult:
    """The memories, best first, the recall's stats, and recall_id, which
    names the recall to Client.feedback."""

    memories: List[Memory]
    stats: RecallStats
    recall_id: int = 0

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "RecallResult":
        return cls(
            memories=[Memory.from_json(m) for m in d.get("memories") or []],
            stats=RecallStats.from_json(d["stats"]),
            recall_id=int(d.get("recall_id") or 0),
        )

    def context(self, budget: int = 4000) -> str:
        """The memories as a prompt block: oldest first, one line each
        ("[time] role: text"), the best ones kept within budget characters."""
        kept: List[Memory] = []
        used = 0
        for m in self.memories:  # best first: the budget keeps the best
            line = _context_line(m)
            if used + len(line) + 1 > budget:
                continue
            kept.append(m)
            used += len(line) + 1
        kept.sort(key=lambda m: (m.time, m.id))
        return "\n".join(_context_line(m) for m in kept)


def _context_line(m: Memory) -> str:
    who = m.role or m.agent
    when = m.time.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M")
    return f"[{when}] {who}: {m.text}"
