"""Two `InferenceBackend`s: a local transformers model and any OpenAI-compatible endpoint.

    backend = TransformersBackend("models/base")          # greedy, CPU or GPU
    backend = OpenAIBackend("http://127.0.0.1:8000", "qwen3")  # vLLM, transformers serve ...
    out = backend.chat([{"role": "user", "content": "你好"}], max_tokens=64)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hat_core.errors import HatError, NotFoundError, Problem
from hat_core.inference.batching import ChatRequest
from hat_core.inference.protocol import AssistantOutput, ToolCall, parse_qwen3


class BackendError(HatError):
    """An endpoint that keeps failing after its retries."""


class TransformersBackend:
    """A local model directory (tokenizer with a Qwen3 chat template); greedy decoding.
    `constrain_tools`: tool-call names and argument keys held to the offered tools
    (`hat_core.inference.constrained`, what a serving stack's structured outputs do).
    `batch_size` > 1: the simulator suites play that many cases side by side, their turns
    answered together by `chat_batch` (`hat_core.inference.batching`)."""

    def __init__(self, model_dir: str | Path, device: str | None = None, *,
                 constrain_tools: bool = False, batch_size: int = 1):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(model_dir)
        if not (path / "config.json").is_file():
            raise NotFoundError(f"not a model directory (no config.json): {path}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.name = path.name
        self.constrain_tools = constrain_tools
        self.batch_size = batch_size  # > 1: suites play that many cases in lockstep
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), padding_side="left")
        self.model = AutoModelForCausalLM.from_pretrained(str(path)).to(self.device).eval()

    def chat(self, messages: list[dict], tools: list[dict] | None = None, *,
             max_tokens: int = 512, temperature: float = 0.0,
             allowed_tools: list[dict] | None = None) -> AssistantOutput:
        """Greedy generation (`temperature` is ignored); the output parsed as Qwen3 markup.
        With `constrain_tools`, calls are held to `allowed_tools` (the tools the prompt
        offers, when they are written into the system prompt rather than passed as `tools`),
        else to `tools`."""
        import torch

        ids = self._encode(messages, tools)
        ids = {k: v.to(self.device) for k, v in ids.items()}
        extra = {}
        constraint = self._constraint(allowed_tools or tools, ids["input_ids"].shape[1])
        if constraint is not None:
            extra["prefix_allowed_tokens_fn"] = constraint
        with torch.no_grad():
            out = self.model.generate(**ids, max_new_tokens=max_tokens, do_sample=False,
                                      **extra)
        new = out[0, ids["input_ids"].shape[1]:]
        return parse_qwen3(self.tokenizer.decode(new, skip_special_tokens=True))

    def chat_batch(self, requests: Sequence[ChatRequest]) -> list[AssistantOutput]:
        """Several `chat` calls in one greedy `generate`, in order: the prompts' shared
        prefix run once, each answer cut at its own `max_tokens` and held to its own tools
        (`hat_core.inference.batching`; rounding can differ from answering each alone)."""
        import torch

        if len(requests) == 1:
            r = requests[0]
            return [self.chat(r.messages, r.tools, max_tokens=r.max_tokens,
                              allowed_tools=r.allowed_tools)]
        rows = [self._encode(r.messages, r.tools)["input_ids"][0] for r in requests]
        # Rows share a prefix (the harness's system prompt): it is run once, its keys and
        # values copied to every row; each row is then [prefix][padding][its own tokens],
        # positions counted past the padding (from the attention mask).
        shared = _shared_prefix(rows)
        tail = max(len(r) - shared for r in rows)
        width = shared + tail
        new_tokens = max(r.max_tokens for r in requests)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            input_ids[i, :shared] = row[:shared]
            input_ids[i, width - (len(row) - shared):] = row[shared:]
            mask[i, :shared] = 1
            mask[i, width - (len(row) - shared):] = 1
        input_ids, mask = input_ids.to(self.device), mask.to(self.device)
        constraints = [self._constraint(r.allowed_tools or r.tools, width) for r in requests]
        extra = {}
        if any(c is not None for c in constraints):
            extra["prefix_allowed_tokens_fn"] = _PerRow(constraints,
                                                         self.model.config.vocab_size)
        with torch.no_grad():
            extra["past_key_values"] = self._prefix_cache(input_ids[:1, :shared], len(rows),
                                                          width + new_tokens)
            out = self.model.generate(input_ids=input_ids, attention_mask=mask,
                                      max_new_tokens=new_tokens, do_sample=False,
                                      pad_token_id=pad, **extra)
        return [parse_qwen3(self.tokenizer.decode(out[i, width:width + r.max_tokens],
                                                  skip_special_tokens=True))
                for i, r in enumerate(requests)]

    def _prefix_cache(self, prefix, batch: int, length: int):
        """A static cache of `length` positions for `batch` rows, holding the keys and values
        of `prefix` (one row, run once) in each row."""
        from transformers import StaticCache

        cache = StaticCache(config=self.model.config, max_cache_len=length)
        if prefix.shape[1] == 0:
            return cache
        done = self.model(input_ids=prefix, use_cache=True).past_key_values
        for index, layer in enumerate(done.layers):
            cache.update(layer.keys.expand(batch, -1, -1, -1).contiguous(),
                         layer.values.expand(batch, -1, -1, -1).contiguous(), index)
        return cache

    def _encode(self, messages: list[dict], tools: list[dict] | None) -> dict:
        return self.tokenizer.apply_chat_template(messages, tools=tools or None,
                                                  add_generation_prompt=True,
                                                  return_tensors="pt", return_dict=True)

    def _constraint(self, offered: list[dict] | None, prompt_len: int):
        if not (self.constrain_tools and offered):
            return None
        from hat_core.inference.constrained import ToolCallConstraint

        return ToolCallConstraint(self.tokenizer, offered, prompt_len=prompt_len,
                                  vocab_size=self.model.config.vocab_size)


def _shared_prefix(rows: Sequence) -> int:
    """How many leading tokens every row has in common, leaving each row at least one of its
    own (generation starts from a row's last token)."""
    import torch

    shortest = min(len(r) for r in rows)
    first = rows[0][:shortest]
    same = torch.ones(shortest, dtype=torch.bool)
    for r in rows[1:]:
        same &= r[:shortest] == first
    differs = (~same).nonzero()
    common = int(differs[0]) if len(differs) else shortest
    return min(common, shortest - 1)


class _PerRow:
    """`prefix_allowed_tokens_fn` for a batch: each row's own constraint (None: free)."""

    def __init__(self, constraints: list, vocab: int):
        self.constraints, self.everything = constraints, list(range(vocab))

    def __call__(self, batch_id: int, input_ids) -> list[int]:
        c = self.constraints[batch_id]
        return self.everything if c is None else c(batch_id, input_ids)


def _output(message: dict) -> AssistantOutput:
    calls = tuple(ToolCall(c["function"]["name"], c["function"].get("arguments") or "{}")
                  for c in message.get("tool_calls") or ())
    content = message.get("content") or ""
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    if not reasoning and not calls and ("</think>" in content or "<tool_call>" in content):
        return parse_qwen3(content)
    return AssistantOutput(content.strip(), reasoning.strip(), calls)


class OpenAIBackend:
    """`POST {base_url}/v1/chat/completions`, non-streaming, through the `openai` client.

    The client owns timeouts and retries: `timeout_s` per request, `retries` more attempts
    after a connection error, a timeout, HTTP 408/409/429 or a 5xx, with its own exponential
    backoff (0.5 s doubling up to 8 s, jittered; a short `Retry-After` is honoured). `backoff_s`
    is accepted for callers of the former hand-written loop and not used. No proxy or other
    setting comes from the environment's HTTP variables (`trust_env=False`); with no
    `api_key`, a placeholder is sent (servers without keys ignore it). `user` is sent as
    OpenAI's `user` field (the HAT gateway's sticky arm). With `constrain_tools`, a call
    given `allowed_tools` sends them in the body's `allowed_tools`: the HAT gateway's local
    arms hold their tool calls to them (`hat_core.serving.arms.LocalBackend`); a server that
    does not know the field ignores it (vLLM: set up its structured outputs instead).
    """

    def __init__(self, base_url: str, model: str, *, timeout_s: float = 120.0,
                 retries: int = 2, backoff_s: float = 1.0, api_key: str | None = None,
                 user: str | None = None, constrain_tools: bool = False):
        import openai

        self.name, self.base_url, self.model = model, base_url.rstrip("/"), model
        self.retries, self.backoff_s = retries, backoff_s
        self.user, self.constrain_tools = user, constrain_tools
        self.client = openai.OpenAI(
            base_url=f"{self.base_url}/v1", api_key=api_key or "EMPTY", timeout=timeout_s,
            max_retries=retries, http_client=openai.DefaultHttpx2Client(trust_env=False))

    def chat(self, messages: list[dict], tools: list[dict] | None = None, *,
             max_tokens: int = 512, temperature: float = 0.0,
             allowed_tools: list[dict] | None = None) -> AssistantOutput:
        import openai

        extra = {"tools": tools} if tools else {}
        if self.user:
            extra["user"] = self.user
        if self.constrain_tools and allowed_tools:
            extra["extra_body"] = {"allowed_tools": allowed_tools}
        try:
            completion = self.client.chat.completions.create(
                model=self.model, messages=messages, max_tokens=max_tokens,
                temperature=temperature, **extra)
        except openai.APIStatusError as exc:
            problem = f"HTTP {exc.status_code}: {exc.response.text[:300]}"
            if exc.status_code >= 500 or exc.status_code in (408, 409, 429):  # retried
                raise self._gave_up(problem) from None
            raise BackendError(f"{self.base_url} refused the request: {problem}") from None
        except openai.APIConnectionError as exc:  # refused, reset, timed out (retried)
            cause = f" ({exc.__cause__})" if exc.__cause__ else ""
            raise self._gave_up(f"{type(exc).__name__}: {exc}{cause}") from None
        except (openai.OpenAIError, ValueError) as exc:  # a body that is no chat completion
            raise self._no_completion(f"{type(exc).__name__}: {exc}") from None
        if not completion.choices:
            raise self._no_completion("no choices")
        return _output(completion.choices[0].message.model_dump())

    def _no_completion(self, problem: str) -> BackendError:
        return BackendError(f"{self.base_url} answered with no chat completion: {problem}")

    def _gave_up(self, problem: str) -> BackendError:
        return BackendError(f"{self.base_url} failed {self.retries + 1} time(s)",
                            [Problem("last attempt", problem)])

    def close(self) -> None:
        self.client.close()
