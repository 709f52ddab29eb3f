"""Harness variants the simulator tests build from v1 by editing its data."""

from __future__ import annotations

import copy

from hat_core.harness.io import harness_from_data
from hat_core.harness.model import Harness

# The renamed variant: every tool and skill renamed, get_price's product_id -> item_id,
# check_stock's params -> goods_code / spec.
RENAME_MAP = {"product.price": {"item_id": "product_id"},
              "stock.check": {"goods_code": "product_id", "spec": "sku"}}


def edit(harness: Harness, fn) -> Harness:
    """A harness rebuilt from an edited copy of its data."""
    data = copy.deepcopy(harness.model_dump(mode="json"))
    fn(data)
    return harness_from_data(data)


def _rename_data(data: dict) -> None:
    for tool in data["tools"]:
        tool["name"] = "shop_" + tool["name"].replace("get_", "fetch_")
        props = tool["parameters"]["properties"]
        if tool["id"] == "product.price":
            props["item_id"] = props.pop("product_id")
            tool["parameters"]["required"] = ["item_id"]
        if tool["id"] == "stock.check":
            props["goods_code"] = props.pop("product_id")
            props["spec"] = props.pop("sku")
            tool["parameters"]["required"] = ["goods_code"]
    for skill in data["skills"]:
        skill["name"] = "skill_" + skill["name"]


def rename(harness: Harness) -> Harness:
    """Every tool and skill renamed; get_price's and check_stock's parameters renamed."""
    return edit(harness, _rename_data)
