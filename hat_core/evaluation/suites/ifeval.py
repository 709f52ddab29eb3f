"""`ifeval`: IFEval-format prompts as single user turns, scored by the official checker.

    result = IfevalSuite().run(backend, None, nltk_data=Path("nltk_data"), limit=20)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hat_core.evaluation.ifeval import verdicts as ifeval
from hat_core.evaluation.ifeval.checker import load_splitter
from hat_core.evaluation.policy import backend_of
from hat_core.evaluation.suites.base import SuiteResult
from hat_core.harness.model import Harness
from hat_core.inference.batching import ChatRequest, answer_each
from hat_core.inference.protocol import InferenceBackend

DEFAULT_IFEVAL_SET = Path(__file__).resolve().parents[3] / "examples" / "ifeval" / \
    "hat_ifeval_small.jsonl"


@dataclass(frozen=True)
class IfevalSuite:
    """IFEval-format prompts sent as single user turns (no harness), scored by the official
    checker. Options: `prompts` (a JSONL path), `nltk_data`, `limit`, `max_tokens`."""

    name: str = "ifeval"
    prompts: Path = DEFAULT_IFEVAL_SET
    max_tokens: int = 512

    def run(self, model: InferenceBackend, harness: Harness | None = None, *,
            prompts: Path | None = None, nltk_data: Path | None = None,
            limit: int | None = None, max_tokens: int | None = None) -> SuiteResult:
        model = backend_of(model) or model  # a BackendPolicy answers through its backend
        items = ifeval.load_prompts(prompts or self.prompts)[:limit]
        tokens = max_tokens or self.max_tokens
        outputs = answer_each(model, [ChatRequest([{"role": "user", "content": p.prompt}],
                                                  max_tokens=tokens) for p in items])
        answers = {p.key: out.content for p, out in zip(items, outputs, strict=True)}
        result = ifeval.score(items, ifeval.Responses(answers, ()), load_splitter(nltk_data))
        s = result.summary
        metrics = {"ife_p": s.prompt_strict, "prompt_loose": s.prompt_loose,
                   "instruction_strict": s.instruction_strict,
                   "instruction_loose": s.instruction_loose}
        # case_id and passed (the prompt-level strict verdict) pair rows across models
        rows = tuple(v.to_dict() | {"case_id": f"ifeval/{v.key}", "passed": v.strict,
                                    "response": answers[v.key]} for v in result.verdicts)
        return SuiteResult(self.name, metrics, s.to_dict(), rows)
