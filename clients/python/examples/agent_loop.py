"""An agent loop with long-term memory: every turn is remembered, and before
answering the agent recalls what it said and heard before.

    lazymemd --db /tmp/agent-mem &              # or any running daemon
    python3 examples/agent_loop.py [--url http://127.0.0.1:7373] [--token T]

No language model is needed: reply() is a stub that answers from the
recalled context. Replace it with a call to your model, passing `context`
in the prompt.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))  # run from a checkout too

from lazymem import Client, LazymemError, Record  # noqa: E402

AGENT = "example-agent"


def reply(question: str, context: str, memories: list) -> str:
    """The stub model. A real one gets `context` in its prompt; this one
    quotes the best memory of something the user said, or admits it has none."""
    said = [m for m in memories if m.role == "user" and m.sparse > 0]  # shares words with the question
    if not said:
        return "I don't remember anything about that yet."
    best = said[0]
    return f"On {best.time:%Y-%m-%d} you told me: \"{best.text}\""


def turn(mem: Client, session: str, user_text: str, now: datetime) -> str:
    # 1. Recall before answering: the question's own words, plus the
    #    current session's latest turns (current_session).
    res = mem.recall(user_text, agent=AGENT, k=3, current_session=session, now=now)
    context = res.context(budget=1500)
    # 2. Answer.
    answer = reply(user_text, context, res.memories)
    # 3. Remember both sides of the turn, as one durable write.
    mem.append_batch([
        Record(agent=AGENT, session=session, role="user", text=user_text, time=now),
        Record(agent=AGENT, session=session, role="assistant", text=answer, time=now + timedelta(seconds=1)),
    ])
    return answer


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=os.environ.get("LAZYMEM_URL", "http://127.0.0.1:7373"))
    ap.add_argument("--token", default=os.environ.get("LAZYMEMD_TOKEN"))
    args = ap.parse_args()
    mem = Client(args.url, token=args.token)
    try:
        mem.wait_ready(timeout=10)
    except LazymemError as e:
        print(f"no daemon at {args.url}: {e}", file=sys.stderr)
        return 1

    # Two conversations a day apart: the second one asks about the first.
    day1 = datetime.now(timezone.utc) - timedelta(days=1)
    s1, s2 = "s-" + uuid.uuid4().hex[:8], "s-" + uuid.uuid4().hex[:8]
    script = [
        (s1, day1, "We decided the billing-api connection pool should be 20."),
        (s1, day1 + timedelta(minutes=1), "Also, the on-call rotation switches on Mondays."),
        (s2, day1 + timedelta(days=1), "What pool size did we decide on yesterday?"),
        (s2, day1 + timedelta(days=1, minutes=1), "And when does on-call switch?"),
    ]
    for session, now, text in script:
        print(f"user> {text}")
        print(f"agent> {turn(mem, session, text, now)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
