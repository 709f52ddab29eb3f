"""`Trajectory`: one training conversation with where it came from, whatever its source.

Teacher rollouts (`source="teacher"`), imported real logs (`"import"`) and reviewed bad cases
fed back from the store (`"extra"`) all become this one type; `hat_core.data.trl_rows` turns
it into a TRL row at the boundary. `messages` are OpenAI-style dicts (see
`hat_core.sim.episode`); `tools` is the rendered tool list of the harness surface it ran
under. Rewards are None for conversations without ground truth (imports).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

PRODUCT_ID = re.compile(r"(?<![A-Za-z0-9])P\d{3,6}(?![0-9])")


@dataclass(frozen=True)
class Trajectory:
    """A conversation plus its metadata columns."""

    messages: tuple[dict, ...]
    tools: tuple[dict, ...]
    harness_hash: str
    scenario_id: str
    kind: str
    skill: str
    product_id: str | None = None
    variant_id: str = "original"
    pool: str = "original"
    source: str = "teacher"
    teacher: str = ""
    accuracy: float | None = None
    effectiveness: float | None = None
    rewards: Mapping[str, float] = field(default_factory=dict)
    retries: int = 0
    retry_mode: str = "none"  # none | final_only | full
    scenario: Mapping[str, Any] | None = None  # Scenario.to_dict() when known
    split: str = ""

    def with_split(self, split: str) -> Trajectory:
        return replace(self, split=split)

    def text(self) -> str:
        """Every text of the conversation but the leading system prompt (the harness's own
        wording), for leakage scans."""
        parts = []
        start = 1 if self.messages and self.messages[0].get("role") == "system" else 0
        for m in self.messages[start:]:
            parts.append(str(m.get("content") or ""))
            parts.append(str(m.get("reasoning_content") or ""))
            for c in m.get("tool_calls") or ():
                fn = c.get("function") or {}
                parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
        return "\n".join(parts)


def products_in(text: str) -> set[str]:
    """Product ids (`P1001`) mentioned in a text."""
    return set(PRODUCT_ID.findall(text))


def conversation_text(messages, harness_hash: object) -> str:
    """A conversation as one text, with the harness it ran under: what exact duplicates
    share, and what the length bounds measure."""
    parts = [str(harness_hash)]
    for m in messages:
        if isinstance(m, dict):
            parts += [str(m.get("role")), m.get("content") or "",
                      m.get("reasoning_content") or ""]
            for c in m.get("tool_calls") or ():
                fn = c.get("function") or {}
                parts.append(f"{fn.get('name')}({fn.get('arguments')})")
    return "\x1f".join(parts)


def conversation_key(messages, harness_hash: object) -> str:
    """A digest of `conversation_text`."""
    return hashlib.sha1(conversation_text(messages, harness_hash).encode("utf-8")).hexdigest()
