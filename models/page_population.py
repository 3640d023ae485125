"""How often each page is modified, and the flush rate a page population needs.

A page modified at rate lam (Poisson) that stays on the flush list W seconds from its first
modification (the residence time, sim.swing) is written once per W + 1/lam seconds: after its
write it is clean until its next modification. A population needs sum_i 1 / (W + 1/lam_i) page
writes a second in steady state, plus one per page created (appended) that is written once
(PROFILE_NOTES of models.oltp: how the DBT2 profile's hot set was chosen). Not counted: neighbour
flushing, dirty pages evicted by LRU flushing, pages modified only inside the residence.

Two populations of the DBT2 / TPC-C mix:

* `two_tier_rates`: the OLTP profiles' model (models.oltp.PageSampler), hot_access_pct of the
  modifications uniformly on hot_data_pct of the pages, the rest uniformly on the others.
* `tpcc_rates`: TPC-C's own (TPC Benchmark C standard specification, revision 5.11, clause 2.1.6,
  NURand; clauses 2.4-2.7, the transactions; clause 1.3, the row layouts). Per new-order ten stock
  rows of the home warehouse, item ids by NURand(8191, 1, 100000); per payment the customer by
  NURand(1023, 1, 3000) (the 60 % chosen by last name are taken as NURand over ids as well); per
  delivery ten customers, one per district, taken as uniform; warehouse rows (payment) and district
  rows (new-order and payment; delivery reads no district row, clause 2.7.4.2); every
  warehouse equally likely (tpcc-mysql and DBT2 terminals spread evenly). Rows per page from the
  row sizes (stock 306 bytes, customer 655) plus InnoDB's 18 bytes of record header, transaction
  id and roll pointer, on 16 KiB pages filled to 15/16 as a sequential load leaves them. The
  inserted rows (order, new-order, order-line, history) fill new pages: counted as appended pages.
  Not counted: delivery's updates of old order and order-line rows and its new-order deletes.
"""

from __future__ import annotations

import math

import numpy as np

from models.oltp import two_tier_split

PAGE_BYTES = 16384
PAGE_USABLE_BYTES = 16252            # about: 16 KiB less FIL header (38) and trailer (8), index header (56),
#                                      infimum and supremum (26) and a few page-directory slots
FILL = 15.0 / 16.0                   # sequential inserts leave pages about 15/16 full (MySQL manual,
#                                      "The Physical Structure of an InnoDB Index")
RECORD_OVERHEAD_BYTES = 18           # 5 bytes record header + DB_TRX_ID 6 + DB_ROLL_PTR 7
ITEMS = 100_000                      # stock rows per warehouse
CUSTOMERS_PER_DISTRICT = 3000
DISTRICTS = 10
ROW_BYTES = {"warehouse": 89, "district": 95, "customer": 655, "stock": 306, "history": 46,
             "order": 24, "new_order": 8, "order_line": 54}
# The mix (clause 5.2.3 minimum shares, as DBT2 and tpcc-mysql run it).
MIX = {"new_order": 0.45, "payment": 0.43, "order_status": 0.04, "delivery": 0.04, "stock_level": 0.04}
LINES_PER_ORDER = 10                 # 5..15, uniform


PAGE_HEADERS_BYTES = PAGE_BYTES - PAGE_USABLE_BYTES


def rows_per_page(row_bytes: int, page_bytes: int = PAGE_BYTES) -> int:
    usable = page_bytes - PAGE_HEADERS_BYTES
    return max(1, int(usable * FILL // (row_bytes + RECORD_OVERHEAD_BYTES)))


def nurand_pmf(a: int, x: int, y: int, c: int = 0) -> np.ndarray:
    """Exact probabilities of NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
    for A = 2^b - 1, indexed by value - x.

    random(0, A) has b independent fair bits, so for a given r2 the OR keeps r2's high bits and
    sets each of its b low zero bits with probability 1/2: value v (before + C) has probability
    sum over r2 with r2's high bits = v's and r2's low bits a subset of v's of 2^-(zero bits of r2)
    / (y - x + 1). The subset sums are a zeta transform over the b low bits."""
    bits = a.bit_length()
    if a != (1 << bits) - 1:
        raise ValueError(f"A = {a} is not 2^b - 1")
    n = y - x + 1
    low = 1 << bits
    r2 = np.arange(x, y + 1, dtype=np.int64)
    top = int(r2.max() >> bits) + 1
    weight = np.zeros((top, low))
    zeros = bits - np.array([bin(m).count("1") for m in range(low)])
    np.add.at(weight, (r2 >> bits, r2 & (low - 1)), 0.5 ** zeros[r2 & (low - 1)])
    for b in range(bits):                                   # sum over subsets of the low bits
        step = 1 << b
        w = weight.reshape(top, -1, 2 * step)
        w[:, :, step:] += w[:, :, :step]
    values = np.arange(top * low, dtype=np.int64)           # r1 | r2 before the modulo
    p = weight.reshape(-1) / n
    pmf = np.zeros(n)
    np.add.at(pmf, (values + c) % n, p)
    return pmf


def per_page(pmf: np.ndarray, rows: int) -> np.ndarray:
    """Probabilities of consecutive rows summed `rows` to a page (the last page may be short)."""
    pages = math.ceil(len(pmf) / rows)
    padded = np.zeros(pages * rows)
    padded[: len(pmf)] = pmf
    return padded.reshape(pages, rows).sum(axis=1)


def two_tier_rates(n_pages: int, hot_data_pct: float, hot_access_pct: float,
                   modifications_per_s: float) -> np.ndarray:
    """Modification rate of every page under the two-tier model (equal within each tier)."""
    n_hot, p_hot = two_tier_split(n_pages, hot_data_pct, hot_access_pct)
    rates = np.full(n_pages, modifications_per_s * (1.0 - p_hot) / max(1, n_pages - n_hot))
    rates[:n_hot] = modifications_per_s * p_hot / n_hot
    return rates


def tpcc_rates(warehouses: int, txn_per_s: float, c_stock: int = 0, c_customer: int = 0,
               page_bytes: int = PAGE_BYTES) -> tuple[np.ndarray, float]:
    """(modification rate of every updated page, appended pages a second) of the TPC-C mix.

    Per transaction (averaged over the mix): stock rows 0.45 x 10, customer rows 0.43 (payment)
    + 0.04 x 10 (delivery), district rows 0.45 + 0.43 (delivery leaves them alone, clause 2.7.4.2),
    warehouse rows 0.43; appended rows: order, new-order and 10 order lines per new-order, history
    per payment."""
    no, pay, dl = MIX["new_order"], MIX["payment"], MIX["delivery"]
    stock_pmf = per_page(nurand_pmf(8191, 1, ITEMS, c_stock), rows_per_page(ROW_BYTES["stock"], page_bytes))
    stock = np.tile(stock_pmf * txn_per_s * no * LINES_PER_ORDER / warehouses, warehouses)
    cust_pmf = per_page(pay * nurand_pmf(1023, 1, CUSTOMERS_PER_DISTRICT, c_customer)
                        + dl * DISTRICTS * np.full(CUSTOMERS_PER_DISTRICT, 1.0 / CUSTOMERS_PER_DISTRICT),
                        rows_per_page(ROW_BYTES["customer"], page_bytes))
    customer = np.tile(cust_pmf * txn_per_s / (warehouses * DISTRICTS), warehouses * DISTRICTS)
    n_dist = math.ceil(warehouses * DISTRICTS / rows_per_page(ROW_BYTES["district"], page_bytes))
    district = np.full(n_dist, txn_per_s * (no + pay) / n_dist)
    n_wh = math.ceil(warehouses / rows_per_page(ROW_BYTES["warehouse"], page_bytes))
    warehouse = np.full(n_wh, txn_per_s * pay / n_wh)
    appended_bytes = (no * (ROW_BYTES["order"] + ROW_BYTES["new_order"] + LINES_PER_ORDER * ROW_BYTES["order_line"]
                            + (2 + LINES_PER_ORDER) * RECORD_OVERHEAD_BYTES)
                      + pay * (ROW_BYTES["history"] + RECORD_OVERHEAD_BYTES))
    appended_pages_per_s = txn_per_s * appended_bytes / ((page_bytes - PAGE_HEADERS_BYTES) * FILL)
    return np.concatenate([stock, customer, district, warehouse]), appended_pages_per_s


def steady_flush_rate(residence_s: float, rates_per_s: np.ndarray, appended_pages_per_s: float = 0.0) -> float:
    """Page writes a second a population needs: sum 1 / (W + 1/lam) over pages modified at all,
    plus the appended pages (each written once)."""
    lam = np.asarray(rates_per_s, dtype=float)
    lam = lam[lam > 0]
    return float(np.sum(lam / (1.0 + residence_s * lam))) + appended_pages_per_s


def tpcc_page_weights(warehouses: int, n_pages: int, page_bytes: int = PAGE_BYTES) -> np.ndarray:
    """Share of the modifications on each of n_pages data pages under TPC-C's population, laid out
    as the tables' clustered indexes order their rows: stock by (warehouse, item), customer by
    (warehouse, district, customer), then district and warehouse; the pages after them (orders,
    order lines, history, items, secondary indexes) get none. ValueError when they do not fit."""
    rates, _ = tpcc_rates(warehouses, 1.0, page_bytes=page_bytes)
    if len(rates) > n_pages:
        raise ValueError(f"TPC-C's {warehouses} warehouses need {len(rates):,} pages of stock, customer, "
                         f"district and warehouse rows; the data set has {n_pages:,}")
    weights = np.zeros(n_pages)
    weights[: len(rates)] = rates / rates.sum()
    return weights


# -- sysbench 1.0 oltp_read_write ------------------------------------------------------------------
# The sbtest table (oltp_common.lua, create_table): id INTEGER primary key, k INTEGER with the
# secondary index k_N, c CHAR(120), pad CHAR(60); 4 + 4 + 120 + 60 bytes a row. A secondary record
# holds k and id and a 5-byte record header (no transaction id or roll pointer).
SBTEST_ROW_BYTES = 188
SBTEST_K_ENTRY_BYTES = 8 + 5 - RECORD_OVERHEAD_BYTES     # rows_per_page adds RECORD_OVERHEAD_BYTES back
# sysbench 1.0.20's defaults for --rand-type=special (src/sb_rand.c): --rand-spec-pct=1,
# --rand-spec-res=75, --rand-spec-iter=12.
SPEC_PCT, SPEC_RES, SPEC_ITER = 1.0, 75.0, 12
# Page modifications per oltp_read_write transaction (oltp_common.lua, defaults index_updates=1,
# non_index_updates=1, delete_inserts=1), by index: the clustered index takes the index update's
# row, the non-index update's row and the deleted and re-inserted row (one page: same id); k_N
# takes the index update's delete-marked and inserted entries (k and k + 1: one page), the delete's
# delete-marked entry and the insert's new entry.
SYSBENCH_PK_MODS, SYSBENCH_K_MODS = 3, 3


def irwin_hall_cdf(x: np.ndarray, n: int) -> np.ndarray:
    """CDF of the sum of n uniforms on [0, 1) at x (0..n): sum_k (-1)^k C(n, k) (x - k)^n / n!."""
    x = np.clip(np.asarray(x, dtype=float), 0.0, float(n))
    upper = x > n / 2.0
    y = np.where(upper, n - x, x)             # the lower half only: the alternating sum cancels less there
    out = np.zeros_like(y)
    for k in range(n // 2 + 1):
        out += (-1) ** k * math.comb(n, k) * np.where(y > k, y - k, 0.0) ** n
    out = np.clip(out / math.factorial(n), 0.0, 1.0)
    return np.where(upper, 1.0 - out, out)


def special_cdf(v: np.ndarray, n_values: int, spec_pct: float = SPEC_PCT, spec_res: float = SPEC_RES,
                spec_iter: int = SPEC_ITER) -> np.ndarray:
    """P(value - 1 < v) for sysbench's sb_rand_special(1, n_values) (src/sb_rand.c, 1.0.20), v the
    offset from 1 (0..n_values). One uniform rnd decides: below (100 - spec_res) %, the value is the
    mean of spec_iter further uniforms stretched over [1, n]; otherwise it is rnd * (d + 1) moved to
    the centre of the range, d = spec_pct % of it. rnd is then at least (100 - spec_res) %, so the
    special values fill only the upper spec_res % of that central band."""
    v = np.asarray(v, dtype=float)
    t = float(max(1, n_values - 1))
    q = 1.0 - spec_res / 100.0
    rest = irwin_hall_cdf(v * spec_iter / t, spec_iter)
    d = t * spec_pct / 100.0
    lo = t / 2.0 - t * spec_pct / 200.0 + q * (d + 1.0)     # the special values: uniform on [lo, lo + width)
    width = (1.0 - q) * (d + 1.0)
    special = np.clip((v - lo) / width, 0.0, 1.0)
    return q * rest + (1.0 - q) * special


def sysbench_layout(tables: int, table_size: int, page_bytes: int = PAGE_BYTES) -> tuple[int, int]:
    """(clustered-index leaf pages, k-index leaf pages) of one sbtest table of table_size rows,
    filled to 15/16 as the sequential load and the index build after it leave them."""
    pk = math.ceil(table_size / rows_per_page(SBTEST_ROW_BYTES, page_bytes))
    k = math.ceil(table_size / rows_per_page(SBTEST_K_ENTRY_BYTES, page_bytes))
    return pk, k


def sysbench_page_weights(tables: int, table_size: int, n_pages: int,
                          page_bytes: int = PAGE_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """(read weights, modification weights) over n_pages data pages under sysbench oltp_read_write.

    Layout: the data pages split evenly into one tablespace per table (file-per-table); each starts
    with its clustered index's leaf pages in id order, then k_N's leaf pages; the rest (non-leaf
    pages, free extents) get no weight. Every table equally likely (sysbench.rand.uniform over the
    tables). Reads (point selects, ranges, and the rows the updates find) go to clustered pages
    with the special distribution over ids. Modifications: SYSBENCH_PK_MODS of every
    SYSBENCH_PK_MODS + SYSBENCH_K_MODS on clustered pages (special over ids), the others on k_N's
    pages, uniformly: the k values of the rows (loaded with the special distribution, as are the
    re-inserted ones) are drawn from the distribution of the entries themselves, so each leaf, which
    holds the same number of entries, is equally likely. ValueError when the tables do not fit."""
    pk, kp = sysbench_layout(tables, table_size, page_bytes)
    per_space = n_pages // tables if tables else 0
    if tables < 1 or table_size < 1 or pk + kp > per_space:
        raise ValueError(f"sysbench's {tables} tables of {table_size:,} rows need {tables * (pk + kp):,} leaf pages "
                         f"({pk + kp:,} a table); the data set has {n_pages:,} ({per_space:,} a table)")
    rows = rows_per_page(SBTEST_ROW_BYTES, page_bytes)
    edges = np.minimum(np.arange(pk + 1, dtype=float) * rows, table_size)
    pk_share = np.maximum(np.diff(special_cdf(edges, table_size)), 0.0)
    pk_share /= pk_share.sum()
    read = np.zeros(n_pages)
    modify = np.zeros(n_pages)
    pk_mod = SYSBENCH_PK_MODS / (SYSBENCH_PK_MODS + SYSBENCH_K_MODS)
    for t in range(tables):
        base = t * per_space
        read[base:base + pk] = pk_share / tables
        modify[base:base + pk] = pk_mod * pk_share / tables
        modify[base + pk:base + pk + kp] = (1.0 - pk_mod) / (kp * tables)
    return read, modify
