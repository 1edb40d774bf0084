"""The corpus's TPC-DS-like star/snowflake schema, defined once: columns and types, the fact tables' partition
column, nominal statistics (fact tables in millions of rows, dimensions in thousands) and a seeded data generator
(NULLs, duplicates, skew) for DuckDB and the timed Spark run.

Surrogate date keys follow TPC-DS: ``d_date_sk = 2415022`` is 1900-01-02, so 1998-01-01 is 2450815.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

#: table -> [(column, Spark type)]; a partitioned table's partition column comes last (Spark puts it there)
TABLES: dict[str, list[tuple[str, str]]] = {
    "date_dim": [
        ("d_date_sk", "int"), ("d_date", "date"), ("d_year", "int"), ("d_moy", "int"), ("d_dom", "int"),
        ("d_qoy", "int"), ("d_week_seq", "int"), ("d_day_name", "string"), ("d_holiday", "string"),
    ],
    "item": [
        ("i_item_sk", "int"), ("i_item_id", "string"), ("i_brand_id", "int"), ("i_brand", "string"),
        ("i_class", "string"), ("i_category", "string"), ("i_manufact_id", "int"),
        ("i_current_price", "decimal(7,2)"), ("i_color", "string"), ("i_size", "string"),
        ("i_product_name", "string"),
    ],
    "customer": [
        ("c_customer_sk", "int"), ("c_customer_id", "string"), ("c_current_cdemo_sk", "int"),
        ("c_current_hdemo_sk", "int"), ("c_current_addr_sk", "int"), ("c_first_name", "string"),
        ("c_last_name", "string"), ("c_preferred_cust_flag", "string"), ("c_birth_year", "int"),
        ("c_birth_country", "string"), ("c_email_address", "string"),
    ],
    "customer_address": [
        ("ca_address_sk", "int"), ("ca_street_name", "string"), ("ca_city", "string"), ("ca_county", "string"),
        ("ca_state", "string"), ("ca_zip", "string"), ("ca_country", "string"), ("ca_gmt_offset", "decimal(5,2)"),
        ("ca_location_type", "string"),
    ],
    "customer_demographics": [
        ("cd_demo_sk", "int"), ("cd_gender", "string"), ("cd_marital_status", "string"),
        ("cd_education_status", "string"), ("cd_purchase_estimate", "int"), ("cd_credit_rating", "string"),
        ("cd_dep_count", "int"),
    ],
    "household_demographics": [
        ("hd_demo_sk", "int"), ("hd_income_band_sk", "int"), ("hd_buy_potential", "string"),
        ("hd_dep_count", "int"), ("hd_vehicle_count", "int"),
    ],
    "income_band": [("ib_income_band_sk", "int"), ("ib_lower_bound", "int"), ("ib_upper_bound", "int")],
    "store": [
        ("s_store_sk", "int"), ("s_store_id", "string"), ("s_store_name", "string"), ("s_number_employees", "int"),
        ("s_city", "string"), ("s_county", "string"), ("s_state", "string"), ("s_zip", "string"),
        ("s_market_id", "int"), ("s_gmt_offset", "decimal(5,2)"),
    ],
    "promotion": [
        ("p_promo_sk", "int"), ("p_promo_id", "string"), ("p_promo_name", "string"), ("p_channel_email", "string"),
        ("p_channel_tv", "string"), ("p_channel_event", "string"), ("p_cost", "decimal(15,2)"), ("p_item_sk", "int"),
    ],
    "web_site": [
        ("web_site_sk", "int"), ("web_site_id", "string"), ("web_name", "string"), ("web_company_name", "string"),
    ],
    "store_sales": [
        ("ss_item_sk", "int"), ("ss_customer_sk", "int"), ("ss_cdemo_sk", "int"), ("ss_hdemo_sk", "int"),
        ("ss_addr_sk", "int"), ("ss_store_sk", "int"), ("ss_promo_sk", "int"), ("ss_ticket_number", "bigint"),
        ("ss_quantity", "int"), ("ss_list_price", "decimal(7,2)"), ("ss_sales_price", "decimal(7,2)"),
        ("ss_ext_sales_price", "decimal(7,2)"), ("ss_ext_discount_amt", "decimal(7,2)"),
        ("ss_coupon_amt", "decimal(7,2)"), ("ss_net_profit", "decimal(7,2)"), ("ss_sold_date_sk", "int"),
    ],
    "store_returns": [
        ("sr_returned_date_sk", "int"), ("sr_item_sk", "int"), ("sr_customer_sk", "int"), ("sr_store_sk", "int"),
        ("sr_ticket_number", "bigint"), ("sr_return_quantity", "int"), ("sr_return_amt", "decimal(7,2)"),
        ("sr_net_loss", "decimal(7,2)"),
    ],
    "web_sales": [
        ("ws_item_sk", "int"), ("ws_bill_customer_sk", "int"), ("ws_bill_addr_sk", "int"), ("ws_web_site_sk", "int"),
        ("ws_promo_sk", "int"), ("ws_order_number", "bigint"), ("ws_quantity", "int"),
        ("ws_sales_price", "decimal(7,2)"), ("ws_ext_sales_price", "decimal(7,2)"),
        ("ws_ext_discount_amt", "decimal(7,2)"), ("ws_net_profit", "decimal(7,2)"), ("ws_sold_date_sk", "int"),
    ],
    "catalog_sales": [
        ("cs_item_sk", "int"), ("cs_bill_customer_sk", "int"), ("cs_bill_addr_sk", "int"), ("cs_bill_hdemo_sk", "int"),
        ("cs_promo_sk", "int"), ("cs_order_number", "bigint"), ("cs_quantity", "int"),
        ("cs_sales_price", "decimal(7,2)"), ("cs_ext_sales_price", "decimal(7,2)"), ("cs_net_profit", "decimal(7,2)"),
        ("cs_sold_date_sk", "int"),
    ],
}  # fmt: skip

#: fact table -> partition column (Parquet directories by sold date, as TPC-DS is usually laid out)
PARTITIONS: dict[str, str] = {
    "store_sales": "ss_sold_date_sk",
    "web_sales": "ws_sold_date_sk",
    "catalog_sales": "cs_sold_date_sk",
}

FIRST_DATE_SK = 2415022  # 1900-01-02
DATE_ZERO = dt.date(1900, 1, 2)
DATA_FIRST = dt.date(1998, 1, 1)  # generated facts fall in 1998-2002
DATA_DAYS = 5 * 365 + 1

#: nominal scale for the statistics form: rows per table
ROW_COUNTS: dict[str, int] = {
    "date_dim": 73049, "item": 18000, "customer": 100000, "customer_address": 50000,
    "customer_demographics": 1920800, "household_demographics": 7200, "income_band": 20, "store": 12,
    "promotion": 300, "web_site": 30, "store_sales": 2880404, "store_returns": 287514, "web_sales": 719384,
    "catalog_sales": 1441548,
}  # fmt: skip

_D0, _D1 = 2450815, 2450815 + DATA_DAYS - 1  # the facts' date keys
#: nominal column statistics: column -> (ndv, min, max, null_count); None where not known
COLUMN_STATS: dict[str, dict[str, tuple[Any, Any, Any, int]]] = {
    "date_dim": {
        "d_date_sk": (73049, 2415022, 2488070, 0), "d_year": (201, 1900, 2100, 0), "d_moy": (12, 1, 12, 0),
        "d_dom": (31, 1, 31, 0), "d_qoy": (4, 1, 4, 0), "d_week_seq": (10436, 1, 10436, 0),
        "d_day_name": (7, "Friday", "Wednesday", 0), "d_holiday": (2, "N", "Y", 0),
        "d_date": (73049, "1900-01-02", "2100-01-01", 0),
    },
    "item": {
        "i_item_sk": (18000, 1, 18000, 0), "i_brand_id": (951, 1001001, 10016017, 45),
        "i_category": (10, "Books", "Women", 45), "i_class": (99, "accent", "womens watch", 45),
        "i_manufact_id": (1000, 1, 1000, 45), "i_current_price": (2000, Decimal("0.09"), Decimal("99.99"), 45),
        "i_color": (92, "almond", "yellow", 45), "i_size": (7, "N/A", "small", 45),
    },
    "customer": {
        "c_customer_sk": (100000, 1, 100000, 0), "c_current_addr_sk": (43000, 1, 50000, 3500),
        "c_current_cdemo_sk": (96000, 1, 1920800, 3500), "c_current_hdemo_sk": (7200, 1, 7200, 3500),
        "c_birth_year": (69, 1924, 1992, 3500), "c_birth_country": (211, "AFGHANISTAN", "ZIMBABWE", 3500),
        "c_preferred_cust_flag": (2, "N", "Y", 3500), "c_last_name": (4990, "Aaron", "Zuniga", 3500),
    },
    "customer_address": {
        "ca_address_sk": (50000, 1, 50000, 0), "ca_state": (51, "AK", "WY", 1500), "ca_city": (700, "Aberdeen",
        "Zion", 1500), "ca_county": (1800, "Abbeville County", "Ziebach County", 1500),
        "ca_country": (1, "United States", "United States", 1500), "ca_gmt_offset": (6, Decimal("-10.00"),
        Decimal("-5.00"), 1500), "ca_zip": (8000, "00000", "99999", 1500),
    },
    "customer_demographics": {
        "cd_demo_sk": (1920800, 1, 1920800, 0), "cd_gender": (2, "F", "M", 0), "cd_marital_status": (5, "D", "W", 0),
        "cd_education_status": (7, "2 yr Degree", "Unknown", 0), "cd_dep_count": (7, 0, 6, 0),
        "cd_credit_rating": (4, "Good", "Unknown", 0), "cd_purchase_estimate": (20, 500, 10000, 0),
    },
    "household_demographics": {
        "hd_demo_sk": (7200, 1, 7200, 0), "hd_income_band_sk": (20, 1, 20, 0), "hd_dep_count": (10, 0, 9, 0),
        "hd_vehicle_count": (6, -1, 4, 0), "hd_buy_potential": (6, "0-500", "Unknown", 0),
    },
    "income_band": {"ib_income_band_sk": (20, 1, 20, 0), "ib_lower_bound": (20, 0, 190001, 0)},
    "store": {
        "s_store_sk": (12, 1, 12, 0), "s_state": (1, "TN", "TN", 0), "s_county": (1, "Williamson County",
        "Williamson County", 0), "s_number_employees": (12, 200, 300, 0), "s_market_id": (8, 2, 10, 0),
        "s_city": (2, "Fairview", "Midway", 0),
    },
    "promotion": {
        "p_promo_sk": (300, 1, 300, 0), "p_channel_email": (2, "N", "Y", 4), "p_channel_tv": (2, "N", "Y", 4),
        "p_channel_event": (2, "N", "Y", 4), "p_cost": (1, Decimal("1000.00"), Decimal("1000.00"), 4),
    },
    "web_site": {"web_site_sk": (30, 1, 30, 0), "web_company_name": (6, "able", "pri", 0)},
    "store_sales": {
        "ss_sold_date_sk": (1823, _D0, _D1, 130000), "ss_item_sk": (18000, 1, 18000, 0),
        "ss_customer_sk": (100000, 1, 100000, 130000), "ss_store_sk": (6, 1, 12, 130000),
        "ss_promo_sk": (300, 1, 300, 130000), "ss_hdemo_sk": (7200, 1, 7200, 130000),
        "ss_cdemo_sk": (1920800, 1, 1920800, 130000), "ss_addr_sk": (50000, 1, 50000, 130000),
        "ss_ticket_number": (240000, 1, 240000, 0), "ss_quantity": (100, 1, 100, 130000),
        "ss_sales_price": (19000, Decimal("0.00"), Decimal("200.00"), 130000),
        "ss_net_profit": (300000, Decimal("-10000.00"), Decimal("9800.00"), 130000),
        "ss_coupon_amt": (100000, Decimal("0.00"), Decimal("19000.00"), 130000),
    },
    "store_returns": {
        "sr_returned_date_sk": (2000, _D0, _D1 + 90, 10000), "sr_item_sk": (18000, 1, 18000, 0),
        "sr_customer_sk": (98000, 1, 100000, 10000), "sr_ticket_number": (160000, 1, 240000, 0),
        "sr_return_amt": (90000, Decimal("0.00"), Decimal("18000.00"), 10000), "sr_store_sk": (6, 1, 12, 10000),
    },
    "web_sales": {
        "ws_sold_date_sk": (1823, _D0, _D1, 180), "ws_item_sk": (18000, 1, 18000, 0),
        "ws_bill_customer_sk": (98000, 1, 100000, 180), "ws_web_site_sk": (30, 1, 30, 180),
        "ws_bill_addr_sk": (50000, 1, 50000, 180), "ws_promo_sk": (300, 1, 300, 180),
        "ws_order_number": (60000, 1, 60000, 0), "ws_quantity": (100, 1, 100, 180),
        "ws_sales_price": (29000, Decimal("0.00"), Decimal("300.00"), 180),
        "ws_net_profit": (300000, Decimal("-10000.00"), Decimal("19800.00"), 180),
    },
    "catalog_sales": {
        "cs_sold_date_sk": (1823, _D0, _D1, 7200), "cs_item_sk": (18000, 1, 18000, 0),
        "cs_bill_customer_sk": (100000, 1, 100000, 7200), "cs_bill_addr_sk": (50000, 1, 50000, 7200),
        "cs_bill_hdemo_sk": (7200, 1, 7200, 7200), "cs_promo_sk": (300, 1, 300, 7200),
        "cs_order_number": (160000, 1, 160000, 0), "cs_quantity": (100, 1, 100, 7200),
        "cs_sales_price": (29000, Decimal("0.00"), Decimal("300.00"), 7200),
        "cs_net_profit": (300000, Decimal("-10000.00"), Decimal("19800.00"), 7200),
    },
}  # fmt: skip


def _wire_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    return value


def catalog(form: str = "stats") -> dict[str, Any]:
    """The request's catalog in one statistics form: ``none`` (columns and types only), ``rows`` (and row counts,
    the issue's "with table row counts supplied") or ``stats`` (and column statistics: ndv, min, max, nulls)."""
    if form not in ("none", "rows", "stats"):
        raise ValueError(f"unknown statistics form {form!r}")
    tables: dict[str, Any] = {}
    for name, cols in TABLES.items():
        entry: dict[str, Any] = {"columns": [{"name": c, "type": t} for c, t in cols]}
        if form != "none":
            entry["row_count"] = ROW_COUNTS[name]
        if form == "stats":
            entry["column_stats"] = {
                col: {"ndv": ndv, "min": _wire_value(lo), "max": _wire_value(hi), "null_count": nulls}
                for col, (ndv, lo, hi, nulls) in COLUMN_STATS.get(name, {}).items()
            }
        tables[name] = entry
    return {"tables": tables}


def spark_ddl(name: str, location: str) -> str:
    """``CREATE TABLE`` for an empty Parquet table at ``location``, partitioned for a fact table."""
    cols = ", ".join(f"{c} {t.upper()}" for c, t in TABLES[name])
    part = f" PARTITIONED BY ({PARTITIONS[name]})" if name in PARTITIONS else ""
    return f"CREATE TABLE {name} ({cols}) USING parquet{part} LOCATION '{location}'"


def duckdb_type(spark_type: str) -> str:
    return {"int": "INTEGER", "bigint": "BIGINT", "string": "VARCHAR", "date": "DATE"}.get(
        spark_type, spark_type.upper()
    )


# --- seeded data: NULLs, duplicates, skew ---------------------------------------------------------------------------

_STATES = ["TN", "GA", "TX", "CA", "NY", "OH", "KY", "VA", "IL", "MI", "WA", "AL"]
_CITIES = ["Midway", "Fairview", "Oakland", "Riverside", "Springfield", "Greenville", "Salem", "Georgetown"]
_COUNTIES = ["Williamson County", "Ziebach County", "Bronx County", "Orange County", "Walker County"]
_CATEGORIES = ["Books", "Children", "Electronics", "Home", "Jewelry", "Men", "Music", "Shoes", "Sports", "Women"]
_CLASSES = ["accent", "athletic", "classical", "dresses", "fiction", "pop", "rock", "shirts", "sports", "womens"]
_COLORS = ["almond", "blue", "chiffon", "coral", "khaki", "navy", "orchid", "red", "slate", "yellow"]
_SIZES = ["N/A", "economy", "extra large", "large", "medium", "petite", "small"]
_NAMES = ["Smith", "Johnson", "Brown", "Jones", "Miller", "Davis", "Garcia", "Rodriguez", "Wilson", "Martinez"]
_FIRST = ["James", "Mary", "John", "Linda", "Robert", "Susan", "Michael", "Karen", "David", "Lisa"]
_COUNTRIES = ["UNITED STATES", "CANADA", "MEXICO", "GERMANY", "JAPAN", "CHINA", "FRANCE"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_EDU = ["Primary", "Secondary", "College", "2 yr Degree", "4 yr Degree", "Advanced Degree", "Unknown"]
_BUY = ["0-500", "501-1000", "1001-5000", ">10000", "5001-10000", "Unknown"]


def dimension_sizes(scale: float) -> dict[str, int]:
    """Rows per table at ``scale`` (1 = a few hundred thousand fact rows); at least a handful each."""

    def n(base: int, least: int = 5) -> int:
        return max(least, int(base * scale))

    return {
        "item": n(2000, 50), "customer": n(5000, 100), "customer_address": n(2500, 60),
        "customer_demographics": n(2000, 50), "household_demographics": n(720, 30), "income_band": 20, "store": 12,
        "promotion": n(300, 20), "web_site": 30, "store_sales": n(200000, 2000), "store_returns": n(20000, 200),
        "web_sales": n(50000, 800), "catalog_sales": n(100000, 1200),
    }  # fmt: skip


def generate(scale: float = 0.01, seed: int = 7) -> dict[str, list[tuple[Any, ...]]]:
    """Rows per table, column order as ``TABLES``: about ``scale`` x 370,000 fact rows, with NULL foreign keys and
    measures, repeated rows and skewed keys (a few items, customers and days take much of the sales)."""
    rng = random.Random(seed)
    size = dimension_sizes(scale)
    out: dict[str, list[tuple[Any, ...]]] = {}

    def maybe(value: Any, p: float = 0.05) -> Any:
        return None if rng.random() < p else value

    def money(lo: float, hi: float) -> Decimal:
        return Decimal(f"{rng.uniform(lo, hi):.2f}")

    def skewed(n: int) -> int:  # 1..n, heavy at the low end
        return min(n, int(rng.paretovariate(1.2)) if rng.random() < 0.5 else rng.randint(1, n))

    dates = []
    for i in range(DATA_DAYS):
        d = DATA_FIRST + dt.timedelta(days=i)
        sk = FIRST_DATE_SK + (d - DATE_ZERO).days
        dates.append(
            (sk, d, d.year, d.month, d.day, (d.month - 1) // 3 + 1, (d - DATE_ZERO).days // 7 + 1,
             _DAYS[d.weekday()], "Y" if (d.month, d.day) in ((12, 25), (7, 4), (1, 1)) else "N")
        )  # fmt: skip
    out["date_dim"] = dates
    date_sks = [row[0] for row in dates]

    def date_key() -> int:
        if rng.random() < 0.2:  # a skewed run of busy days (November 2000)
            return FIRST_DATE_SK + (dt.date(2000, 11, 1) - DATE_ZERO).days + rng.randint(0, 29)
        return rng.choice(date_sks)

    out["item"] = [
        (i, f"AAAAAAAA{i // 2:08d}", 1001001 + i % 97, maybe(f"brand#{i % 97}"), maybe(rng.choice(_CLASSES)),
         maybe(rng.choice(_CATEGORIES)), maybe(i % 100 + 1), maybe(money(0.09, 99.99)), maybe(rng.choice(_COLORS)),
         rng.choice(_SIZES), f"product{i % 500}")
        for i in range(1, size["item"] + 1)
    ]  # fmt: skip
    out["customer_address"] = [
        (i, f"{rng.choice(_NAMES)} Street", maybe(rng.choice(_CITIES)), maybe(rng.choice(_COUNTIES)),
         maybe(rng.choice(_STATES[:4]) if rng.random() < 0.6 else rng.choice(_STATES)), f"{rng.randint(0, 99999):05d}",
         "United States", maybe(Decimal(rng.choice(["-5.00", "-6.00", "-7.00", "-8.00"]))),
         rng.choice(["apartment", "condo", "single family"]))
        for i in range(1, size["customer_address"] + 1)
    ]  # fmt: skip
    out["customer_demographics"] = [
        (i, rng.choice("FM"), rng.choice("DMSUW"), rng.choice(_EDU), 500 * rng.randint(1, 20),
         rng.choice(["Good", "High Risk", "Low Risk", "Unknown"]), rng.randint(0, 6))
        for i in range(1, size["customer_demographics"] + 1)
    ]  # fmt: skip
    out["household_demographics"] = [
        (i, rng.randint(1, 20), rng.choice(_BUY), rng.randint(0, 9), rng.randint(-1, 4))
        for i in range(1, size["household_demographics"] + 1)
    ]
    out["income_band"] = [(i, (i - 1) * 10000 + 1 if i > 1 else 0, i * 10000) for i in range(1, 21)]
    out["customer"] = [
        (i, f"AAAAAAAA{i:08d}", maybe(rng.randint(1, size["customer_demographics"])),
         maybe(rng.randint(1, size["household_demographics"])), maybe(skewed(size["customer_address"])),
         maybe(rng.choice(_FIRST)), maybe(rng.choice(_NAMES)), maybe(rng.choice("NY")), maybe(rng.randint(1924, 1992)),
         maybe(rng.choice(_COUNTRIES)), maybe(f"user{i}@example.{rng.choice(['com', 'org', 'net'])}", 0.1))
        for i in range(1, size["customer"] + 1)
    ]  # fmt: skip
    out["store"] = [
        (i, f"AAAAAAAA{(i + 1) // 2:08d}", rng.choice(["ought", "able", "ese", "anti", "cally"]), rng.randint(200, 300),
         rng.choice(_CITIES[:2]), "Williamson County", "TN", f"3{rng.randint(1000, 9999)}", rng.randint(2, 10),
         Decimal("-5.00"))
        for i in range(1, 13)
    ]  # fmt: skip
    out["promotion"] = [
        (i, f"AAAAAAAA{i:08d}", rng.choice(["ought", "able", "pri", "ese"]), maybe(rng.choice("NY")),
         maybe(rng.choice("NY")), maybe(rng.choice("NY")), Decimal("1000.00"), rng.randint(1, size["item"]))
        for i in range(1, size["promotion"] + 1)
    ]  # fmt: skip
    out["web_site"] = [(i, f"AAAAAAAA{i:08d}", f"site_{i % 6}", rng.choice(["able", "pri", "ought"])) for i in
                       range(1, 31)]  # fmt: skip

    def sales(n: int, width: str) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        while len(rows) < n:
            if rows and rng.random() < 0.03:  # exact duplicates
                rows.append(rows[rng.randrange(len(rows))])
                continue
            q = maybe(rng.randint(1, 100))
            price = maybe(money(0, 200))
            ext = None if q is None or price is None else Decimal(price * q).quantize(Decimal("0.01"))
            ext = ext if ext is None or ext < Decimal("99999") else Decimal("99999.00")
            profit = maybe(money(-5000, 5000))
            item = skewed(size["item"])
            cust = maybe(skewed(size["customer"]))
            date = maybe(date_key(), 0.04)
            if width == "ss":
                rows.append(
                    (item, cust, maybe(rng.randint(1, size["customer_demographics"])),
                     maybe(rng.randint(1, size["household_demographics"])),
                     maybe(rng.randint(1, size["customer_address"])),
                     maybe(rng.choice([1, 2, 4, 7, 8, 10])), maybe(rng.randint(1, size["promotion"])),
                     len(rows) // 3 + 1, q, maybe(money(0, 200)), price, ext, maybe(money(0, 50)),
                     maybe(money(0, 100)), profit, date)
                )  # fmt: skip
            elif width == "ws":
                rows.append(
                    (item, cust, maybe(rng.randint(1, size["customer_address"])), maybe(rng.randint(1, 30)),
                     maybe(rng.randint(1, size["promotion"])), len(rows) // 4 + 1, q, price, ext,
                     maybe(money(0, 50)), profit, date)
                )  # fmt: skip
            else:
                rows.append(
                    (item, cust, maybe(rng.randint(1, size["customer_address"])),
                     maybe(rng.randint(1, size["household_demographics"])), maybe(rng.randint(1, size["promotion"])),
                     len(rows) // 3 + 1, q, price, ext, profit, date)
                )  # fmt: skip
        return rows

    out["store_sales"] = sales(size["store_sales"], "ss")
    out["web_sales"] = sales(size["web_sales"], "ws")
    out["catalog_sales"] = sales(size["catalog_sales"], "cs")
    returns = []
    for _ in range(size["store_returns"]):
        s = rng.choice(out["store_sales"])
        returns.append(
            (maybe(s[15] + rng.randint(0, 60) if s[15] else None), s[0], s[1], s[5], s[7], maybe(rng.randint(1, 20)),
             maybe(money(0, 500)), maybe(money(0, 300)))
        )  # fmt: skip
    out["store_returns"] = returns
    return out
