"""The tool implementations, keyed by tool id, with canonical parameter names and types.

A harness may call a tool anything and name its parameters anything (`hat_core.sim.binding`
maps them back); here every tool takes canonical arguments and runs against a `Catalog`.
Each `ToolSpec` also carries its `reference`: the JSON Schema of its canonical parameters with
descriptions (the surface of examples/harnesses/v1.yaml), which the binding matches a
harness tool's parameters against.
Expected failures are values: `ToolResult(ok=False, error_type=...)` with the error types in
`ERROR_TYPES`.

    >>> from hat_core.sim.catalog import generate_catalog
    >>> import random
    >>> cat = generate_catalog(random.Random(0), size=4)
    >>> execute(cat, "product.price", {"product_id": "P9999"}).error_type
    'not_found'
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hat_core.sim.bundles import bundle_offers
from hat_core.sim.catalog import REGION_OF_CITY, Catalog, Product, fmt_num

ERROR_TYPES = ("unknown_tool", "bad_arguments", "not_found", "not_applicable",
               "not_implemented", "blocked_by_hook")


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returned: `content` when ok, else an `error_type` and a message."""

    ok: bool
    content: dict | str
    error_type: str | None = None

    def message(self) -> dict:
        """The JSON payload a tool message carries."""
        if self.ok:
            return self.content if isinstance(self.content, dict) else {"result": self.content}
        return {"error": self.error_type, "message": self.content}


def failure(error_type: str, message: str) -> ToolResult:
    return ToolResult(ok=False, content=message, error_type=error_type)


@dataclass(frozen=True)
class Param:
    """A canonical parameter: its JSON type, other types accepted, and default."""

    name: str
    type: str
    required: bool = True
    default: Any = None
    alt_types: tuple[str, ...] = ()

    @property
    def types(self) -> tuple[str, ...]:
        return (self.type, *self.alt_types)


@dataclass(frozen=True)
class ToolSpec:
    """A tool implementation: canonical parameters, the function, the reference schema."""

    id: str
    params: tuple[Param, ...]
    run: Callable[[Catalog, dict], ToolResult]
    reference: dict = field(default_factory=lambda: _schema(()))


def _pid() -> Param:
    return Param("product_id", "string")


def _schema(required: tuple[str, ...], **props: dict) -> dict:
    """An object JSON Schema: the reference surface of a tool's parameters."""
    return {"type": "object", "properties": props, "required": list(required)}


def _text(description: str, json_type: str = "string", **more: Any) -> dict:
    return {"type": json_type, **more, "description": description}


_PRODUCT = {"product_id": _text("商品编号")}


def _with_product(fn: Callable[[Catalog, Product, dict], ToolResult]):
    def run(catalog: Catalog, args: dict) -> ToolResult:
        product = catalog.product(args["product_id"])
        if product is None:
            return failure("not_found", f"没有商品 {args['product_id']}")
        return fn(catalog, product, args)
    return run


def _info(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    return ToolResult(True, {"product_id": p.id, "title": p.title, "category": p.category,
                             "attributes": dict(p.attributes), "skus": [s for s, _ in p.stock]})


def _search(catalog: Catalog, args: dict) -> ToolResult:
    keyword, cap = args["keyword"], args.get("max_price")
    hits = [{"product_id": p.id, "title": p.title, "promo_price": p.promo_price}
            for p in catalog.products
            if (keyword in p.title or keyword == p.category)
            and (cap is None or p.promo_price <= cap)]
    return ToolResult(True, {"results": hits[:5]})


def recommend_size(height_cm: int, weight_kg: float) -> str:
    """The size for a height and weight: the larger of the two tables' answers."""
    by_height = 0 if height_cm < 160 else 1 if height_cm < 170 else 2 if height_cm < 178 else 3
    by_weight = 0 if weight_kg < 50 else 1 if weight_kg < 60 else 2 if weight_kg < 72 else 3
    return ("S", "M", "L", "XL")[max(by_height, by_weight)]


def _size(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    if not p.sized:
        return failure("not_applicable", f"{p.title} 不区分尺码")
    size = recommend_size(args["height_cm"], args["weight_kg"])
    reason = f"身高{args['height_cm']}cm、体重{fmt_num(args['weight_kg'])}kg"
    return ToolResult(True, {"product_id": p.id, "size": size, "reason": reason})


def _price(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    return ToolResult(True, {"product_id": p.id, "price": p.price, "promo_price": p.promo_price})


def _coupons(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    return ToolResult(True, {"product_id": p.id, "coupons": [
        {"coupon_id": c.id, "title": c.title, "amount": c.amount, "threshold": c.threshold}
        for c in p.coupons], "rule": "每单限用一张券"})


def _calc(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    quantity = args.get("quantity") or 1
    ids = args.get("coupon_ids") or []
    known = {c.id: c for c in p.coupons}
    unknown = [i for i in ids if i not in known]
    if unknown:
        return failure("not_found", f"优惠券 {'、'.join(unknown)} 不适用于 {p.id}")
    total = round(p.promo_price * quantity, 2)
    usable = [known[i] for i in ids if known[i].threshold <= total]
    coupon = max(usable, key=lambda c: (c.amount, c.id), default=None)
    discount = coupon.amount if coupon else 0.0
    return ToolResult(True, {"product_id": p.id, "quantity": quantity, "total": total,
                             "coupon_id": coupon.id if coupon else None, "discount": discount,
                             "final": round(total - discount, 2)})


def _stock(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    sku = args.get("sku")
    stock = dict(p.stock)
    if sku is None:
        return ToolResult(True, {"product_id": p.id, "stock": stock})
    if sku not in stock:
        return failure("not_found", f"{p.id} 没有规格 {sku}；可选：{'、'.join(stock)}")
    return ToolResult(True, {"product_id": p.id, "stock": {sku: stock[sku]}})


def _shipping(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    region = REGION_OF_CITY.get(args["city"])
    if region is None:
        return failure("not_found", f"暂不支持配送到 {args['city']}")
    return ToolResult(True, {"product_id": p.id, "ship_from": p.ship_from,
                             "dispatch_hours": p.dispatch_hours, "city": args["city"],
                             "days": dict(p.days_by_region)[region]})


def _returns(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    r = p.returns
    return ToolResult(True, {"product_id": p.id, "seven_day_return": r.seven_day,
                             "shipping_insurance": r.insurance, "note": r.note})


def _bundles(catalog: Catalog, p: Product, args: dict) -> ToolResult:
    return ToolResult(True, {"product_id": p.id, "offers": [
        o.to_dict() for o in bundle_offers(catalog, p)]})


def _promotions(catalog: Catalog, args: dict) -> ToolResult:
    return ToolResult(True, {"promotions": [
        {"name": x.name, "time": x.time, "rule": x.rule} for x in catalog.promotions]})


def _order(catalog: Catalog, args: dict) -> ToolResult:
    order = catalog.order(args["order_id"])
    if order is None:
        return failure("not_found", f"没有订单 {args['order_id']}")
    return ToolResult(True, {"order_id": order.id, "status": order.status,
                             "tracking": order.tracking, "issue": order.issue})


def ticket_id(reason: str, order_id: str | None) -> str:
    """The deterministic ticket number of a handoff."""
    key = f"{order_id or '-'}|{reason}".encode()
    return f"T{zlib.crc32(key) % 1_000_000:06d}"


def _handoff(catalog: Catalog, args: dict) -> ToolResult:
    order_id = args.get("order_id")
    return ToolResult(True, {"ticket_id": ticket_id(args["reason"], order_id),
                             "order_id": order_id, "status": "已转人工"})


TOOLS: dict[str, ToolSpec] = {spec.id: spec for spec in (
    ToolSpec("product.info", (_pid(),), _with_product(_info),
             _schema(("product_id",), product_id=_text("商品编号，如 P1001"))),
    ToolSpec("product.search", (Param("keyword", "string"),
                                Param("max_price", "number", False, None, ("integer",))), _search,
             _schema(("keyword",), keyword=_text("搜索关键词"),
                     max_price=_text("价格上限（元），可选", "number"))),
    ToolSpec("size.recommend", (_pid(), Param("height_cm", "integer", alt_types=("number",)),
                                Param("weight_kg", "number", alt_types=("integer",))),
             _with_product(_size),
             _schema(("product_id", "height_cm", "weight_kg"), **_PRODUCT,
                     height_cm=_text("身高（厘米）", "integer"),
                     weight_kg=_text("体重（公斤）", "number"))),
    ToolSpec("product.price", (_pid(),), _with_product(_price),
             _schema(("product_id",), **_PRODUCT)),
    ToolSpec("coupon.list", (_pid(),), _with_product(_coupons),
             _schema(("product_id",), **_PRODUCT)),
    ToolSpec("price.calc", (_pid(), Param("quantity", "integer", False, 1),
                            Param("coupon_ids", "array", False, (), ("string",))),
             _with_product(_calc),
             _schema(("product_id", "quantity"), **_PRODUCT,
                     quantity=_text("购买件数", "integer", minimum=1),
                     coupon_ids=_text("使用的优惠券编号列表", "array", items={"type": "string"}))),
    ToolSpec("stock.check", (_pid(), Param("sku", "string", False)), _with_product(_stock),
             _schema(("product_id",), **_PRODUCT, sku=_text('规格，如"黑色/M"，可选'))),
    ToolSpec("shipping.estimate", (_pid(), Param("city", "string")), _with_product(_shipping),
             _schema(("product_id", "city"), **_PRODUCT, city=_text('收货城市，如"杭州"'))),
    ToolSpec("returns.policy", (_pid(),), _with_product(_returns),
             _schema(("product_id",), **_PRODUCT)),
    ToolSpec("bundle.offers", (_pid(),), _with_product(_bundles),
             _schema(("product_id",), **_PRODUCT)),
    ToolSpec("live.promotions", (), _promotions),
    ToolSpec("order.status", (Param("order_id", "string"),), _order,
             _schema(("order_id",), order_id=_text("订单号"))),
    ToolSpec("handoff.human", (Param("reason", "string"), Param("order_id", "string", False)),
             _handoff,
             _schema(("reason",), reason=_text("转人工原因"), order_id=_text("相关订单号，可选"))),
)}

_PY_TYPES = {"string": (str,), "integer": (int,), "number": (int, float),
             "array": (list, tuple), "boolean": (bool,)}
_SPLIT = re.compile(r"[,，、\s]+")


def coerce(param: Param, value: Any) -> tuple[bool, Any]:
    """A value in the canonical type (a coupon string becomes a one-element list)."""
    if param.type == "array" and isinstance(value, str):
        return True, [v for v in _SPLIT.split(value) if v]
    if param.type == "integer" and isinstance(value, float) and value.is_integer():
        return True, int(value)
    if isinstance(value, bool) and param.type != "boolean":
        return False, value
    ok = isinstance(value, _PY_TYPES.get(param.type, (object,)))
    return ok, list(value) if ok and param.type == "array" else value


def execute(catalog: Catalog, tool_id: str, args: dict) -> ToolResult:
    """Run tool `tool_id` on canonical `args`; missing optional args take their default."""
    spec = TOOLS.get(tool_id)
    if spec is None:
        return failure("not_implemented", f"工具 {tool_id} 在模拟器中没有实现")
    clean = {}
    for param in spec.params:
        if param.name not in args or args[param.name] is None:
            if param.required:
                return failure("bad_arguments", f"缺少参数 {param.name}")
            clean[param.name] = param.default
            continue
        ok, value = coerce(param, args[param.name])
        if not ok:
            return failure("bad_arguments", f"参数 {param.name} 应为 {param.type}")
        clean[param.name] = value
    return spec.run(catalog, clean)
