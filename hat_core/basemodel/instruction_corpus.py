"""Instruction-following samples with programmatically written responses that pass their checks.

`instruction_sample(rng)` picks a topic, a shape instruction (sentences, word limit, bullets,
paragraphs) and sometimes a modifier (keywords, case, no commas, title, end phrase, quotes,
JSON), writes a response from sentence templates and keeps it only if every check passes.
English and Chinese; no tools.
"""

from __future__ import annotations

import json
import random

from hat_core.basemodel.instructions import Check, passes
from hat_core.basemodel.sample import Sample

TOPICS = (
    (
        "coffee",
        "the ocean",
        "trains",
        "music",
        "winter",
        "gardening",
        "mathematics",
        "friendship",
        "the city",
        "running",
        "rain",
        "tea",
        "mountains",
        "libraries",
    ),
    (
        "咖啡",
        "大海",
        "火车",
        "音乐",
        "冬天",
        "园艺",
        "数学",
        "友谊",
        "城市",
        "跑步",
        "雨天",
        "茶",
        "高山",
        "图书馆",
    ),
)
SENTENCES = (
    (
        "{T} is a topic many people enjoy.",
        "There is always something new to learn about {t}.",
        "People talk about {t} every day.",
        "{T} can be simple and surprising at once.",
        "A short walk helps me think about {t}.",
        "Good books explain {t} clearly.",
        "Some of my friends love {t}.",
        "{T} matters more than it seems.",
        "I remember a quiet morning with {t}.",
        "Nobody gets tired of {t}.",
    ),
    (
        "{t}是很多人喜欢的话题。",
        "关于{t}总有新东西可以学。",
        "人们每天都会谈到{t}。",
        "{t}既简单又有趣。",
        "散步时我常想起{t}。",
        "好书能把{t}讲清楚。",
        "我的一些朋友很喜欢{t}。",
        "{t}比看起来更重要。",
        "我记得一个和{t}有关的安静早晨。",
        "没有人会厌倦{t}。",
    ),
)
KEYWORDS = (
    ("river", "window", "lamp", "garden", "bridge", "letter", "cloud", "piano"),
    ("河流", "窗户", "台灯", "花园", "桥", "信", "云", "钢琴"),
)
PHRASES = (
    ("Is there anything else I can help with?", "That is all.", "Have a nice day."),
    ("还有其他问题吗？", "就这些。", "祝你愉快。"),
)
ASK = (
    ("Write about {t}.", "Tell me about {t}.", "Say something about {t}.", "Describe {t}."),
    ("写一写{t}。", "介绍一下{t}。", "谈谈{t}。", "说说{t}。"),
)
SHAPE_TEXT = {
    "sentences": ("Use exactly {n} sentences.", "用恰好{n}句话。"),
    "max_words": ("Answer in at most {n} words.", "不超过{n}个字。"),
    "bullets": (
        "Answer with exactly {n} bullet points in markdown, each starting with '* '.",
        "用恰好{n}个以“* ”开头的要点回答。",
    ),
    "paragraphs": (
        "Write {n} paragraphs separated by the markdown divider ***.",
        "写{n}段，段与段之间用***分隔。",
    ),
}
MOD_TEXT = {
    "keywords": ("Include the words '{a}' and '{b}'.", "回答中要包含“{a}”和“{b}”。"),
    "lowercase": ("Your entire response must be in lowercase letters.", None),
    "uppercase": ("Your entire response must be in English capital letters only.", None),
    "no_commas": ("Do not use any commas.", "不要使用任何逗号。"),
    "title": (
        "Include a title wrapped in double angular brackets, such as <<my title>>.",
        "加一个用双尖括号包起来的标题，例如<<标题>>。",
    ),
    "end_phrase": ("End your response with the exact phrase '{p}'.", "回答最后必须是这句话：{p}"),
    "quotes": (
        "Wrap your entire response in double quotation marks.",
        "把整个回答用英文双引号包起来。",
    ),
    "json": (
        'Wrap your entire output in JSON format, like {{"answer": "..."}}.',
        '整个输出用JSON格式，例如{{"answer": "..."}}。',
    ),
}


def _sentences(rng: random.Random, topic: str, lang: int, n: int) -> list[str]:
    pool = rng.sample(SENTENCES[lang], n)
    return [s.format(t=topic, T=topic[:1].upper() + topic[1:]) for s in pool]


def _shape(rng: random.Random, lang: int) -> Check:
    kind = rng.choice(tuple(SHAPE_TEXT))
    n = {
        "sentences": rng.randint(1, 5),
        "max_words": rng.randint(12, 40) if lang == 0 else rng.randint(20, 60),
        "bullets": rng.randint(2, 5),
        "paragraphs": rng.randint(2, 3),
    }
    return Check(kind, n[kind])


def _modifier(rng: random.Random, lang: int) -> Check | None:
    kinds = [k for k, v in MOD_TEXT.items() if v[lang] is not None]
    if rng.random() < 0.3:
        return None
    kind = rng.choice(kinds)
    if kind == "keywords":
        return Check(kind, tuple(rng.sample(KEYWORDS[lang], 2)))
    if kind == "end_phrase":
        return Check(kind, rng.choice(PHRASES[lang]))
    return Check(kind)


def _body(rng: random.Random, shape: Check, sents: list[str], lang: int) -> str:
    sep = " " if lang == 0 else ""
    if shape.kind == "bullets":
        return "\n".join(f"* {s}" for s in sents)
    if shape.kind == "paragraphs":
        half = max(1, len(sents) // shape.arg)
        parts = [sep.join(sents[i * half : (i + 1) * half]) or sents[-1] for i in range(shape.arg)]
        return "\n\n***\n\n".join(parts)
    return sep.join(sents)


def _respond(rng: random.Random, topic: str, shape: Check, mod: Check | None, lang: int) -> str:
    n = (
        shape.arg
        if shape.kind in ("sentences", "bullets")
        else rng.randint(1, 3)
        if shape.kind == "max_words"
        else shape.arg * rng.randint(1, 2)
    )
    sents = _sentences(rng, topic, lang, n)
    if mod and mod.kind == "keywords":
        a, b = mod.arg
        sents[-1] = f"I think of {a} and {b}." if lang == 0 else f"我会想到{a}和{b}。"
    if mod and mod.kind == "end_phrase":
        sents[-1] = mod.arg
    text = _body(rng, shape, sents, lang)
    return _decorate(text, topic, mod)


def _decorate(text: str, topic: str, mod: Check | None) -> str:
    kind = mod.kind if mod else None
    if kind == "lowercase":
        return text.lower()
    if kind == "uppercase":
        return text.upper()
    if kind == "title":
        return f"<<{topic[:1].upper() + topic[1:]}>>\n\n{text}"
    if kind == "quotes":
        return f'"{text}"'
    if kind == "json":
        return json.dumps({"answer": text}, ensure_ascii=False)
    return text


def _prompt(rng: random.Random, topic: str, checks: list[Check], lang: int) -> str:
    parts = [rng.choice(ASK[lang]).format(t=topic)]
    for c in checks:
        table = SHAPE_TEXT if c.kind in SHAPE_TEXT else MOD_TEXT
        a, b = c.arg if c.kind == "keywords" else ("", "")
        parts.append(table[c.kind][lang].format(n=c.arg, a=a, b=b, p=c.arg))
    return (" " if lang == 0 else "").join(parts)


def instruction_sample(rng: random.Random) -> Sample:
    """A user request with 1-2 verifiable instructions and a response that follows them."""
    while True:
        lang = rng.randrange(2)
        topic = rng.choice(TOPICS[lang])
        shape, mod = _shape(rng, lang), _modifier(rng, lang)
        checks = [shape] + ([mod] if mod else [])
        response = _respond(rng, topic, shape, mod, lang)
        if all(passes(c, response) for c in checks):
            break
    think = (
        ("I follow the instructions: " + "; ".join(c.kind for c in checks) + ".")
        if lang == 0
        else "按要求回答：" + "；".join(c.kind for c in checks) + "。"
    )
    messages = [
        {"role": "user", "content": _prompt(rng, topic, checks, lang)},
        {"role": "assistant", "content": response, "reasoning_content": think},
    ]
    return Sample("instruction", ("en", "zh")[lang], messages, None, checks=tuple(checks))
