"""The README's usage example runs as written against a real daemon.

A newcomer copies it first: it once asked about "last week" right after
appending, found nothing, and failed on res.memories[0].
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _usage_block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Use", 1)[1]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "no python block under '## Use' in the README"
    return m.group(1)


def test_readme_usage_runs(daemon, agent: str) -> None:
    code = _usage_block()
    assert 'Client("http://127.0.0.1:7373", token=None, timeout=30)' in code
    assert '"support-bot"' in code
    code = code.replace('Client("http://127.0.0.1:7373", token=None, timeout=30)',
                        f"Client({daemon.url!r}, token={daemon.token!r}, timeout=30)")
    code = code.replace('"support-bot"', repr(agent))
    scope: dict = {}
    exec(compile(code, str(README), "exec"), scope)  # noqa: S102 - the README's own example
    res = scope["res"]
    assert res.memories, "the example's recall found nothing"
    assert any("pool" in m.text for m in res.memories)
