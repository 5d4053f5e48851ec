"""Exceptions raised by the client, one class per HTTP status family.

Every error reply of lazymemd has the body
``{"error": {"code": ..., "field": ..., "message": ...}}``; the exception
carries those three and the status. Branch on the class (the status) and,
where it matters, on ``code``: the daemon may add codes, never statuses
with another meaning.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


class LazymemError(Exception):
    """Base of every error the client raises.

    status is the HTTP status (0 when no reply arrived), code the daemon's
    machine-readable cause ("invalid", "busy", ...), field the input at
    fault ("records[3].agent", "query.k") or None, message a sentence for
    people. retry_after is the Retry-After header in seconds, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str = "",
        field: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.field = field
        self.message = message
        self.retry_after = retry_after

    def __str__(self) -> str:
        head = f"lazymem: {self.status} {self.code}" if self.status else "lazymem"
        # The daemon's messages start "lazymem: " themselves: said once.
        msg = self.message[len("lazymem: "):] if self.message.startswith("lazymem: ") else self.message
        return f"{head}: {msg}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"field={self.field!r}, message={self.message!r})"
        )


class ConnectionFailed(LazymemError):
    """No HTTP reply: the daemon is not listening, or the connection broke or timed out."""


class InvalidInput(LazymemError):
    """400: malformed JSON, a wrong type, an unknown field, or a value the engine rejects; field names it."""


class Unauthorized(LazymemError):
    """401: the daemon has a token and the request lacked it or carried another."""


class Forbidden(LazymemError):
    """403: the key lacks the scope or the agent (forbidden), a browser Origin not allowed
    (forbidden_origin), a Host not allowed (forbidden_host), or a quota (QuotaExceeded)."""


class QuotaExceeded(Forbidden):
    """403 quota: the append would pass the quota of the key's agent; nothing was written.
    Forget records (or have the quota raised): retrying unchanged fails again."""


class NotFound(LazymemError):
    """404: an unknown path, a record id never assigned, another tenant's or a forgotten record."""


class MethodNotAllowed(LazymemError):
    """405: a known path with another method."""


class TooLarge(LazymemError):
    """413: a body, batch, synonym table or agent list over the daemon's limit: split it, do not retry it."""


class UnsupportedMediaType(LazymemError):
    """415: a body that is not application/json."""


class ServerError(LazymemError):
    """500 (internal) or 502 (the embedder failed)."""


class Busy(LazymemError):
    """503: busy or starting (retry after Retry-After), timeout, closed or canceled;
    from a probe, code is the probe's status ("opening", "closing", "stopped")."""


class DiskFull(LazymemError):
    """507: the store's disk is full; nothing was written."""


_BY_STATUS: Dict[int, Type[LazymemError]] = {
    400: InvalidInput,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    413: TooLarge,
    415: UnsupportedMediaType,
    503: Busy,
    507: DiskFull,
}


def error_for(status: int, body: Any, retry_after: Optional[float] = None) -> LazymemError:
    """Builds the exception for an error reply: status and its decoded JSON body (or raw text)."""
    code, field, message = "", None, ""
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        code = str(detail.get("code") or "")
        field = detail.get("field") or None
        message = str(detail.get("message") or "")
    elif isinstance(body, dict) and isinstance(body.get("status"), str):
        # A probe's 503: {"status": "opening"}, {"status": "closing"} or
        # {"status": "stopped", "error": "..."} (the storage engine stopped).
        code = body["status"]
        message = str(body.get("error") or f"the store is {code}")
    elif isinstance(body, str):
        message = body.strip()
    if not message:
        message = f"HTTP {status}"
    cls = _BY_STATUS.get(status)
    if status == 403 and code == "quota":
        cls = QuotaExceeded
    if cls is None:
        cls = ServerError if status >= 500 else LazymemError
    return cls(message, status=status, code=code, field=field, retry_after=retry_after)
