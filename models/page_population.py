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
