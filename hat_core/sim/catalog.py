"""The shop the simulator sells from: products, orders and live-stream promotions.

`generate_catalog(rng, size=24)` builds a seeded, Chinese-language catalog: each product has a
title, category, attributes, price and promotional price, SKUs with stock, coupons with
thresholds (one coupon per order), a warehouse with dispatch time and delivery days by region,
and a return policy. The same `rng` state gives the same catalog.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

REGION_OF_CITY = {
    "杭州": "华东", "上海": "华东", "南京": "华东", "苏州": "华东", "北京": "华北", "天津": "华北",
    "广州": "华南", "深圳": "华南", "成都": "西南", "重庆": "西南", "武汉": "华中",
    "长沙": "华中", "西安": "西北", "沈阳": "东北", "哈尔滨": "东北", "乌鲁木齐": "偏远",
    "拉萨": "偏远",
}
REGIONS = ("华东", "华北", "华南", "华中", "西南", "西北", "东北", "偏远")
WAREHOUSES = ("杭州", "广州", "成都", "北京")
SIZES = ("S", "M", "L", "XL", "XXL")
BRANDS = ("星选", "云朵", "山野", "暖阳", "青禾", "拾光", "素简", "木森")


@dataclass(frozen=True)
class CategorySpec:
    """How products of one category are made up."""

    name: str
    items: tuple[str, ...]
    key: str  # the attribute the product-fact scenarios ask about
    values: tuple[str, ...]
    variants: tuple[str, ...]
    price: tuple[int, int]
    sized: bool = False
    seven_day: bool = True


CATEGORIES = (
    CategorySpec("服饰", ("羽绒服", "卫衣", "连衣裙", "牛仔裤", "衬衫", "针织开衫"), "面料",
                 ("纯棉", "聚酯纤维", "羊毛混纺", "白鸭绒", "真丝", "亚麻"),
                 ("黑色", "白色", "灰色", "藏青", "杏色"), (79, 699), sized=True),
    CategorySpec("美妆", ("保湿面霜", "精华液", "口红", "防晒霜", "洁面乳"), "核心成分",
                 ("玻尿酸", "烟酰胺", "神经酰胺", "维生素C", "积雪草"),
                 ("30ml", "50ml", "100ml"), (59, 399)),
    CategorySpec("食品", ("坚果礼盒", "牛肉干", "燕麦片", "挂耳咖啡", "蜂蜜"), "产地",
                 ("云南", "新疆", "内蒙古", "浙江", "四川"),
                 ("500g", "1kg", "10袋装"), (29, 199), seven_day=False),
    CategorySpec("家居", ("四件套", "乳胶枕", "收纳箱", "保温杯", "香薰蜡烛"), "材质",
                 ("纯棉", "天然乳胶", "PP塑料", "316不锈钢", "大豆蜡"),
                 ("标准款", "加大款"), (39, 499)),
    CategorySpec("数码", ("蓝牙耳机", "充电宝", "智能手表", "机械键盘"), "续航",
                 ("8小时", "24小时", "3天", "7天"), ("黑色", "白色"), (99, 899)),
)
CATEGORY_BY_NAME = {c.name: c for c in CATEGORIES}


@dataclass(frozen=True)
class Coupon:
    """A coupon: `amount` yuan off once the order total reaches `threshold`."""

    id: str
    amount: float
    threshold: float

    @property
    def title(self) -> str:
        return f"满{fmt_num(self.threshold)}减{fmt_num(self.amount)}"


@dataclass(frozen=True)
class ReturnPolicy:
    seven_day: bool
    insurance: bool
    note: str


@dataclass(frozen=True)
class Product:
    id: str
    title: str
    category: str
    item: str
    attributes: tuple[tuple[str, str], ...]
    price: float
    promo_price: float
    stock: tuple[tuple[str, int], ...]  # (sku, units)
    coupons: tuple[Coupon, ...]
    ship_from: str
    dispatch_hours: int
    days_by_region: tuple[tuple[str, int], ...]
    returns: ReturnPolicy

    @property
    def key_attribute(self) -> tuple[str, str]:
        return self.attributes[0]

    @property
    def sized(self) -> bool:
        return CATEGORY_BY_NAME[self.category].sized


@dataclass(frozen=True)
class Order:
    id: str
    product_id: str
    status: str
    tracking: str
    issue: str


@dataclass(frozen=True)
class Promotion:
    name: str
    time: str
    rule: str


@dataclass(frozen=True)
class Catalog:
    products: tuple[Product, ...]
    orders: tuple[Order, ...]
    promotions: tuple[Promotion, ...]
    _products: dict = field(default_factory=dict, compare=False, repr=False)
    _orders: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._products.update((p.id, p) for p in self.products)
        self._orders.update((o.id, o) for o in self.orders)

    def product(self, product_id: str) -> Product | None:
        return self._products.get(product_id)

    def order(self, order_id: str) -> Order | None:
        return self._orders.get(order_id)


def fmt_num(x: float) -> str:
    """A money or quantity amount as people write it: 199, 89.9, 12.35."""
    x = round(float(x), 2)
    if x.is_integer():
        return str(int(x))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def generate_catalog(rng: random.Random, size: int = 24) -> Catalog:
    """A seeded catalog of `size` products, about size/3 orders and the current promotions."""
    products = tuple(_product(rng, 1001 + i) for i in range(size))
    orders = tuple(_order(rng, i, products) for i in range(max(4, size // 3)))
    return Catalog(products=products, orders=orders, promotions=_promotions(rng, products))


def seeded_catalog(seed: int | str, size: int = 24) -> Catalog:
    """The catalog a fresh `random.Random(seed)` draws first: the shop of every world
    (`sim.batch.world`, `evaluation.cases.eval_world`) that starts from that seed."""
    return generate_catalog(random.Random(seed), size=size)


def _product(rng: random.Random, number: int) -> Product:
    spec = rng.choice(CATEGORIES)
    item = rng.choice(spec.items)
    value = rng.choice(spec.values)
    price = float(rng.randrange(spec.price[0], spec.price[1]) // 10 * 10 + 9)
    promo = round(price * rng.choice((0.6, 0.7, 0.75, 0.8, 0.85)), 1)
    return Product(
        id=f"P{number}",
        title=f"{rng.choice(BRANDS)}{value if spec.key != '续航' else ''}{item}",
        category=spec.name,
        item=item,
        attributes=((spec.key, value), ("产地" if spec.key != "产地" else "保质期",
                                        rng.choice(("浙江", "广东", "江苏", "福建"))
                                        if spec.key != "产地" else "12个月")),
        price=price,
        promo_price=promo,
        stock=_stock(rng, spec),
        coupons=_coupons(rng, number, promo),
        ship_from=rng.choice(WAREHOUSES),
        dispatch_hours=rng.choice((24, 48, 72)),
        days_by_region=tuple((r, rng.randint(5, 7) if r == "偏远" else rng.randint(1, 4))
                             for r in REGIONS),
        returns=_returns(rng, spec),
    )


def _stock(rng: random.Random, spec: CategorySpec) -> tuple[tuple[str, int], ...]:
    variants = rng.sample(spec.variants, k=min(2, len(spec.variants)))
    if spec.sized:
        skus = [f"{v}/{s}" for v in variants for s in SIZES[:4]]
    else:
        skus = list(variants)
    return tuple((sku, rng.choice((0, 3, 8, 15, 26, 40, 120))) for sku in skus)


def _coupons(rng: random.Random, number: int, promo: float) -> tuple[Coupon, ...]:
    out = []
    for k in range(rng.randint(1, 3)):
        threshold = float(max(0, int(promo * rng.choice((0, 0.9, 1.5, 2.5))) // 10 * 10))
        amount = float(max(3, int(max(promo, threshold) * rng.choice((0.05, 0.1, 0.15)))))
        out.append(Coupon(id=f"C{number}{k + 1}", amount=amount, threshold=threshold))
    return tuple(out)


def _returns(rng: random.Random, spec: CategorySpec) -> ReturnPolicy:
    if not spec.seven_day:
        return ReturnPolicy(False, rng.random() < 0.3, "食品类商品拆封后不支持退换，质量问题包退")
    note = rng.choice(("吊牌完好可退换", "不影响二次销售即可退换", "质量问题运费由商家承担"))
    return ReturnPolicy(True, rng.random() < 0.7, note)


def _order(rng: random.Random, i: int, products: tuple[Product, ...]) -> Order:
    status, issue = rng.choice((
        ("已付款未发货", "超过承诺发货时间仍未发货"),
        ("运输中", "物流信息三天未更新"),
        ("已签收", "观众反馈未收到包裹"),
        ("支付异常", "同一订单重复扣款"),
    ))
    return Order(id=f"O2026{rng.randint(100000, 999999)}{i}", product_id=rng.choice(products).id,
                 status=status, tracking=f"SF{rng.randint(10**9, 10**10 - 1)}", issue=issue)


def _promotions(rng: random.Random, products: tuple[Product, ...]) -> tuple[Promotion, ...]:
    hour = rng.randint(19, 22)
    return (
        Promotion("整点秒杀", f"{hour}:00", f"{rng.choice(products).id}限量秒杀"),
        Promotion("福袋抽奖", "每30分钟", "关注并发弹幕参与"),
        Promotion("满减活动", "全场",
                  f"满{rng.choice((199, 299, 399))}减{rng.choice((20, 30, 50))}"),
    )


def best_coupon(product: Product, total: float) -> Coupon | None:
    """The coupon that saves most on `total` (one coupon per order), or None."""
    usable = [c for c in product.coupons if c.threshold <= total]
    return max(usable, key=lambda c: (c.amount, c.id), default=None)
