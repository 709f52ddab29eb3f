"""Re-describe: reword descriptions, returns, parameter descriptions and instructions.

Rewording goes through a `Paraphraser`. `TemplateParaphraser` (the default) swaps phrases from
the pool's vocabulary and wraps the text in one of the pool's templates. `OpenAIParaphraser`
asks any OpenAI-compatible `/v1/chat/completions` endpoint, with a timeout and retries; tests
use a fake subclass. Whatever a paraphraser returns is kept only if it keeps the text's
markers: the same `{placeholders}`, the same name-like tokens and the same numbers
(`keeps_markers`); otherwise the original text stays.
"""

from __future__ import annotations

import json
import random
import re
import urllib.error
import urllib.request
from typing import Any, Protocol

from hat_core.harness.model import PLACEHOLDER, Harness
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.mentions import tokens
from hat_core.hsa.vocab import Pool

KINDS = ("tool", "returns", "param", "skill", "instructions", "hook")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NAME_LIKE = re.compile(r"[_\-\d]|[a-z][A-Z]")


class Paraphraser(Protocol):
    """Rewords one text of a given kind (one of `KINDS`) in a language ("zh" or "en")."""

    def paraphrase(self, text: str, *, kind: str, language: str, rng: random.Random) -> str: ...


class TemplateParaphraser:
    """Phrase swaps and a wrapper template, both from one pool."""

    def __init__(self, pool: Pool):
        self.pool = pool

    def paraphrase(self, text: str, *, kind: str, language: str, rng: random.Random) -> str:
        for phrase, options in self.pool.phrase_swaps:
            if phrase in text and rng.random() < 0.5:
                text = text.replace(phrase, rng.choice(options))
        templates = self.pool.describe[kind].get(language) or self.pool.describe[kind]["zh"]
        return rng.choice(templates).replace("{text}", text)


class OpenAIParaphraser:
    """Rewording by a chat model behind an OpenAI-compatible endpoint.

    `base_url` is e.g. `http://127.0.0.1:8000/v1`. A request that fails `retries + 1` times
    leaves the text as it was (and counts in `failures`); a network error never escapes.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 timeout_s: float = 20.0, retries: int = 2, temperature: float = 0.7):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key = model, api_key
        self.timeout_s, self.retries, self.temperature = timeout_s, retries, temperature
        self.failures = 0

    def paraphrase(self, text: str, *, kind: str, language: str, rng: random.Random) -> str:
        payload = self.payload(text, kind=kind, language=language, seed=rng.randrange(2**31))
        for _ in range(self.retries + 1):
            try:
                reply = self._post(payload)
                return str(reply["choices"][0]["message"]["content"]).strip() or text
            except (OSError, urllib.error.URLError, KeyError, IndexError, TypeError,
                    ValueError):
                continue
        self.failures += 1
        return text

    def payload(self, text: str, *, kind: str, language: str, seed: int) -> dict:
        lang = "Chinese" if language == "zh" else "English"
        system = ("Reword the user's text so it means exactly the same. Keep every identifier, "
                  "every {placeholder} and every number unchanged. Answer with the reworded "
                  f"text only, in {lang}.")
        return {"model": self.model, "temperature": self.temperature, "seed": seed,
                "messages": [{"role": "system", "content": system},
                             {"role": "user", "content": f"({kind} text) {text}"}]}

    def _post(self, payload: dict) -> dict[str, Any]:
        """POST the request and parse the JSON reply (a fake overrides this in tests)."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(payload).encode(),
                                         headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read().decode("utf-8"))


def keeps_markers(before: str, after: str) -> bool:
    """Whether `after` keeps the placeholders, name-like tokens and numbers of `before`."""
    return _markers(before) == _markers(after)


def _markers(text: str) -> tuple:
    names = sorted(t for t in tokens(text) if _NAME_LIKE.search(t))
    return (sorted(PLACEHOLDER.findall(text)), names, sorted(_NUMBER.findall(text)))


def describe(harness: Harness, rng: random.Random, config: HsaConfig, paraphraser: Paraphraser,
             language: str = "zh") -> Harness:
    """A copy with some descriptions, returns, parameter descriptions and instructions reworded."""
    p = config.p("redescribe_text")

    def reword(text: str, kind: str) -> str:
        if not text or rng.random() >= p:
            return text
        new = paraphraser.paraphrase(text, kind=kind, language=language, rng=rng)
        return new if new and keeps_markers(text, new) else text

    data = harness.model_dump(mode="json")
    for skill in data["skills"]:
        skill["description"] = reword(skill["description"], "skill")
        skill["instructions"] = reword(skill["instructions"], "instructions")
    for tool in data["tools"]:
        tool["description"] = reword(tool["description"], "tool")
        tool["returns"] = reword(tool["returns"], "returns")
        for schema in tool["parameters"].get("properties", {}).values():
            if isinstance(schema, dict) and isinstance(schema.get("description"), str):
                schema["description"] = reword(schema["description"], "param")
    for hook in data["hooks"]:
        hook["description"] = reword(hook["description"], "hook")
    return Harness.model_validate(data)
