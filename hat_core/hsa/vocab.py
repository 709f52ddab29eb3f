"""The name and template pools of HSA: a training pool and a held-out pool, disjoint.

`TRAIN` feeds training variants; `HELDOUT` only evaluation (Harness-Variant QA). The two share
no English name word, no pinyin form (`ku_cun`), no prefix, suffix or version tag, and no
prompt heading, item template, separator, section title, description or hook template;
`tests/hat_core/hsa/test_hsa_vocab.py` checks it. Words are keyed by the English word they
stand for (the words of a harness name, split by `hat_core.hsa.names.words`).

Case styles are shared: the training pool writes names in every style the held-out pool uses
(kebab and SCREAMING as well as snake, camel and Pascal), so a held-out name differs from
training names by its words, not by a spelling the model never saw. A held-out name is
recognised by a held-out English word or a held-out pinyin form (`marks`, `mark_forms`), and
the training pool refuses both (`avoid`, `avoid_forms`).

    >>> from hat_core.hsa.vocab import pool
    >>> pool("heldout").case_styles
    ('kebab', 'screaming')
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from hat_core.errors import ConfigError

POOLS = ("train", "heldout")

# word -> (train English, held-out English, train pinyin, held-out pinyin)
_WORDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "get": (("fetch", "lookup", "load", "read", "view"), ("obtain", "retrieve", "pull"),
            ("cha", "huo_qu"), ("diao_yue", "na_dao")),
    "query": (("lookup", "fetch", "inspect"), ("probe", "consult"), ("cha_xun",), ("tan_ce",)),
    "search": (("find", "browse", "lookup"), ("locate", "hunt"), ("sou_suo",), ("mo_pai",)),
    "find": (("search", "browse"), ("locate", "hunt"), ("sou_suo",), ("mo_pai",)),
    "check": (("inspect", "verify", "view"), ("audit", "probe"), ("he_shi",), ("pan_dian",)),
    "list": (("show", "enumerate", "all"), ("catalog", "roster"), ("lie_chu",), ("pai_lie",)),
    "calc": (("compute", "calculate", "eval"), ("tally", "derive"), ("ji_suan",), ("he_suan",)),
    "estimate": (("predict", "forecast", "calc"), ("gauge", "appraise"), ("gu_suan",),
                 ("ce_ding",)),
    "recommend": (("suggest", "advise", "pick"), ("propose", "nominate"), ("tui_jian",),
                  ("jian_yi",)),
    "transfer": (("route", "forward", "send"), ("escalate", "relay"), ("zhuan",), ("yi_jiao",)),
    "product": (("item", "goods", "article"), ("listing", "merch"), ("shang_pin",), ("bao_bei",)),
    "products": (("items", "goods"), ("listings", "merch"), ("shang_pin",), ("bao_bei",)),
    "price": (("cost", "pricing", "amount"), ("quote", "tariff"), ("jia_ge",), ("biao_shou",)),
    "pricing": (("price", "cost"), ("quote", "tariff"), ("jia_ge",), ("biao_shou",)),
    "info": (("details", "detail", "profile", "data"), ("facts", "dossier"), ("xin_xi",),
             ("zi_liao",)),
    "size": (("sizing", "fit"), ("measure", "dimension"), ("chi_ma",), ("hao_xing",)),
    "coupons": (("vouchers", "discounts", "promos"), ("rebates", "markdowns"), ("you_hui",),
                ("di_kou",)),
    "coupon": (("voucher", "discount", "promo"), ("rebate", "markdown"), ("you_hui",),
               ("di_kou",)),
    "final": (("net", "total", "paid"), ("landed", "effective"), ("dao_shou",), ("shi_fu",)),
    "stock": (("inventory", "availability", "supply"), ("on_hand", "reserve"), ("ku_cun",),
              ("bei_huo",)),
    "inventory": (("stock", "availability"), ("on_hand", "reserve"), ("ku_cun",), ("bei_huo",)),
    "shipping": (("delivery", "shipment", "transit"), ("freight", "courier"), ("wu_liu",),
                 ("pei_song",)),
    "logistics": (("delivery", "shipping"), ("freight", "courier"), ("wu_liu",), ("pei_song",)),
    "return": (("refund", "exchange"), ("reimburse", "revert"), ("tui_huo",), ("tui_kuan",)),
    "returns": (("refunds", "exchanges"), ("reimburse", "reverts"), ("tui_huo",), ("tui_kuan",)),
    "policy": (("rules", "terms"), ("charter", "bylaws"), ("zheng_ce",), ("gui_ze",)),
    "live": (("stream", "broadcast", "room"), ("onair", "studio"), ("zhi_bo",), ("bo_jian",)),
    "promotions": (("deals", "events", "campaigns"), ("specials", "giveaways"), ("huo_dong",),
                   ("cu_xiao",)),
    "order": (("purchase", "trade"), ("requisition", "booking"), ("ding_dan",), ("gou_mai",)),
    "human": (("agent", "staff", "person"), ("operator", "attendant"), ("ren_gong",),
              ("ke_fu",)),
    "bundle": (("combo", "set", "pack"), ("kit", "assortment"), ("zu_he",), ("da_pei",)),
    "offers": (("deals", "bundles"), ("specials", "packages"), ("you_hui",), ("di_kou",)),
    "deals": (("offers", "bundles"), ("specials", "packages"), ("zu_he",), ("da_pei",)),
    "qa": (("questions", "answers", "asks"), ("inquiry", "faq"), ("wen_da",), ("jie_da",)),
    "comment": (("chat", "message", "danmaku"), ("remark", "banter"), ("dan_mu",),
                ("ping_lun",)),
    "reply": (("respond", "answer"), ("rejoin", "retort"), ("hui_fu",), ("ying_da",)),
    "compliance": (("policy", "safety", "legal"), ("conformance", "regulatory"), ("he_gui",),
                   ("gui_fan",)),
    "refusal": (("decline", "reject"), ("demur", "rebuff"), ("ju_jue",), ("hui_bi",)),
    "handoff": (("escalation", "transfer"), ("relay", "escalate"), ("zhuan_jie",),
                ("yi_jiao",)),
    "aftersales": (("support", "helpdesk"), ("warranty", "care"), ("shou_hou",), ("wei_bao",)),
    "id": (("id", "no", "code", "key"), ("ref", "handle"), ("bian_hao",), ("dai_ma",)),
    "ids": (("ids", "codes", "keys"), ("refs", "handles"), ("bian_hao",), ("dai_ma",)),
    "code": (("code", "key", "id"), ("ref", "token"), ("bian_hao",), ("dai_ma",)),
    "keyword": (("query", "term", "text"), ("phrase", "needle"), ("guan_jian_ci",),
                ("sou_ci",)),
    "max": (("upper", "limit", "top"), ("ceiling", "cap"), ("zui_gao",), ("shang_xian",)),
    "height": (("stature", "tall"), ("elevation", "span"), ("shen_gao",), ("gao_du",)),
    "weight": (("mass", "body_weight"), ("heft", "tonnage"), ("ti_zhong",), ("zhong_liang",)),
    "quantity": (("qty", "count", "amount"), ("units", "volume"), ("shu_liang",), ("jian_shu",)),
    "variant": (("spec", "option", "style"), ("flavor", "edition"), ("gui_ge",), ("kuan_shi",)),
    "sku": (("spec", "option", "style"), ("flavor", "edition"), ("gui_ge",), ("kuan_shi",)),
    "city": (("town", "destination", "dest_city"), ("municipality", "locale"), ("cheng_shi",),
             ("di_qu",)),
    "district": (("area", "zone"), ("borough", "precinct"), ("qu_yu",), ("jie_qu",)),
    "reason": (("cause", "why", "note"), ("motive", "grounds"), ("yuan_yin",), ("li_you",)),
}
# Fill words a name may lose: `transfer_to_human` -> `route_human`.
FILLERS = frozenset({"to", "and", "of", "for", "the", "by"})


@dataclass(frozen=True)
class Pool:
    """Everything one pool may draw from. Templates use `{title}`, `{name}`, `{description}`,
    `{tools}`, `{text}`, `{body}`, `{message}` placeholders."""

    name: str
    synonyms: MappingProxyType  # word -> English alternatives
    pinyin: MappingProxyType  # word -> pinyin alternatives
    case_styles: tuple[str, ...]
    prefixes: tuple[str, ...]
    suffixes: tuple[str, ...]
    version_tags: tuple[str, ...]
    headings: tuple[str, ...]
    skill_items: dict[str, tuple[str, ...]]  # language -> templates
    tool_items: dict[str, tuple[str, ...]]
    separators: tuple[str, ...]
    section_titles: dict[str, dict[str, tuple[str, ...]]]  # section id -> language -> titles
    section_wrappers: dict[str, tuple[str, ...]]  # language -> `{body}` templates
    describe: dict[str, dict[str, tuple[str, ...]]]  # text kind -> language -> `{text}`
    phrase_swaps: tuple[tuple[str, tuple[str, ...]], ...]  # zh phrase -> replacements
    hook_messages: dict[str, tuple[str, ...]]  # language -> `{message}` templates
    distractor_words: MappingProxyType  # word -> alternatives, for distractor names
    avoid: frozenset[str] = field(default=frozenset())  # words a new name must not contain
    # pinyin forms (syllable tuples) a new name must not contain as a run of its words
    avoid_forms: frozenset[tuple[str, ...]] = field(default=frozenset())
    # When set, a new name must show a mark of the pool: one of these words or forms.
    marks: frozenset[str] = field(default=frozenset())
    mark_forms: frozenset[tuple[str, ...]] = field(default=frozenset())


def _column(i: int) -> MappingProxyType:
    return MappingProxyType({w: forms[i] for w, forms in _WORDS.items()})


_DISTRACTOR_WORDS = {
    "weather": (("climate",), ("skies",)), "forecast": (("outlook",), ("prognosis",)),
    "exchange": (("convert",), ("swap",)), "rate": (("ratio",), ("quotient",)),
    "translate": (("localize",), ("transcribe",)), "text": (("copy",), ("wording",)),
    "schedule": (("timetable", "agenda"), ("roster_time",)), "stream": (("session",), ("airing",)),
    "fan": (("follower",), ("devotee",)), "level": (("tier",), ("echelon",)),
    "sticker": (("emoji",), ("glyph",)), "music": (("song", "track"), ("melody",)),
    "host": (("anchor",), ("presenter",)), "news": (("headlines",), ("bulletin",)),
}


def _distractor_column(i: int) -> MappingProxyType:
    return MappingProxyType({w: forms[i] for w, forms in _DISTRACTOR_WORDS.items()})


TRAIN = Pool(
    name="train",
    synonyms=_column(0), pinyin=_column(2),
    case_styles=("snake", "camel", "pascal", "kebab", "screaming"),
    prefixes=("tool_", "fn_", "api_", "do_", "my_"),
    suffixes=("_tool", "_api", "_fn", "_now"),
    version_tags=("_v2", "_v3", "V2", "_v4"),
    headings=("## {title}", "### {title}", "【{title}】", "# {title}", "{title}：",
              "[{title}]", "**{title}**"),
    skill_items={
        "zh": ("- {name}: {description}（工具：{tools}）",
               "* {name} —— {description}（可用工具：{tools}）",
               "- 【{name}】{description}；工具：{tools}", "{name}：{description}（调用 {tools}）"),
        "en": ("- {name}: {description} (tools: {tools})",
               "* {name} - {description} [tools: {tools}]", "{name}: {description}; uses {tools}"),
    },
    tool_items={
        "zh": ("- {name}: {description}", "* {name} —— {description}", "- 【{name}】{description}",
               "{name}：{description}"),
        "en": ("- {name}: {description}", "* {name} - {description}", "{name}: {description}"),
    },
    separators=("\n\n", "\n", "\n\n---\n\n", "\n\n\n"),
    section_titles={
        "persona": {"zh": ("角色", "人设", "身份设定"), "en": ("Role", "Persona")},
        "rules": {"zh": ("规则", "规范", "守则"), "en": ("Rules", "Guidelines")},
        "skills": {"zh": ("技能", "技能列表", "能力"), "en": ("Skills", "Capabilities")},
        "tools": {"zh": ("工具", "工具列表", "可用工具"), "en": ("Tools", "Available tools")},
        "tool_use": {"zh": ("工具使用", "调用须知"), "en": ("Tool use", "Using tools")},
        "output_format": {"zh": ("输出格式", "回复格式", "回复要求"),
                          "en": ("Output format", "Reply format")},
    },
    section_wrappers={"zh": ("{body}", "说明：{body}", "{body}\n请按以上说明执行。"),
                      "en": ("{body}", "Note: {body}", "{body}\nFollow the notes above.")},
    describe={
        "tool": {"zh": ("{text}", "用于{text}", "功能：{text}"),
                 "en": ("{text}", "Purpose: {text}", "Used to: {text}")},
        "returns": {"zh": ("{text}", "结果：{text}", "包含{text}"),
                    "en": ("{text}", "Result: {text}")},
        "param": {"zh": ("{text}", "即{text}", "参数：{text}"), "en": ("{text}", "Param: {text}")},
        "skill": {"zh": ("{text}", "负责{text}", "技能：{text}"),
                  "en": ("{text}", "Handles: {text}")},
        "instructions": {"zh": ("{text}", "要点：{text}"), "en": ("{text}", "Steps: {text}")},
        "hook": {"zh": ("{text}", "检查项：{text}"), "en": ("{text}", "Check: {text}")},
    },
    phrase_swaps=(("查询", ("查看", "查找")), ("按", ("根据",)), ("估算", ("预估",)),
                  ("推荐", ("建议",)), ("计算", ("算出",)), ("回答", ("解答",)),
                  ("说明", ("讲清",))),
    hook_messages={"zh": ("{message}", "【系统提示】{message}", "检查未通过：{message}",
                          "{message}（请修改后重试）"),
                   "en": ("{message}", "[hook] {message}", "Retry required: {message}")},
    distractor_words=_distractor_column(0),
)

HELDOUT = Pool(
    name="heldout",
    synonyms=_column(1), pinyin=_column(3),
    case_styles=("kebab", "screaming"),
    prefixes=("op_", "ext_", "hub_"),
    suffixes=("_handler", "_service", "_endpoint"),
    version_tags=("_rev3", "_build7", "_edition9"),
    headings=("=== {title} ===", "<{title}>", "{title} >>", "+ {title} +", "《{title}》"),
    skill_items={"zh": ("+ {name} => {description} :: {tools}",
                        "// {description}（{name}）用 {tools}"),
                 "en": ("+ {name} => {description} :: {tools}",
                        "// {description} ({name}) with {tools}")},
    tool_items={"zh": ("+ {name} => {description}", "// {description}（{name}）"),
                "en": ("+ {name} => {description}", "// {description} ({name})")},
    separators=("\n~~~\n", "\n\n***\n\n"),
    section_titles={
        "persona": {"zh": ("主播设定",), "en": ("Who you are",)},
        "rules": {"zh": ("红线",), "en": ("Policies",)},
        "skills": {"zh": ("可用技能一览",), "en": ("Skill catalog",)},
        "tools": {"zh": ("函数清单",), "en": ("Function registry",)},
        "tool_use": {"zh": ("调用约定",), "en": ("Calling conventions",)},
        "output_format": {"zh": ("作答方式",), "en": ("How to answer",)},
    },
    section_wrappers={"zh": ("提示 >> {body}", "{body}\n（以上为本节要点）"),
                      "en": ("Heads-up >> {body}", "{body}\n(End of section.)")},
    describe={
        "tool": {"zh": ("作用 => {text}", "{text}（函数）"), "en": ("Does => {text}",)},
        "returns": {"zh": ("产出 => {text}",), "en": ("Yields => {text}",)},
        "param": {"zh": ("取值 => {text}",), "en": ("Value => {text}",)},
        "skill": {"zh": ("职责 => {text}",), "en": ("Duty => {text}",)},
        "instructions": {"zh": ("做法 => {text}",), "en": ("Method => {text}",)},
        "hook": {"zh": ("守卫 => {text}",), "en": ("Guard => {text}",)},
    },
    phrase_swaps=(("查询", ("检索", "调取")), ("估算", ("测算",)), ("商品", ("宝贝",)),
                  ("推荐", ("给出",))),
    hook_messages={"zh": ("系统拦截 >> {message}", "<retry>{message}</retry>"),
                   "en": ("!! {message}", "<retry>{message}</retry>")},
    distractor_words=_distractor_column(1),
)



def english_words(p: Pool) -> frozenset[str]:
    """Every English word and affix word a pool can put into a name (pinyin excluded: the
    held-out pool's pinyin names are told apart by their held-out case styles)."""
    forms = [f for opts in p.synonyms.values() for f in opts]
    forms += [f for opts in p.distractor_words.values() for f in opts]
    forms += [*p.prefixes, *p.suffixes, *p.version_tags]
    return frozenset(w for f in forms for w in re.findall(r"[a-z]+", f.lower()))


def pinyin_forms(p: Pool) -> frozenset[tuple[str, ...]]:
    """Every pinyin form of a pool as its syllables: `("ku", "cun")`."""
    return frozenset(tuple(f.split("_")) for opts in p.pinyin.values() for f in opts)


def has_form(name_words: list[str] | tuple[str, ...],
             forms: frozenset[tuple[str, ...]]) -> bool:
    """Whether the syllables of one of `forms` appear as a run of `name_words`."""
    if not forms:
        return False
    seq = tuple(name_words)
    for k in _form_lengths(forms):
        if any(seq[i:i + k] in forms for i in range(len(seq) - k + 1)):
            return True
    return False


@functools.lru_cache(maxsize=16)
def _form_lengths(forms: frozenset[tuple[str, ...]]) -> tuple[int, ...]:
    return tuple(sorted({len(f) for f in forms}))


# Training names never contain a held-out word or pinyin form, whatever the harness's own
# names hold.
TRAIN = replace(TRAIN, avoid=english_words(HELDOUT), avoid_forms=pinyin_forms(HELDOUT))
# Held-out names are always recognisable as such (`hat_core.hsa.heldout.name_is_heldout`).
HELDOUT = replace(HELDOUT, marks=english_words(HELDOUT), mark_forms=pinyin_forms(HELDOUT))
_POOLS = {"train": TRAIN, "heldout": HELDOUT}


def pool(name: str) -> Pool:
    """The pool called `name` (ConfigError listing the valid names otherwise)."""
    try:
        return _POOLS[name]
    except KeyError:
        raise ConfigError(f"unknown HSA pool {name!r}; valid: {', '.join(POOLS)}") from None
