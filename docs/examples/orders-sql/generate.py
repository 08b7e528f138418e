"""Seeded orders and order lines for the orders example: writes OUT/orders.csv and OUT/order_lines.tsv.

Reads the customers and products from data/ (run in the workload directory, as tdebench does), so the foreign
keys hold. The same arguments give the same files on every machine.
"""

import argparse
import csv
import random
from datetime import datetime, timedelta
from pathlib import Path

STREETS = ["Vasilissis Sofias Avenue", "Rue de la République", "Hauptstraße", "Rua Augusta", "Grafton Street",
           "Ulica Floriańska", "Queen Street West", "Dotonbori", "Avenida Paulista", "Ermou Street"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--orders", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open("data/customers.csv", newline="", encoding="utf-8") as handle:
        customers = [(int(r["customer_id"]), r["city"]) for r in csv.DictReader(handle)]
    with open("data/products.csv", newline="", encoding="utf-8") as handle:
        prices = {int(r["product_id"]): r["price"] for r in csv.DictReader(handle)}
    start = datetime(2023, 7, 1)
    with open(args.out / "orders.csv", "w", newline="", encoding="utf-8") as orders, \
            open(args.out / "order_lines.tsv", "w", encoding="utf-8") as lines:
        writer = csv.writer(orders, lineterminator="\n")
        writer.writerow(["order_id", "customer_id", "ordered_at", "status", "shipped_on", "ship_address"])
        lines.write("order_id\tline_no\tproduct_id\tquantity\tunit_price\n")
        for order_id in range(1, args.orders + 1):
            customer, city = rng.choice(customers)
            at = start + timedelta(minutes=rng.randrange(365 * 24 * 60))
            status = rng.choices(["paid", "shipped", "cancelled"], [2, 7, 1])[0]
            shipped = (at + timedelta(days=rng.randint(1, 5))).date().isoformat() if status == "shipped" else ""
            address = f"{rng.randint(1, 250)} {rng.choice(STREETS)}, {city}"
            writer.writerow([order_id, customer, at.strftime("%Y-%m-%d %H:%M:%S"), status, shipped, address])
            for line_no, product in enumerate(rng.sample(sorted(prices), rng.randint(1, 5)), start=1):
                lines.write(f"{order_id}\t{line_no}\t{product}\t{rng.randint(1, 4)}\t{prices[product]}\n")


if __name__ == "__main__":
    main()
