"""Writes generated.sql: star and snowflake queries from templates, seeded, over schema.py's tables.

Ten shapes (comma joins with the equalities in WHERE, explicit JOINs, the issue's aggregated derived table comma-
joined to a dimension, CTEs used once and twice, LEFT joins, UNION ALL branches under a join, correlated EXISTS,
windows, top-N with HAVING), each over a randomly chosen fact table, dimensions, filters and grouping columns.

    python -m tests.corpus.generate      # rewrites tests/corpus/generated.sql
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).parent

FACTS = {
    "store_sales": {
        "p": "ss", "date": "ss_sold_date_sk", "item": "ss_item_sk", "cust": "ss_customer_sk", "addr": "ss_addr_sk",
        "promo": "ss_promo_sk", "qty": "ss_quantity", "price": "ss_sales_price", "ext": "ss_ext_sales_price",
        "profit": "ss_net_profit", "own": ("store", "ss_store_sk", "s_store_sk"),
    },
    "web_sales": {
        "p": "ws", "date": "ws_sold_date_sk", "item": "ws_item_sk", "cust": "ws_bill_customer_sk",
        "addr": "ws_bill_addr_sk", "promo": "ws_promo_sk", "qty": "ws_quantity", "price": "ws_sales_price",
        "ext": "ws_ext_sales_price", "profit": "ws_net_profit", "own": ("web_site", "ws_web_site_sk", "web_site_sk"),
    },
    "catalog_sales": {
        "p": "cs", "date": "cs_sold_date_sk", "item": "cs_item_sk", "cust": "cs_bill_customer_sk",
        "addr": "cs_bill_addr_sk", "promo": "cs_promo_sk", "qty": "cs_quantity", "price": "cs_sales_price",
        "ext": "cs_ext_sales_price", "profit": "cs_net_profit",
        "own": ("household_demographics", "cs_bill_hdemo_sk", "hd_demo_sk"),
    },
}  # fmt: skip
#: dimension -> (fact key role, dimension key)
DIM_KEYS = {
    "date_dim": ("date", "d_date_sk"),
    "item": ("item", "i_item_sk"),
    "customer": ("cust", "c_customer_sk"),
    "customer_address": ("addr", "ca_address_sk"),
    "promotion": ("promo", "p_promo_sk"),
}
FILTERS = {
    "date_dim": ["d_year = 2000", "d_moy = 11", "d_year = 2001 AND d_qoy = 3", "d_year IN (1999, 2000)",
                 "d_date BETWEEN DATE '2000-01-01' AND DATE '2000-01-31'", "d_day_name = 'Saturday'",
                 "d_year = 2002 AND d_dom <= 7", "d_holiday = 'Y'"],
    "item": ["i_category = 'Books'", "i_color IN ('red', 'blue', 'navy')", "i_current_price > 50",
             "i_manufact_id BETWEEN 10 AND 20", "i_brand LIKE 'brand#1%'", "i_size = 'petite'",
             "i_category IN ('Men', 'Women') AND i_class = 'shirts'"],
    "customer": ["c_birth_year < 1960", "c_preferred_cust_flag = 'Y'", "c_birth_country = 'JAPAN'",
                 "c_last_name LIKE 'M%'"],
    "customer_address": ["ca_state = 'TX'", "ca_gmt_offset = -6", "ca_city IN ('Salem', 'Oakland')",
                         "ca_location_type = 'condo'"],
    "promotion": ["p_channel_tv = 'N'", "p_channel_email = 'Y' AND p_channel_event = 'N'"],
    "store": ["s_state = 'TN'", "s_number_employees BETWEEN 210 AND 260", "s_market_id > 6"],
    "web_site": ["web_company_name = 'able'", "web_site_sk < 10"],
    "household_demographics": ["hd_dep_count = 4", "hd_buy_potential = '1001-5000'", "hd_vehicle_count > 2"],
}  # fmt: skip
GROUPS = {
    "date_dim": ["d_year", "d_moy", "d_qoy"],
    "item": ["i_category", "i_brand", "i_class"],
    "customer": ["c_birth_country", "c_preferred_cust_flag"],
    "customer_address": ["ca_state", "ca_city"],
    "promotion": ["p_promo_name"],
    "store": ["s_store_name", "s_city"],
    "web_site": ["web_name"],
    "household_demographics": ["hd_buy_potential"],
}
FACT_FILTERS = ["{qty} > 20", "{price} BETWEEN 50 AND 150", "{profit} < 0", "{qty} IS NOT NULL", "{ext} > 1000"]


def _dims(rng: random.Random, fact: dict, n: int) -> list[tuple[str, str, str]]:
    """``n`` dimensions of the fact (date_dim always first): (table, fact column, dimension key)."""
    own = fact["own"]
    pool = [(d, fact[role], key) for d, (role, key) in DIM_KEYS.items() if d != "date_dim"] + [own]
    rng.shuffle(pool)
    return [("date_dim", fact["date"], "d_date_sk")] + pool[: n - 1]


def _filters(rng: random.Random, dims: list[tuple[str, str, str]], fact: dict, k: int) -> list[str]:
    out = [rng.choice(FILTERS[d]) for d, _, _ in dims if rng.random() < 0.8] or [rng.choice(FILTERS[dims[0][0]])]
    if rng.random() < 0.5:
        out.append(rng.choice(FACT_FILTERS).format(**fact))
    return out[: max(k, 1)]


def comma(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    dims = _dims(rng, fact, rng.randint(2, 4))
    groups = [rng.choice(GROUPS[d]) for d, _, _ in dims[1:]][:2]
    where = [f"{fc} = {dk}" for _, fc, dk in dims] + _filters(rng, dims, fact, 4)
    rng.shuffle(where)
    g = ", ".join(dict.fromkeys(groups))
    return (
        f"SELECT {g}, sum({fact['ext']}) AS sales, count(*) AS cnt\nFROM {name}, "
        + ", ".join(d for d, _, _ in dims)
        + "\nWHERE "
        + "\n  AND ".join(where)
        + f"\nGROUP BY {g}\nORDER BY sales DESC, {g}\nLIMIT 100"
    )


def explicit(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    dims = _dims(rng, fact, rng.randint(2, 4))
    joins = "\n".join(f"JOIN {d} ON f.{fc} = {d}.{dk}" for d, fc, dk in dims)
    where = [f.replace(fact["p"] + "_", "f." + fact["p"] + "_") for f in _filters(rng, dims, fact, 3)]
    g = dims[-1][0] + "." + rng.choice(GROUPS[dims[-1][0]])
    return (
        f"SELECT {g}, avg(f.{fact['qty']}) AS avg_qty, sum(f.{fact['profit']}) AS profit\nFROM {name} f\n{joins}\n"
        f"WHERE " + " AND ".join(where) + f"\nGROUP BY {g}\nORDER BY {g}"
    )


def derived_comma(rng: random.Random, i: int) -> str:
    """The issue's shape: an aggregated derived table comma-joined to a dimension, the equality in WHERE."""
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    outer, role, key = rng.choice([("customer", "cust", "c_customer_sk"), ("item", "item", "i_item_sk")])
    col = fact[role]
    inner_filter = rng.choice(FILTERS["date_dim"])
    outer_filter = rng.choice(FILTERS[outer])
    extra = f" AND ms.amt > {rng.choice([0, 10, 100])}" if rng.random() < 0.5 else ""
    label = rng.choice(GROUPS[outer])
    return (
        f"SELECT {label}, ms.{col}, ms.amt, ms.profit\n"
        f"FROM (SELECT {col}, sum({fact['ext']}) amt, sum({fact['profit']}) profit\n"
        f"      FROM {name}, date_dim\n      WHERE {fact['date']} = d_date_sk AND {inner_filter}\n"
        f"      GROUP BY {col}) ms, {outer}\n"
        f"WHERE ms.{col} = {outer}.{key} AND {outer_filter}{extra}\n"
        f"ORDER BY ms.amt DESC, ms.{col}\nLIMIT 100"
    )


def cte_once(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    dim, role, key = rng.choice([("item", "item", "i_item_sk"), ("customer_address", "addr", "ca_address_sk")])
    return (
        f"WITH recent AS (\n  SELECT {fact[role]} AS k, {fact['qty']} AS qty, {fact['ext']} AS ext\n"
        f"  FROM {name} JOIN date_dim ON {fact['date']} = d_date_sk\n  WHERE {rng.choice(FILTERS['date_dim'])}\n)\n"
        f"SELECT {rng.choice(GROUPS[dim])} AS grp, sum(ext) AS ext, max(qty) AS max_qty\n"
        f"FROM recent, {dim}\nWHERE recent.k = {key} AND {rng.choice(FILTERS[dim])}\nGROUP BY 1\nORDER BY 1"
    )


def cte_twice(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    role = rng.choice(["item", "cust"])
    y1 = rng.choice([1998, 1999, 2000, 2001])
    return (
        f"WITH yearly AS (\n  SELECT {fact[role]} AS k, d_year AS yr, sum({fact['profit']}) AS total\n"
        f"  FROM {name}, date_dim\n  WHERE {fact['date']} = d_date_sk\n  GROUP BY {fact[role]}, d_year\n)\n"
        f"SELECT a.k, a.total AS first_total, b.total AS second_total\nFROM yearly a, yearly b\n"
        f"WHERE a.k = b.k AND a.yr = {y1} AND b.yr = {y1 + 1} AND b.total > a.total"
        f"{' AND a.total > 0' if rng.random() < 0.5 else ''}\nORDER BY a.k\nLIMIT 100"
    )


def left_join(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    dim, role, key = rng.choice([("promotion", "promo", "p_promo_sk"), ("customer", "cust", "c_customer_sk")])
    on_extra = f" AND {rng.choice(FILTERS[dim])}" if rng.random() < 0.5 else ""
    where = [rng.choice(FILTERS["date_dim"])]
    if rng.random() < 0.5:
        where.append(rng.choice(FACT_FILTERS).format(**fact))
    return (
        f"SELECT d_year, {rng.choice(GROUPS[dim])} AS grp, count(*) AS n, sum({fact['profit']}) AS profit\n"
        f"FROM {name} JOIN date_dim ON {fact['date']} = d_date_sk\n"
        f"LEFT JOIN {dim} ON {fact[role]} = {key}{on_extra}\nWHERE "
        + " AND ".join(where)
        + "\nGROUP BY 1, 2\nORDER BY 1, 2"
    )


def union_branches(rng: random.Random, i: int) -> str:
    a, b = rng.sample(list(FACTS), 2)
    fa, fb = FACTS[a], FACTS[b]
    bf = (
        f" WHERE {rng.choice(FACT_FILTERS).format(**fa)}" if rng.random() < 0.5 else "",
        f" WHERE {rng.choice(FACT_FILTERS).format(**fb)}" if rng.random() < 0.5 else "",
    )
    outer = rng.choice(["i_item_sk", "d_date_sk"])
    dimf = rng.choice(FILTERS["item" if outer == "i_item_sk" else "date_dim"])
    direct = rng.choice(["u.qty > 30", "u.sold_date BETWEEN 2451545 AND 2451910", "u.item < 1000", "u.qty IS NOT NULL"])
    dim, col = ("item", "u.item") if outer == "i_item_sk" else ("date_dim", "u.sold_date")
    return (
        f"SELECT u.channel, count(*) AS n, sum(u.amount) AS amount\nFROM (\n"
        f"  SELECT '{fa['p']}' AS channel, {fa['date']} AS sold_date, {fa['item']} AS item, {fa['qty']} AS qty, "
        f"{fa['ext']} AS amount FROM {a}{bf[0]}\n  UNION ALL\n"
        f"  SELECT '{fb['p']}', {fb['date']}, {fb['item']}, {fb['qty']}, {fb['ext']} FROM {b}{bf[1]}\n) u, {dim}\n"
        f"WHERE {col} = {outer} AND {dimf} AND {direct}\nGROUP BY u.channel\nORDER BY u.channel"
    )


def exists(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    neg = "NOT " if rng.random() < 0.3 else ""
    return (
        f"SELECT c_customer_id, c_last_name\nFROM customer, customer_address\n"
        f"WHERE c_current_addr_sk = ca_address_sk AND {rng.choice(FILTERS['customer_address'])}\n"
        f"  AND {neg}EXISTS (SELECT 1 FROM {name}, date_dim WHERE {fact['cust']} = c_customer_sk\n"
        f"              AND {fact['date']} = d_date_sk AND {rng.choice(FILTERS['date_dim'])})\n"
        f"ORDER BY c_customer_id\nLIMIT 100"
    )


def window(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    part = rng.choice(["i_category", "i_class"])
    where_outer = rng.choice(
        [f"{part} = 'Books'", "rn <= 5", f"{part} IN ('Music', 'Sports') AND rn <= 10", "d_moy BETWEEN 1 AND 3"]
    )
    return (
        f"SELECT * FROM (\n  SELECT {part}, d_moy, sum({fact['ext']}) AS sales,\n"
        f"         row_number() OVER (PARTITION BY {part} ORDER BY sum({fact['ext']}) DESC, d_moy) AS rn\n"
        f"  FROM {name}, item, date_dim\n  WHERE {fact['item']} = i_item_sk AND {fact['date']} = d_date_sk "
        f"AND {rng.choice(FILTERS['date_dim'])}\n  GROUP BY {part}, d_moy\n) w\nWHERE {where_outer}\n"
        f"ORDER BY {part}, rn"
    )


def top_n_having(rng: random.Random, i: int) -> str:
    name = rng.choice(list(FACTS))
    fact = FACTS[name]
    dims = _dims(rng, fact, 3)
    g = rng.choice(GROUPS[dims[2][0]])
    where = [f"{fc} = {dk}" for _, fc, dk in dims] + _filters(rng, dims, fact, 3)
    return (
        f"SELECT {g}, count(DISTINCT {fact['cust']}) AS customers, sum({fact['qty']}) AS qty\n"
        f"FROM {name}, {', '.join(d for d, _, _ in dims)}\nWHERE "
        + " AND ".join(where)
        + f"\nGROUP BY {g}\nHAVING sum({fact['qty']}) > {rng.choice([0, 10, 100])}\n"
        f"ORDER BY customers DESC, {g}\nLIMIT {rng.choice([5, 10, 20])}"
    )


SHAPES = [comma, explicit, derived_comma, cte_once, cte_twice, left_join, union_branches, exists, window, top_n_having]


def generate(per_shape: int = 6, seed: int = 2026) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for shape in SHAPES:
        for i in range(per_shape):
            out.append((f"g_{shape.__name__}_{i + 1:02d}", shape(rng, i)))
    return out


def main() -> None:
    lines = ["-- Generated by tests/corpus/generate.py (python -m tests.corpus.generate); do not edit by hand.", ""]
    for name, sql in generate():
        lines += [f"-- name: {name}", sql, ""]
    (HERE / "generated.sql").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
