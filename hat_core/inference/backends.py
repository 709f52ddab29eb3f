"""Two `InferenceBackend`s: a local transformers model and any OpenAI-compatible endpoint.

    backend = TransformersBackend("models/base")          # greedy, CPU or GPU
    backend = OpenAIBackend("http://127.0.0.1:8000", "qwen3")  # vLLM, transformers serve ...
    out = backend.chat([{"role": "user", "content": "你好"}], max_tokens=64)
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from hat_core.errors import HatError, NotFoundError, Problem
from hat_core.inference.protocol import AssistantOutput, ToolCall, parse_qwen3


class BackendError(HatError):
    """An endpoint that keeps failing after its retries."""


class TransformersBackend:
    """A local model directory (tokenizer with a Qwen3 chat template); greedy decoding."""

    def __init__(self, model_dir: str | Path, device: str | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(model_dir)
        if not (path / "config.json").is_file():
            raise NotFoundError(f"not a model directory (no config.json): {path}")
        self.name = path.name
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), padding_side="left")
        self.model = AutoModelForCausalLM.from_pretrained(str(path)).to(self.device).eval()

    def chat(self, messages: list[dict], tools: list[dict] | None = None, *,
             max_tokens: int = 512, temperature: float = 0.0) -> AssistantOutput:
        """Greedy generation (`temperature` is ignored); the output parsed as Qwen3 markup."""
        import torch

        ids = self.tokenizer.apply_chat_template(messages, tools=tools or None,
                                                 add_generation_prompt=True,
                                                 return_tensors="pt", return_dict=True)
        ids = {k: v.to(self.device) for k, v in ids.items()}
        with torch.no_grad():
            out = self.model.generate(**ids, max_new_tokens=max_tokens, do_sample=False)
        new = out[0, ids["input_ids"].shape[1]:]
        return parse_qwen3(self.tokenizer.decode(new, skip_special_tokens=True))


def _output(message: dict) -> AssistantOutput:
    calls = tuple(ToolCall(c["function"]["name"], c["function"].get("arguments") or "{}")
                  for c in message.get("tool_calls") or ())
    content = message.get("content") or ""
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    if not reasoning and not calls and ("</think>" in content or "<tool_call>" in content):
        return parse_qwen3(content)
    return AssistantOutput(content.strip(), reasoning.strip(), calls)


class OpenAIBackend:
    """`POST {base_url}/v1/chat/completions`, non-streaming, with timeouts and retries."""

    def __init__(self, base_url: str, model: str, *, timeout_s: float = 120.0,
                 retries: int = 2, backoff_s: float = 1.0, api_key: str | None = None):
        self.name, self.base_url, self.model = model, base_url.rstrip("/"), model
        self.retries, self.backoff_s = retries, backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=timeout_s, headers=headers, trust_env=False)

    def _post(self, body: dict) -> dict:
        errors = []
        for attempt in range(self.retries + 1):
            try:
                resp = self.client.post(f"{self.base_url}/v1/chat/completions", json=body)
                if resp.status_code < 500:
                    resp.raise_for_status()
                    return resp.json()
                errors.append(f"HTTP {resp.status_code}")
            except httpx.HTTPStatusError as exc:
                raise BackendError(f"{self.base_url} refused the request: {exc}") from None
            except (httpx.HTTPError, ValueError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            time.sleep(self.backoff_s * 2 ** attempt if attempt < self.retries else 0)
        raise BackendError(f"{self.base_url} failed {self.retries + 1} time(s)",
                           [Problem(f"attempt {i + 1}", e) for i, e in enumerate(errors)])

    def chat(self, messages: list[dict], tools: list[dict] | None = None, *,
             max_tokens: int = 512, temperature: float = 0.0) -> AssistantOutput:
        body = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                "temperature": temperature} | ({"tools": tools} if tools else {})
        return _output(self._post(body)["choices"][0]["message"])

    def close(self) -> None:
        self.client.close()
