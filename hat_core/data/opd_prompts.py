"""The prompt set for General OPD (on-policy distillation on general instructions).

- `load_prompts(path)`: a JSONL file of `{"prompt": ...}` or `{"messages": [...]}` rows, or an
  HF dataset saved on disk (`datasets.load_from_disk`; a `DatasetDict` uses its `train`
  split), e.g. a Tulu 3 mixture on local disk. The prompt is the last user message.
- `generate_prompts(rng, n, languages)`: seeded, verifiable general instructions in English
  and Chinese (format, length, keywords, case, language), each with IFEval instruction ids
  and kwargs so the official checker can verify a response. Its topics differ from the
  evaluation set's (`hat_core.evaluation.ifeval.project_set`), so OPD never trains on IFE-P prompts.

`opd_rows(prompts)` gives the rows written to `opd/`: `messages` (one user message), `prompt`,
`instruction_id_list`, `kwargs` (JSON string), `language`, `source`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hat_core.data.config import OpdConfig
from hat_core.errors import ConfigError, NotFoundError, Problem


@dataclass(frozen=True)
class OpdPrompt:
    prompt: str
    language: str = ""
    instruction_ids: tuple[str, ...] = ()
    kwargs: tuple[dict, ...] = ()
    source: str = "builtin"


EN_TOPICS = (
    ("Describe how to brew green tea.", ("leaves", "water", "minutes")),
    ("Explain how to choose a winter coat.", ("warm", "size", "fabric")),
    ("Write a short welcome for new followers of a cooking channel.", ("recipe", "kitchen")),
    ("Give tips for keeping a phone battery healthy.", ("charge", "heat", "battery")),
    ("Describe a weekend market in a small town.", ("stall", "fruit", "crowd")),
    ("Explain why sleep matters for students.", ("rest", "memory", "exam")),
    ("Write a note recommending a notebook to a friend.", ("paper", "cover", "pen")),
    ("Describe how to pack a picnic.", ("basket", "sandwich", "blanket")),
)
ZH_TOPICS = (
    ("请介绍如何挑选一双跑鞋。", ("鞋底", "尺码", "透气")),
    ("请写一段欢迎新粉丝的话。", ("欢迎", "关注", "福利")),
    ("请说明如何保存新鲜水果。", ("冷藏", "水果", "保鲜")),
    ("请介绍一个适合周末的短途旅行计划。", ("周末", "路线", "美食")),
    ("请解释为什么要多喝水。", ("健康", "喝水", "习惯")),
    ("请给第一次网购的人一些建议。", ("评价", "退货", "比价")),
)


def _en(rng: random.Random, task: str, words: tuple[str, ...]) -> OpdPrompt:
    kind = rng.choice(("format", "length", "keywords", "case", "language"))
    if kind == "format":
        n = rng.randint(2, 4)
        return OpdPrompt(f"{task} Answer with exactly {n} bullet points in markdown, "
                         "like: * point.", "en", ("detectable_format:number_bullet_lists",),
                         ({"num_bullets": n},))
    if kind == "length":
        n = rng.choice((40, 60, 80))
        return OpdPrompt(f"{task} Use fewer than {n} words.", "en",
                         ("length_constraints:number_words",),
                         ({"relation": "less than", "num_words": n},))
    if kind == "keywords":
        picked = sorted(rng.sample(words, min(2, len(words))))
        return OpdPrompt(f"{task} Include the words {' and '.join(picked)}.", "en",
                         ("keywords:existence",), ({"keywords": picked},))
    if kind == "case":
        return OpdPrompt(f"{task} Write your whole answer in lowercase letters only.", "en",
                         ("change_case:english_lowercase",), ({},))
    return OpdPrompt(f"{task} Answer in English only.", "en", ("language:response_language",),
                     ({"language": "en"},))


def _zh(rng: random.Random, task: str, words: tuple[str, ...]) -> OpdPrompt:
    kind = rng.choice(("format", "keywords", "title", "end"))
    if kind == "format":
        n = rng.randint(2, 4)
        return OpdPrompt(f"{task}请用恰好{n}个 markdown 列表项回答，格式如：* 要点。", "zh",
                         ("detectable_format:number_bullet_lists",), ({"num_bullets": n},))
    if kind == "keywords":
        picked = sorted(rng.sample(words, min(2, len(words))))
        return OpdPrompt(f"{task}回答中要包含“{'”和“'.join(picked)}”这些词。", "zh",
                         ("keywords:existence",), ({"keywords": picked},))
    if kind == "title":
        return OpdPrompt(f"{task}请给回答加一个标题，用双尖括号包起来，例如<<标题>>。", "zh",
                         ("detectable_format:title",), ({},))
    return OpdPrompt(f"{task}回答的最后一句必须是“还有其他问题吗？”，之后不要再写任何内容。",
                     "zh", ("startend:end_checker",), ({"end_phrase": "还有其他问题吗？"},))


def generate_prompts(rng: random.Random, n: int,
                     languages: Sequence[str] = ("en", "zh")) -> list[OpdPrompt]:
    """`n` seeded verifiable instructions, cycling through `languages`."""
    out = []
    for i in range(n):
        lang = languages[i % len(languages)]
        if lang == "zh":
            task, words = rng.choice(ZH_TOPICS)
            out.append(_zh(rng, task, words))
        else:
            task, words = rng.choice(EN_TOPICS)
            out.append(_en(rng, task, words))
    return out


def _prompt_of(row: dict) -> str | None:
    if isinstance(row.get("prompt"), str):
        return row["prompt"]
    msgs = row.get("messages")
    if isinstance(msgs, list):
        users = [m.get("content") for m in msgs if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return users[-1]
    return None


def load_prompts(path: str | Path) -> list[OpdPrompt]:
    """Prompts from a JSONL file or an on-disk HF dataset (every bad row reported at once)."""
    p = Path(path)
    if p.is_dir():
        from datasets import DatasetDict, load_from_disk

        data = load_from_disk(str(p))
        if isinstance(data, DatasetDict):
            data = data["train"] if "train" in data else next(iter(data.values()))
        rows = [(f"{p}[{i}]", r) for i, r in enumerate(data)]
    elif p.is_file():
        rows = []
        for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((f"{p}:{number}", json.loads(line)))
                except json.JSONDecodeError as exc:
                    rows.append((f"{p}:{number}", f"not JSON ({exc.msg})"))
    else:
        raise NotFoundError(f"no such prompt set: {p}")
    return _prompts(rows, str(p))


def _prompts(rows: list[tuple[str, object]], source: str) -> list[OpdPrompt]:
    out, problems = [], []
    for where, row in rows:
        text = _prompt_of(row) if isinstance(row, dict) else None
        if text is None or not text.strip():
            problems.append(Problem(where, row if isinstance(row, str)
                                    else "needs a `prompt` string or `messages` with a user turn"))
            continue
        ids = tuple(row.get("instruction_id_list") or ())
        kwargs = row.get("kwargs") or ()
        if isinstance(kwargs, str):  # our own `opd/` rows keep kwargs as JSON text
            try:
                kwargs = json.loads(kwargs)
            except json.JSONDecodeError:
                problems.append(Problem(where, "kwargs is not JSON"))
                continue
        kwargs = tuple(kwargs)
        out.append(OpdPrompt(text, str(row.get("language") or ""), ids, kwargs, source))
    if problems:
        raise ConfigError(f"{source}: {len(problems)} bad prompt row(s)", problems)
    return out


def opd_prompt_set(config: OpdConfig, rng: random.Random) -> list[OpdPrompt]:
    """The configured prompt set: the builtin generator or a user's file or directory."""
    if config.source == "builtin":
        return generate_prompts(rng, config.size, config.languages)
    return load_prompts(config.source)[: config.size]


def opd_rows(prompts: Sequence[OpdPrompt]) -> list[dict]:
    """Rows for `opd/` (see the module docstring)."""
    return [{"messages": [{"role": "user", "content": p.prompt}], "prompt": p.prompt,
             "instruction_id_list": list(p.instruction_ids),
             "kwargs": json.dumps(list(p.kwargs), ensure_ascii=False),
             "language": p.language, "source": p.source} for p in prompts]
