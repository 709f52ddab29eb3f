"""The project's own small IFEval-format set (English and Chinese), from a seed.

Every prompt uses instruction ids and kwargs the official checker accepts, worded so that a
small model could follow them: lowercase, word counts, keywords, no commas, an end phrase,
JSON, bullet counts, quotation marks, a title, a postscript, forbidden words, highlights.
The committed file `examples/ifeval/hat_ifeval_small.jsonl` is `build_set()` written out;
Chinese prompts leave out `keywords:forbidden_words` (the checker looks for the word between
`\\b` word boundaries, which Chinese text without spaces rarely has) and word or sentence counts
(the checker counts `\\w+` runs and English sentences). Regenerate the file with

    python -m hat_core.evaluation.ifeval.project_set examples/ifeval/hat_ifeval_small.jsonl
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hat_core.evaluation.jsonl import write_jsonl

DEFAULT_SEED = 20261202
DEFAULT_SIZE = {"en": 50, "zh": 30}
DEFAULT_PATH = Path("examples") / "ifeval" / "hat_ifeval_small.jsonl"


@dataclass(frozen=True)
class Instruction:
    """One instruction: its checker id, kwargs and the sentence that asks for it."""

    id: str
    kwargs: dict
    text: str


Maker = Callable[[random.Random, "Topic"], Instruction]


@dataclass(frozen=True)
class Topic:
    task: str
    words: tuple[str, ...]


EN_TOPICS = (
    Topic("Describe a good morning routine.", ("water", "stretch", "breakfast")),
    Topic("Explain why people enjoy live-stream shopping.", ("price", "host", "coupon")),
    Topic("Write a short note about a new tea cup.", ("tea", "cup", "gift")),
    Topic("Give advice for packing a small suitcase.", ("shirt", "shoes", "bag")),
    Topic("Describe a quiet park in the city.", ("tree", "bench", "bird")),
    Topic("Tell a customer how shipping works.", ("order", "parcel", "days")),
    Topic("Write a short product blurb for a desk lamp.", ("light", "desk", "warm")),
    Topic("Explain how to keep a plant healthy.", ("sun", "soil", "leaf")),
    Topic("Describe your favourite fruit.", ("sweet", "apple", "summer")),
    Topic("Write a thank-you message to a viewer.", ("thanks", "support", "stream")),
)
ZH_TOPICS = (
    Topic("请介绍一款保温杯。", ("保温", "杯子", "容量")),
    Topic("请告诉观众怎么领取优惠券。", ("优惠券", "领取", "下单")),
    Topic("请说明一下包邮的规则。", ("包邮", "快递", "地区")),
    Topic("请描述一个早餐的做法。", ("鸡蛋", "牛奶", "面包")),
    Topic("请介绍一款运动鞋。", ("鞋子", "尺码", "舒适")),
    Topic("请回复一位问发货时间的观众。", ("发货", "时间", "订单")),
    Topic("请写一段直播开场白。", ("欢迎", "直播间", "福利")),
    Topic("请介绍一款护手霜。", ("护手霜", "滋润", "香味")),
)
EN_END = ("Is there anything else I can help with?", "Any other questions?")


def _en_lowercase(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("change_case:english_lowercase", {},
                       "Your entire response should be in English and in all lowercase letters.")


def _en_words(rng: random.Random, topic: Topic) -> Instruction:
    if rng.random() < 0.5:
        n = rng.choice((30, 50, 80))
        return Instruction("length_constraints:number_words",
                           {"relation": "less than", "num_words": n},
                           f"Answer with less than {n} words.")
    n = rng.choice((20, 40))
    return Instruction("length_constraints:number_words", {"relation": "at least", "num_words": n},
                       f"Answer with at least {n} words.")


def _en_keywords(rng: random.Random, topic: Topic) -> Instruction:
    words = rng.sample(topic.words, 2)
    return Instruction("keywords:existence", {"keywords": words},
                       f"Include the keywords \"{words[0]}\" and \"{words[1]}\" in your response.")


def _en_no_comma(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("punctuation:no_comma", {}, "Do not use any commas in your response.")


def _en_end(rng: random.Random, topic: Topic) -> Instruction:
    phrase = rng.choice(EN_END)
    return Instruction("startend:end_checker", {"end_phrase": phrase},
                       f"Finish your response with this exact phrase: {phrase}")


def _en_json(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("detectable_format:json_format", {},
                       "Wrap your entire output in JSON format.")


def _en_bullets(rng: random.Random, topic: Topic) -> Instruction:
    n = rng.choice((2, 3, 4))
    return Instruction("detectable_format:number_bullet_lists", {"num_bullets": n},
                       f"Your answer must contain exactly {n} bullet points in markdown, "
                       "such as:\n* This is a point.")


def _en_quotation(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("startend:quotation", {},
                       "Wrap your entire response with double quotation marks.")


def _en_title(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("detectable_format:title", {},
                       "Your answer must contain a title wrapped in double angular brackets, "
                       "such as <<my title>>.")


def _en_postscript(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("detectable_content:postscript", {"postscript_marker": "P.S."},
                       "At the end of your response, add a postscript starting with P.S.")


def _en_forbidden(rng: random.Random, topic: Topic) -> Instruction:
    word = rng.choice(topic.words)
    return Instruction("keywords:forbidden_words", {"forbidden_words": [word]},
                       f"Do not use the word \"{word}\" in your response.")


def _en_highlights(rng: random.Random, topic: Topic) -> Instruction:
    n = rng.choice((1, 2))
    return Instruction("detectable_format:number_highlighted_sections", {"num_highlights": n},
                       f"Highlight at least {n} section(s) with markdown, "
                       "i.e. *highlighted section*.")


def _en_sentences(rng: random.Random, topic: Topic) -> Instruction:
    n = rng.choice((3, 4, 5))
    return Instruction("length_constraints:number_sentences",
                       {"relation": "less than", "num_sentences": n},
                       f"Answer in less than {n} sentences.")


def _zh_keywords(rng: random.Random, topic: Topic) -> Instruction:
    words = rng.sample(topic.words, 2)
    return Instruction("keywords:existence", {"keywords": words},
                       f"回答中必须包含关键词“{words[0]}”和“{words[1]}”。")


def _zh_no_comma(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("punctuation:no_comma", {}, "回答中不要使用英文逗号“,”。")


def _zh_end(rng: random.Random, topic: Topic) -> Instruction:
    phrase = rng.choice(("还有其他问题吗？", "感谢观看！"))
    return Instruction("startend:end_checker", {"end_phrase": phrase},
                       f"请用这句话原样结尾：{phrase}")


def _zh_json(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("detectable_format:json_format", {}, "请把整个回答写成 JSON 格式。")


def _zh_bullets(rng: random.Random, topic: Topic) -> Instruction:
    n = rng.choice((2, 3))
    return Instruction("detectable_format:number_bullet_lists", {"num_bullets": n},
                       f"回答必须恰好包含 {n} 个 markdown 列表项，例如：\n* 这是一点。")


def _zh_quotation(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("startend:quotation", {}, "请用英文双引号 \" 把整个回答包起来。")


def _zh_title(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("detectable_format:title", {},
                       "回答要有一个标题，用双尖括号包起来，例如 <<标题>>。")


def _zh_postscript(rng: random.Random, topic: Topic) -> Instruction:
    return Instruction("detectable_content:postscript", {"postscript_marker": "P.S."},
                       "在回答最后加一段以 P.S. 开头的附言。")


def _zh_highlights(rng: random.Random, topic: Topic) -> Instruction:
    n = rng.choice((1, 2))
    return Instruction("detectable_format:number_highlighted_sections", {"num_highlights": n},
                       f"用 markdown 突出显示至少 {n} 处内容，例如 *重点*。")


# Instructions that fix the whole shape of the answer stand alone or take keywords only.
SHAPES = {"detectable_format:json_format", "startend:quotation"}
CONFLICTS = {
    frozenset({"change_case:english_lowercase", "startend:end_checker"}),
    frozenset({"change_case:english_lowercase", "detectable_content:postscript"}),
    frozenset({"startend:end_checker", "detectable_content:postscript"}),
    frozenset({"keywords:existence", "keywords:forbidden_words"}),
    frozenset({"length_constraints:number_sentences", "detectable_format:number_bullet_lists"}),
}
MAKERS: dict[str, tuple[Maker, ...]] = {
    "en": (_en_lowercase, _en_words, _en_keywords, _en_no_comma, _en_end, _en_json, _en_bullets,
           _en_quotation, _en_title, _en_postscript, _en_forbidden, _en_highlights, _en_sentences),
    "zh": (_zh_keywords, _zh_no_comma, _zh_end, _zh_json, _zh_bullets, _zh_quotation, _zh_title,
           _zh_postscript, _zh_highlights),
}


def _compatible(chosen: list[Instruction], new: Instruction) -> bool:
    ids = {c.id for c in chosen}
    if new.id in ids:
        return False
    if (new.id in SHAPES or ids & SHAPES) and {new.id, *ids} - SHAPES != {"keywords:existence"}:
        return False
    return not any(frozenset({new.id, i}) in CONFLICTS for i in ids)


def _instructions(rng: random.Random, lang: str, topic: Topic, first: Maker) -> list[Instruction]:
    chosen = [first(rng, topic)]
    if rng.random() < 0.45:
        for _ in range(10):
            extra = rng.choice(MAKERS[lang])(rng, topic)
            if _compatible(chosen, extra):
                chosen.append(extra)
                break
    return chosen


def make_prompt(rng: random.Random, key: int, lang: str, first: Maker) -> dict:
    """One IFEval-format row: a topic, one instruction from `first`, maybe a second one."""
    topics = EN_TOPICS if lang == "en" else ZH_TOPICS
    topic = rng.choice(topics)
    chosen = _instructions(rng, lang, topic, first)
    sep = " " if lang == "en" else ""
    prompt = sep.join([topic.task, *(c.text for c in chosen)])
    return {"key": key, "prompt": prompt, "instruction_id_list": [c.id for c in chosen],
            "kwargs": [c.kwargs for c in chosen], "language": lang}


def build_set(seed: int = DEFAULT_SEED, size: dict[str, int] | None = None) -> list[dict]:
    """The set: each language's instructions in turn as the first one, topics drawn at random."""
    rng, rows = random.Random(seed), []
    for lang, n in (size or DEFAULT_SIZE).items():
        makers = MAKERS[lang]
        for i in range(n):
            rows.append(make_prompt(rng, len(rows) + 1, lang, makers[i % len(makers)]))
    return rows


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else DEFAULT_PATH
    write_jsonl(out, build_set())
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
