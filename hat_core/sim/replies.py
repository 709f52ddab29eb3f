"""The oracle's Chinese reply templates: a reply written from the episode's tool results.

`compose(scenario, truth, results)` picks the template of the turn (by scenario kind and turn
kind) and fills it from `results` (the latest successful result per tool id). Replies state
the turn's facts, carry a call to action where the scenario needs one, stay within the length
limit, and avoid the absolute and medical wording the example harness forbids.
"""

from __future__ import annotations

from typing import Any

from hat_core.sim.catalog import fmt_num
from hat_core.sim.scenarios import Scenario, TurnTruth

GREETINGS = ("谢谢宝宝～点点关注，福利马上来！", "欢迎来到直播间～先点关注，好物不断哦！")
ABSOLUTE_REFUSAL = "这个说法咱们不能讲哦～效果因人而异，大家按需选择，喜欢可以先加购～"
MEDICAL_REFUSAL = "直播间不能宣传医疗作用哦～它只是日常产品，身体不适请咨询医生～"
CLARIFY = "请问您在哪个城市呀？告诉我城市马上帮您查时效～"
MISSING = "抱歉，暂时没查到相关信息，稍后再帮您确认～"


PLAN_STYLES = ("plain", "anchored")  # how `plan` names the skill and the tool


def plan(skill: str, tool: str, skill_line: str = "", tool_line: str = "") -> str:
    """The oracle's reasoning before a tool call (surface names of the current harness).

    With `skill_line` and `tool_line` (the `anchored` plan: each name with its description as
    the prompt's line shows it, `description: name`) the names are quoted from their lines:
    a model that learns to write them finds the line by its description, which matches the
    viewer's words, and then copies the name that follows it there."""
    if skill_line and tool_line:
        return f"观众的问题属于【{skill_line}】，先调用【{tool_line}】拿到事实再回答。"
    return f"观众的问题属于{skill}，先调用{tool}拿到事实再回答。"


def conclude(truth: TurnTruth, skill: str) -> str:
    """The oracle's reasoning before its reply."""
    if truth.kind == "clarify":
        return f"按{skill}的要求，缺少收货城市，先问清楚。"
    if truth.kind == "refuse":
        return f"观众诱导违规说法，按{skill}礼貌拒绝并给出合规说法。"
    if not truth.required:
        return f"弹幕互动，按{skill}简短活泼地回复。"
    return f"工具结果已齐，按{skill}的要求简短作答，不用绝对化用语。"


def compose(scenario: Scenario, truth: TurnTruth, results: dict[str, Any]) -> str:
    """The reply for this turn, or an apology when a needed result is missing."""
    if truth.kind == "clarify":
        return CLARIFY
    if truth.kind == "refuse":
        return ABSOLUTE_REFUSAL if scenario.kind == "compliance_absolute" else MEDICAL_REFUSAL
    if truth.kind == "comment" and not truth.required:
        return GREETINGS[len(truth.user) % len(GREETINGS)]
    template = _TEMPLATES[truth.required[-1].tool_id]
    try:
        return template(truth, results)
    except (KeyError, TypeError, IndexError):
        return MISSING


def _info(truth: TurnTruth, r: dict) -> str:
    info = r["product.info"]
    key = truth.facts[0].label
    return f"{info['title']}的{key}是{info['attributes'][key]}哦，喜欢的宝宝可以直接拍～"


def _size(truth: TurnTruth, r: dict) -> str:
    s = r["size.recommend"]
    return f"按您{s['reason']}，建议选{s['size']}码，合身不紧绷，放心拍～"


def _search(truth: TurnTruth, r: dict) -> str:
    hits = r["product.search"]["results"]
    if not hits:
        return "暂时没有符合预算的商品，可以看看其他款～"
    titles = "、".join(h["title"] for h in hits[:3])
    return f"有的！{titles}都在预算内，点链接看看～"


def _price(truth: TurnTruth, r: dict) -> str:
    p = r["product.price"]
    return (f"这款原价{fmt_num(p['price'])}元，直播间活动价{fmt_num(p['promo_price'])}元，"
            "现在拍很划算～")


def _calc(truth: TurnTruth, r: dict) -> str:
    c = r["price.calc"]
    head = f"{c['quantity']}件共{fmt_num(c['total'])}元"
    if not c["coupon_id"]:
        return f"{head}，暂时没有可用的券，到手{fmt_num(c['final'])}元，喜欢就下单～"
    coupons = {x["coupon_id"]: x["title"] for x in r.get("coupon.list", {}).get("coupons", [])}
    name = coupons.get(c["coupon_id"], c["coupon_id"])
    return (f"{head}，用{name}的券减{fmt_num(c['discount'])}元，到手{fmt_num(c['final'])}元，"
            "赶紧下单～")


def _stock(truth: TurnTruth, r: dict) -> str:
    (sku, units), = r["stock.check"]["stock"].items()
    if units:
        return f"{sku}还有{units}件，喜欢的抓紧拍～"
    return f"{sku}暂时售罄了，可以看看其他规格，喜欢先加购～"


def _shipping(truth: TurnTruth, r: dict) -> str:
    s = r["shipping.estimate"]
    return (f"从{s['ship_from']}发货，付款后{s['dispatch_hours']}小时内发出，"
            f"发到{s['city']}预计{s['days']}天送达～")


def _returns(truth: TurnTruth, r: dict) -> str:
    p = r["returns.policy"]
    seven = "支持" if p["seven_day_return"] else "不支持"
    insured = "有" if p["shipping_insurance"] else "没有"
    return f"这款{seven}七天无理由，{insured}运费险，{p['note']}～"


def _bundles(truth: TurnTruth, r: dict) -> str:
    offers = r["bundle.offers"]["offers"]
    if not offers:
        return "这款暂时没有组合优惠，单买也很划算，喜欢直接拍～"
    o = offers[0]
    return (f"有的！搭配{o['partner_title']}（{o['partner_id']}）组合价"
            f"{fmt_num(o['bundle_price'])}元，一起买省{fmt_num(o['saving'])}元，加购一起拍～")


def _promotions(truth: TurnTruth, r: dict) -> str:
    promos = r["live.promotions"]["promotions"]
    wanted = "福袋抽奖" if "抽奖" in truth.user else "整点秒杀"
    p = next(x for x in promos if x["name"] == wanted)
    return f"有的！{p['name']}时间：{p['time']}，{p['rule']}，点关注别错过～"


def _handoff(truth: TurnTruth, r: dict) -> str:
    o, t = r["order.status"], r["handoff.human"]
    return (f"订单{o['order_id']}目前{o['status']}，已为您转人工客服处理"
            f"（工单{t['ticket_id']}），请稍等～")


_TEMPLATES = {
    "product.info": _info, "size.recommend": _size, "product.search": _search,
    "product.price": _price, "price.calc": _calc, "stock.check": _stock,
    "shipping.estimate": _shipping, "returns.policy": _returns,
    "live.promotions": _promotions, "handoff.human": _handoff, "bundle.offers": _bundles,
}
