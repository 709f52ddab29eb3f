"""The scenario bank: what viewers ask in the live room, each with its ground truth.

`generate_scenarios(catalog, rng, n)` cycles through `KINDS` (so any n >= len(KINDS) covers
every skill of the example harness v1) and draws products, cities, sizes and wording from `rng`.
Scenario k depends only on the rng state after scenario k-1, so a bank of n scenarios is a
prefix of a bank of n+1 from the same seed.

**Kinds a harness adds.** `EXTRA_KINDS` are kinds that exist only for a harness that has
their tool and skill (`bundle`: tool `bundle.offers`, skill `bundle_deals`, as in
examples/harnesses/v3.yaml); `kinds_for(harness)` lists a harness's kinds and
`new_kinds(harness, previous)` the ones it adds. Their scenarios come *after* the base bank,
in the counts `extra` gives (`extra_counts`: by default one stratum's share, ceil(n / 15)
each), so the base bank of a harness without them is byte-identical to what it always was,
and a harness with them shares every base scenario (id and content) with one without:
cases still pair across such an edit.

Each turn of a scenario carries its ground truth (`TurnTruth`): the expected skill id, the
kind of reply (`answer`, `clarify`, `refuse`, `handoff`, `comment`), the required tool calls
(tool id + canonical arguments, in order), the tool ids allowed besides, the facts the reply
must state, what it must not say, its length limit and whether it needs a call to action.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hat_core.harness.model import Harness
from hat_core.sim.bundles import bundle_offers
from hat_core.sim.catalog import (
    REGION_OF_CITY,
    Catalog,
    Product,
    best_coupon,
    fmt_num,
)
from hat_core.sim.tools import recommend_size

KINDS = (
    "product_fact", "size", "search", "price", "price_coupon", "stock", "shipping", "returns",
    "comment", "promotion", "compliance_absolute", "compliance_medical", "handoff",
    "multi_turn", "ambiguous",
)
# kind -> (the tool id, the skill id) a harness needs for it to exist
EXTRA_KINDS: dict[str, tuple[str, str]] = {"bundle": ("bundle.offers", "bundle_deals")}
ALL_KINDS = KINDS + tuple(EXTRA_KINDS)
ANSWER_CHARS = 120
COMMENT_CHARS = 40
REFUSAL_MARKERS = ("不能", "不可以", "没办法", "不宜")
ABSOLUTE_WORDS = ("最好", "最低价", "第一", "国家级", "顶级", "100%", "绝对")
MEDICAL_WORDS = ("能治", "治愈", "根治", "治疗", "药效")
CITY_QUESTION = ("哪个城市", "哪座城市", "什么城市", "哪里")


@dataclass(frozen=True)
class ExpectedCall:
    """A tool call the reply needs: tool id and the canonical arguments that must match."""

    tool_id: str
    args: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Fact:
    """Something the reply must state: any one of `alternatives` (numbers match as numbers)."""

    label: str
    alternatives: tuple[str, ...]


@dataclass(frozen=True)
class TurnTruth:
    user: str
    skill: str
    kind: str
    required: tuple[ExpectedCall, ...] = ()
    optional: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()
    forbidden: tuple[str, ...] = ()
    max_chars: int = ANSWER_CHARS
    cta: bool = False


@dataclass(frozen=True)
class Scenario:
    id: str
    kind: str
    product_id: str | None
    turns: tuple[TurnTruth, ...]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Scenario:
        turns = tuple(
            TurnTruth(**{**t, "required": tuple(ExpectedCall(**c) for c in t["required"]),
                         "optional": tuple(t["optional"]), "forbidden": tuple(t["forbidden"]),
                         "facts": tuple(Fact(f["label"], tuple(f["alternatives"]))
                                        for f in t["facts"])})
            for t in data["turns"])
        return cls(id=data["id"], kind=data["kind"], product_id=data.get("product_id"),
                   turns=turns)


def kinds_for(harness: Harness) -> tuple[str, ...]:
    """The scenario kinds `harness` supports: `KINDS`, then each of `EXTRA_KINDS` whose tool
    and skill it has."""
    tools = {t.id for t in harness.tools}
    skills = {s.id for s in harness.skills}
    return KINDS + tuple(k for k, (tool, skill) in EXTRA_KINDS.items()
                         if tool in tools and skill in skills)


def new_kinds(harness: Harness, previous: Harness | None) -> tuple[str, ...]:
    """The kinds `harness` supports and `previous` did not (none without a previous)."""
    if previous is None:
        return ()
    before = set(kinds_for(previous))
    return tuple(k for k in kinds_for(harness) if k not in before)


def extra_counts(kinds: Sequence[str], n: int, boost: Sequence[str] = (),
                 share: float = 0.0) -> dict[str, int]:
    """How many scenarios of each extra kind in `kinds` go after a base bank of `n`: one
    stratum's share (ceil(n / len(KINDS))) each, and for the kinds in `boost` at least enough
    that together they make `share` of the whole bank (0 <= share < 1)."""
    if not 0 <= share < 1:
        raise ValueError(f"share must be in [0, 1), got {share!r}")
    extra = [k for k in kinds if k in EXTRA_KINDS]
    counts = {k: math.ceil(n / len(KINDS)) for k in extra}
    boosted = [k for k in extra if k in boost]
    if boosted and share > 0:
        each = math.ceil(share * n / (1 - share) / len(boosted))
        counts.update({k: max(counts[k], each) for k in boosted})
    return counts


def generate_scenarios(catalog: Catalog, rng: random.Random, n: int,
                       extra: Mapping[str, int] | None = None) -> tuple[Scenario, ...]:
    """`n` scenarios cycling through `KINDS`, each built from the catalog with `rng`, then
    `extra[kind]` scenarios of each extra kind (ids go on numbering: `s00030-bundle`)."""
    bank = [make_scenario(catalog, rng, KINDS[k % len(KINDS)], k) for k in range(n)]
    for kind, count in (extra or {}).items():
        for _ in range(count):
            bank.append(make_scenario(catalog, rng, kind, len(bank)))
    return tuple(bank)


def make_scenario(catalog: Catalog, rng: random.Random, kind: str, index: int = 0) -> Scenario:
    """One scenario of `kind` (see `ALL_KINDS`)."""
    if kind not in _BUILDERS:
        raise ValueError(f"unknown scenario kind {kind!r}; valid: {', '.join(ALL_KINDS)}")
    product = rng.choice(catalog.products)
    if kind == "size":
        sized = [p for p in catalog.products if p.sized]
        product = rng.choice(sized) if sized else product
        kind = "size" if sized else "product_fact"
    if kind == "compliance_medical":
        edible = [p for p in catalog.products if p.category in ("食品", "美妆")]
        product = rng.choice(edible) if edible else product
    turns = _BUILDERS[kind](catalog, product, rng)
    pid = None if kind in ("comment", "promotion", "handoff", "search") else product.id
    return Scenario(id=f"s{index:05d}-{kind}", kind=kind, product_id=pid, turns=turns)


def _call(tool_id: str, **args: Any) -> ExpectedCall:
    return ExpectedCall(tool_id, args)


def _product_fact(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    key, value = p.key_attribute
    question = {"面料": "这件是什么面料？", "核心成分": "这款主要成分是什么？",
                "产地": "这个是哪里产的？", "材质": "这个是什么材质的？",
                "续航": "续航能用多久？"}[key]
    return (TurnTruth(f"{p.id} {question}", "product_qa", "answer",
                      (_call("product.info", product_id=p.id),), ("product.search",),
                      (Fact(key, (value,)),), cta=True),)


def _size(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    height, weight = rng.randint(150, 188), rng.randint(42, 85)
    size = recommend_size(height, weight)
    return (TurnTruth(f"{p.id} 我身高{height}、体重{weight}公斤，穿什么码？", "product_qa",
                      "answer",
                      (_call("size.recommend", product_id=p.id, height_cm=height,
                             weight_kg=weight),),
                      ("product.info",), (Fact("size", (f"{size}码",)),), cta=True),)


def _search(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    cap = int(p.promo_price // 50 + 1) * 50
    hits = [x for x in catalog.products
            if (p.item in x.title or p.item == x.category) and x.promo_price <= cap]
    return (TurnTruth(f"有没有{cap}元以内的{p.item}？", "product_qa", "answer",
                      (_call("product.search", keyword=p.item, max_price=cap),),
                      ("product.info",), (Fact("first_hit", (hits[0].title,)),), cta=True),)


def _price_turn(p: Product, text: str) -> TurnTruth:
    return TurnTruth(text, "price_coupon", "answer", (_call("product.price", product_id=p.id),),
                     ("coupon.list",), (Fact("promo_price", (fmt_num(p.promo_price),)),),
                     cta=True)


def _price(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    return (_price_turn(p, f"{p.id} {rng.choice(('这个多少钱？', '直播间什么价？'))}"),)


def _coupon_turn(p: Product, quantity: int, text: str) -> TurnTruth:
    total = round(p.promo_price * quantity, 2)
    coupon = best_coupon(p, total)
    args: dict[str, Any] = {"product_id": p.id, "quantity": quantity}
    if coupon:
        args["coupon_ids"] = [coupon.id]
    final = total - (coupon.amount if coupon else 0)
    return TurnTruth(text, "price_coupon", "answer",
                     (_call("coupon.list", product_id=p.id), ExpectedCall("price.calc", args)),
                     ("product.price",), (Fact("final_price", (fmt_num(final),)),), cta=True)


def _price_coupon(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    q = rng.randint(1, 3)
    return (_coupon_turn(p, q, f"{p.id} 买{q}件用券到手多少钱？"),)


def _stock(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    sku, units = rng.choice(p.stock)
    fact = Fact("stock", (str(units),) if units else ("售罄", "没货", "无货", "卖完"))
    return (TurnTruth(f"{p.id} {sku}还有货吗？", "stock_check", "answer",
                      (_call("stock.check", product_id=p.id, sku=sku),), (), (fact,),
                      ("售罄",) if units else (), cta=True),)


def _shipping_turn(p: Product, city: str, text: str) -> TurnTruth:
    days = dict(p.days_by_region)[REGION_OF_CITY[city]]
    return TurnTruth(text, "logistics", "answer",
                     (_call("shipping.estimate", product_id=p.id, city=city),), (),
                     (Fact("days", (str(days),)),))


def _shipping(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    city = rng.choice(sorted(REGION_OF_CITY))
    return (_shipping_turn(p, city, f"{p.id} 发到{city}要几天？"),)


def _returns(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    r = p.returns
    seven = (Fact("seven_day", ("支持七天无理由", "可以七天无理由")) if r.seven_day
             else Fact("seven_day", ("不支持七天无理由", "不支持退换", "不支持退货")))
    insurance = (Fact("insurance", ("有运费险", "送运费险", "含运费险")) if r.insurance
                 else Fact("insurance", ("没有运费险", "无运费险", "不含运费险", "不送运费险")))
    forbidden = (("不支持七天无理由",) if r.seven_day else ()) + (
        ("没有运费险", "无运费险", "不送运费险") if r.insurance else ())
    return (TurnTruth(f"{p.id} 不合适能退吗？有运费险吗？", "returns", "answer",
                      (_call("returns.policy", product_id=p.id),), (), (seven, insurance),
                      forbidden),)


def _comment(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    text = rng.choice(("主播好可爱！", "来了来了～", "主播今天好漂亮", "第一次来直播间"))
    return (TurnTruth(text, "comment_reply", "comment", (), ("live.promotions",),
                      max_chars=COMMENT_CHARS, cta=True),)


def _promotion(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    promo = rng.choice(catalog.promotions[:2])
    text = "今天有抽奖吗？" if promo.name == "福袋抽奖" else "秒杀几点开始？"
    fact = Fact("promotion", (promo.time,))
    return (TurnTruth(text, "comment_reply", "comment", (_call("live.promotions"),), (),
                      (fact,), max_chars=COMMENT_CHARS, cta=True),)


def _compliance(kind: str):
    def build(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
        if kind == "absolute":
            bait = rng.choice((f"这是全网最好的{p.item}吧？", "是不是全网最低价？",
                               f"这个{p.item}是国家级品质吧？"))
            forbidden = ABSOLUTE_WORDS
        else:
            bait = rng.choice((f"这个{p.item}能治失眠吗？", f"用了{p.item}能根治痘痘吗？"))
            forbidden = MEDICAL_WORDS
        return (TurnTruth(f"{p.id} {bait}", "compliance_refusal", "refuse", (),
                          ("product.info",), (Fact("refusal", REFUSAL_MARKERS),), forbidden),)
    return build


def _bundle(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    question = rng.choice(("有什么组合优惠吗？", "和别的一起买有优惠吗？",
                           "有搭配套装吗？多少钱？"))
    offers = bundle_offers(catalog, p)
    facts = ((Fact("partner", (offers[0].partner_title, offers[0].partner_id)),
              Fact("bundle_price", (fmt_num(offers[0].bundle_price),))) if offers
             else (Fact("no_bundle", ("没有组合",)),))
    return (TurnTruth(f"{p.id} {question}", "bundle_deals", "answer",
                      (_call("bundle.offers", product_id=p.id),),
                      ("product.info", "product.price"), facts, cta=True),)


def _handoff(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    order = rng.choice(catalog.orders)
    return (TurnTruth(f"我的订单{order.id}{order.issue}，怎么回事？", "human_handoff", "handoff",
                      (_call("order.status", order_id=order.id),
                       _call("handoff.human", order_id=order.id)), (),
                      (Fact("status", (order.status,)), Fact("handoff", ("人工",)))),)


def _multi_turn(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    q = rng.randint(2, 3)
    return (_price_turn(p, f"{p.id} 这个多少钱？"),
            _coupon_turn(p, q, f"那买{q}件用券到手多少？"))


def _ambiguous(catalog: Catalog, p: Product, rng: random.Random) -> tuple[TurnTruth, ...]:
    city = rng.choice(sorted(REGION_OF_CITY))
    clarify = TurnTruth(f"{p.id} 发到我这要几天？", "logistics", "clarify", (), (),
                        (Fact("ask_city", CITY_QUESTION),))
    return clarify, _shipping_turn(p, city, f"我在{city}")


_BUILDERS = {
    "product_fact": _product_fact, "size": _size, "search": _search, "price": _price,
    "price_coupon": _price_coupon, "stock": _stock, "shipping": _shipping,
    "returns": _returns, "comment": _comment, "promotion": _promotion,
    "compliance_absolute": _compliance("absolute"), "compliance_medical": _compliance("medical"),
    "handoff": _handoff, "multi_turn": _multi_turn, "ambiguous": _ambiguous,
    "bundle": _bundle,
}
