"""Python client of lazymemd, the lazymem long-term memory daemon.

    from lazymem import Client

    mem = Client("http://127.0.0.1:7373")
    mem.append("Let's set the pool to 20.", agent="support-bot", session="s-42", role="user")
    res = mem.recall("what pool size did we pick?", agent="support-bot")
    for m in res.memories:
        print(m.score, m.text)

Standard library only. Errors are LazymemError subclasses, one per status.
"""

from .client import DEFAULT_URL, Client
from .errors import (
    Busy,
    ConnectionFailed,
    DiskFull,
    Forbidden,
    QuotaExceeded,
    InvalidInput,
    LazymemError,
    MethodNotAllowed,
    NotFound,
    ServerError,
    TooLarge,
    Unauthorized,
    UnsupportedMediaType,
)
from .types import ActionItem, ConsolidateReport, Memory, RecallResult, RecallStats, Record, Unit

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_URL",
    "ActionItem",
    "ConsolidateReport",
    "Busy",
    "Client",
    "ConnectionFailed",
    "DiskFull",
    "Forbidden",
    "QuotaExceeded",
    "InvalidInput",
    "LazymemError",
    "Memory",
    "MethodNotAllowed",
    "NotFound",
    "RecallResult",
    "RecallStats",
    "Record",
    "ServerError",
    "TooLarge",
    "Unauthorized",
    "Unit",
    "UnsupportedMediaType",
]
