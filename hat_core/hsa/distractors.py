"""Distractor tools: plausible extra tools that no skill references and no task needs.

Each gets a new id `distractor.<key>` (ids are semantic identity, so a distractor is an
addition, which `hat_core.diff.api` reports as a semantic `added` tool), a name from the pool and
a description in the variant's language. The simulator implements none of them, so a policy
that calls one gets a failed tool result.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hat_core.harness.model import Harness
from hat_core.hsa.config import HsaConfig
from hat_core.hsa.names import new_name
from hat_core.hsa.rename import all_names
from hat_core.hsa.variant import DISTRACTOR_PREFIX
from hat_core.hsa.vocab import Pool


@dataclass(frozen=True)
class DistractorSpec:
    key: str
    name: str
    description: dict[str, str]  # language -> text
    params: tuple[tuple[str, str, str, bool], ...]  # (name, type, description, required)
    returns: str = ""


def _p(name: str, type_: str, text: str, required: bool = True) -> tuple[str, str, str, bool]:
    return (name, type_, text, required)


SPECS = (
    DistractorSpec("weather", "get_weather_forecast",
                   {"zh": "查询某个城市未来几天的天气预报", "en": "Weather forecast for a city"},
                   (_p("city", "string", "城市名"),), "天气、气温"),
    DistractorSpec("exchange_rate", "get_exchange_rate",
                   {"zh": "查询两种货币之间的实时汇率",
                    "en": "Live exchange rate of two currencies"},
                   (_p("from_currency", "string", "原币种"),
                    _p("to_currency", "string", "目标币种")),
                   "汇率"),
    DistractorSpec("translate", "translate_text",
                   {"zh": "把一段文字翻译成目标语言", "en": "Translate a text into a language"},
                   (_p("text", "string", "原文"), _p("target_language", "string", "目标语言")),
                   "译文"),
    DistractorSpec("schedule", "get_stream_schedule",
                   {"zh": "查询主播后续的开播时间表", "en": "The host's upcoming stream schedule"},
                   (_p("days", "integer", "查询天数", False),), "开播时间列表"),
    DistractorSpec("fan_level", "get_fan_level",
                   {"zh": "查询观众在直播间的粉丝等级", "en": "A viewer's fan level in the room"},
                   (_p("user_id", "string", "观众编号"),), "粉丝等级和积分"),
    DistractorSpec("stickers", "list_stickers",
                   {"zh": "列出直播间可用的表情贴纸", "en": "Stickers available in the room"},
                   (), "贴纸列表"),
    DistractorSpec("music", "play_music",
                   {"zh": "切换直播间的背景音乐", "en": "Switch the room's background music"},
                   (_p("song", "string", "歌曲名"),), "正在播放的歌曲"),
    DistractorSpec("news", "get_news_headlines",
                   {"zh": "获取今日新闻头条", "en": "Today's news headlines"},
                   (_p("topic", "string", "新闻主题", False),), "新闻标题列表"),
)


def add_distractors(harness: Harness, rng: random.Random, pool: Pool, config: HsaConfig,
                    language: str = "zh") -> tuple[Harness, tuple[str, ...]]:
    """A copy with 1..max_distractors distractor tools at random positions, and their ids."""
    ids = {t.id for t in harness.tools}
    free = [s for s in SPECS if DISTRACTOR_PREFIX + s.key not in ids]
    count = min(len(free), rng.randint(1, max(1, config.max_distractors)))
    if config.max_distractors == 0 or count == 0:
        return harness, ()
    taken = all_names(harness)
    table = {**pool.synonyms, **pool.distractor_words}
    tools = list(harness.model_dump(mode="json")["tools"])
    added = []
    for spec in rng.sample(free, count):
        name = new_name(spec.name, rng, pool, config.odds(), taken, table=table)
        taken.add(name)
        tools.insert(rng.randint(0, len(tools)), _tool(spec, name, language))
        added.append(DISTRACTOR_PREFIX + spec.key)
    data = harness.model_dump(mode="json") | {"tools": tools}
    return Harness.model_validate(data), tuple(added)


def _tool(spec: DistractorSpec, name: str, language: str) -> dict:
    props = {n: {"type": t, "description": d} for n, t, d, _ in spec.params}
    required = [n for n, _, _, r in spec.params if r]
    return {"id": DISTRACTOR_PREFIX + spec.key, "name": name,
            "description": spec.description.get(language, spec.description["zh"]),
            "parameters": {"type": "object", "properties": props, "required": required},
            "returns": spec.returns}
