"""A statement log of the shop in docs/examples/orders-sql, for ``--workload replay``: writes orders.log, a
PostgreSQL log (stderr format, millisecond time stamps) of a few application sessions.

Made, not captured: a seeded generator plays a web shop's connections for ``--seconds`` seconds of log time, each
session looking up a customer's orders (by customer, with their lines), searching customers by city, reading the
pick list, now and then the half year's top customers, and placing orders (an INSERT of one order and its lines with
literal keys above 2,000,000, which the replay deletes again after every block), with a think time between its
statements. The statements are those of the example's queries with other values; their durations in the log are
placeholders (the replay measures its own). The same arguments write the same file.

    python docs/examples/orders-replay/make_log.py [--sessions N] [--seconds S] [--seed SEED]   (defaults: 4, 20, 11)
"""

import argparse
import csv
import random
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHOP = HERE.parent / "orders-sql"


def statements(rng: random.Random, customers: list[tuple[int, str]], products: dict[int, str],
               next_order: list[int]) -> list[str]:
    """One request of a web session: one or more statements."""
    pick = rng.random()
    customer, city = rng.choice(customers)
    if pick < 0.45:
        return [f"SELECT o.order_id, o.ordered_at, o.status, SUM(l.quantity * l.unit_price) AS total FROM orders o "
                f"JOIN order_lines l ON l.order_id = o.order_id WHERE o.customer_id = {customer} "
                "GROUP BY o.order_id, o.ordered_at, o.status ORDER BY o.ordered_at DESC, o.order_id"]
    if pick < 0.65:
        return [f"SELECT customer_id, name, email, signed_up FROM customers WHERE city = '{city}' "
                "AND signed_up >= '2021-01-01' ORDER BY name, customer_id"]
    if pick < 0.80:
        return ["SELECT o.order_id, o.ordered_at, c.name, o.ship_address FROM orders o JOIN customers c ON "
                "c.customer_id = o.customer_id WHERE o.status = 'paid' AND o.shipped_on IS NULL "
                "ORDER BY o.ordered_at, o.order_id LIMIT 50"]
    if pick < 0.85:
        return ["SELECT c.customer_id, c.name, c.country, SUM(l.quantity * l.unit_price) AS revenue FROM customers c "
                "JOIN orders o ON o.customer_id = c.customer_id JOIN order_lines l ON l.order_id = o.order_id "
                "WHERE o.ordered_at >= '2024-01-01' AND o.ordered_at < '2024-07-01' "
                "GROUP BY c.customer_id, c.name, c.country ORDER BY revenue DESC, c.customer_id LIMIT 10"]
    order = next_order[0]
    next_order[0] += 1
    lines = ", ".join(f"({order}, {n}, {p}, {rng.randint(1, 4)}, {products[p]})"
                      for n, p in enumerate(rng.sample(sorted(products), rng.randint(1, 4)), start=1))
    return [f"INSERT INTO orders (order_id, customer_id, ordered_at, status, shipped_on, ship_address) VALUES "
            f"({order}, {customer}, '2024-12-01 10:00:00', 'new', NULL, 'Grafton Street {order % 97}, {city}')",
            f"INSERT INTO order_lines (order_id, line_no, product_id, quantity, unit_price) VALUES {lines}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=HERE / "orders.log")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(SHOP / "data" / "customers.csv", newline="", encoding="utf-8") as handle:
        customers = [(int(r["customer_id"]), r["city"]) for r in csv.DictReader(handle)]
    with open(SHOP / "data" / "products.csv", newline="", encoding="utf-8") as handle:
        products = {int(r["product_id"]): r["price"] for r in csv.DictReader(handle)}
    start = datetime(2024, 12, 1, 10, 0, 0)
    next_order = [2_000_001]
    events: list[tuple[float, int, str]] = []
    for session in range(args.sessions):
        t = rng.uniform(0, 0.5)
        while t < args.seconds:
            for text in statements(rng, customers, products, next_order):
                events.append((t, 4000 + session, text))
                t += 0.002
            t += rng.uniform(0.05, 0.4)  # the user reads the page
    lines = []
    for t, pid, text in sorted(events):
        stamp = (start + timedelta(seconds=t)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        lines.append(f"{stamp} UTC [{pid}] LOG:  duration: 1.000 ms  statement: {text}")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(lines)} statements of {args.sessions} sessions over {args.seconds:g} s")


if __name__ == "__main__":
    main()
