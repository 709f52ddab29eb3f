"""Bundle (combo) offers: which other products sell together with a product, and at what price.

    offers = bundle_offers(catalog, catalog.products[0])  # best saving first
    offers[0].partner_title, offers[0].bundle_price, offers[0].saving

Offers are a pure function of the catalog: each product's offers come from their own
`random.Random` seeded by the product (id, title, promo price), never from the catalog's
stream, so adding bundles left every catalog, scenario bank and dataset of a harness without
the `bundle.offers` tool byte-identical. A product gets one or two partners (other products
of the catalog) at 80-90% of the two promo prices together; a catalog of one product has no
offers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hat_core.sim.catalog import Catalog, Product

DISCOUNTS = (0.8, 0.85, 0.9)


@dataclass(frozen=True)
class BundleOffer:
    """Buy `product_id` with `partner_id` for `bundle_price` yuan (`saving` off both promo
    prices)."""

    id: str
    product_id: str
    partner_id: str
    partner_title: str
    bundle_price: float
    saving: float

    def to_dict(self) -> dict:
        return {"bundle_id": self.id, "partner_id": self.partner_id,
                "partner_title": self.partner_title, "bundle_price": self.bundle_price,
                "saving": self.saving}


def bundle_offers(catalog: Catalog, product: Product) -> tuple[BundleOffer, ...]:
    """The product's bundle offers, largest saving first (see the module docstring)."""
    rng = random.Random(f"bundle:{product.id}:{product.title}:{product.promo_price}")
    others = [p for p in catalog.products if p.id != product.id]
    partners = rng.sample(others, k=min(rng.randint(1, 2), len(others)))
    offers = [_offer(product, partner, rng.choice(DISCOUNTS), k)
              for k, partner in enumerate(partners)]
    return tuple(sorted(offers, key=lambda o: (-o.saving, o.id)))


def _offer(product: Product, partner: Product, discount: float, k: int) -> BundleOffer:
    together = product.promo_price + partner.promo_price
    price = round(together * discount, 1)
    return BundleOffer(id=f"B{product.id[1:]}{k + 1}", product_id=product.id,
                       partner_id=partner.id, partner_title=partner.title,
                       bundle_price=price, saving=round(together - price, 2))
