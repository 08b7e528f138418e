"""Seeded, realistic Persons rows for the CRUD workload, written once per (rows, staging rows, seed) and cached.

Columns follow the TDE framework study's ``randominput`` tables: id, first name, last name, age, credit-card
number (16 digits, Luhn-valid, Visa/Mastercard prefixes), street address, city of birth (some with non-ASCII
letters, so byte counts differ from character counts) and gender. Values come from :class:`random.Random`
seeded with the run's seed, so every config of a run (and every run with the same seed) gets identical data.

Files are ``|``-separated with a trailing ``|`` per line, like TPC-H ``.tbl`` files, so every engine's
``bulk_load`` reads them. No value contains ``|``, ``\\`` or a newline.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

FORMAT_VERSION = 1
# always present in row 1, so the at-rest scan has plaintext to look for at any --rows
KNOWN_CITY = "Thessaloniki"
KNOWN_STREET = "Vasilissis Sofias Avenue"

FEMALE = ("Maria", "Anna", "Elena", "Sofia", "Laura", "Emma", "Olivia", "Chloe", "Ingrid", "Aisha", "Mei", "Yuki",
          "Priya", "Fatima", "Hannah", "Julia", "Clara", "Nora", "Eva", "Lucia", "Amelia", "Zoe", "Katarzyna",
          "Freya", "Isabel", "Beatriz", "Chiara", "Leila", "Sara", "Helena")
MALE = ("John", "James", "Lucas", "Noah", "Liam", "Mateo", "Ahmed", "Wei", "Hiroshi", "Rahul", "Jonas", "Lars",
        "Pierre", "Marco", "Diego", "Andreas", "Nikos", "Pavel", "Omar", "Ivan", "Tomas", "Felix", "Oscar",
        "Samuel", "Daniel", "Kenji", "Arjun", "Mikael", "Stefan", "Georgios")
LAST = ("Smith", "Johnson", "Williams", "Brown", "Garcia", "Martinez", "Müller", "Schmidt", "Rossi", "Russo",
        "Dubois", "Lefebvre", "Papadopoulos", "Nikolaidis", "Kowalski", "Nowak", "Andersson", "Johansson",
        "Nielsen", "Hansen", "Silva", "Santos", "Tanaka", "Suzuki", "Wang", "Li", "Kumar", "Patel", "Okafor",
        "Mensah", "Ivanov", "Petrov", "O'Brien", "Murphy", "Fernández", "López", "Van Dijk", "De Jong",
        "Yilmaz", "Kaya", "Novák", "Horvat", "Jensen", "Berg", "Costa", "Ferreira", "Kim", "Park", "Nguyen", "Tran")
STREETS = ("Maple", "Oak", "Pine", "Cedar", "Elm", "Church", "High", "Station", "Mill", "Park", "Lake", "Hill",
           "King", "Queen", "Victoria", "Harbour", "River", "Forest", "Garden", "Bridge", "Castle", "Market",
           "Vasilissis Sofias", "Ermou", "Rue de la Paix", "Via Roma", "Gran Vía", "Hauptstraße", "Nørregade")
SUFFIXES = ("Street", "Avenue", "Road", "Lane", "Boulevard", "Way", "Drive", "Court", "Place", "Square")
CITIES = ("Thessaloniki", "Athens", "London", "Manchester", "Paris", "Lyon", "Berlin", "München", "Zürich",
          "Wien", "Roma", "Milano", "Madrid", "Sevilla", "Lisboa", "Porto", "Amsterdam", "Rotterdam", "Bruxelles",
          "København", "Stockholm", "Göteborg", "Oslo", "Helsinki", "Reykjavík", "Dublin", "Warszawa", "Kraków",
          "Praha", "Budapest", "București", "Sofia", "İstanbul", "Cairo", "Lagos", "Nairobi", "Johannesburg",
          "Mumbai", "Delhi", "Bengaluru", "Karachi", "Dhaka", "Beijing", "Shanghai", "Tokyo", "Ōsaka", "Seoul",
          "Manila", "Jakarta", "Sydney", "Auckland", "Toronto", "Montréal", "New York", "Chicago", "Los Angeles",
          "Houston", "Ciudad de México", "Bogotá", "Lima", "São Paulo", "Buenos Aires", "Santiago", "Luleå")
GENDERS = ("Female", "Male", "Other")


def luhn_digit(digits: str) -> int:
    """The Luhn check digit that makes ``digits`` + it a valid card number."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return (10 - total % 10) % 10


def card_number(rng: random.Random) -> int:
    """A 16-digit Visa (4…) or Mastercard (51–55…) number with a valid Luhn digit."""
    prefix = "4" if rng.random() < 0.6 else str(rng.randint(51, 55))
    body = prefix + "".join(str(rng.randrange(10)) for _ in range(15 - len(prefix)))
    return int(body + str(luhn_digit(body)))


def person(rng: random.Random, pid: int) -> tuple[int, str, str, int, int, str, str, str]:
    """One row: (id, first_name, last_name, age, credit_card, address, city_of_birth, gender)."""
    roll = rng.random()
    gender = GENDERS[0] if roll < 0.49 else GENDERS[1] if roll < 0.98 else GENDERS[2]
    pool = FEMALE if gender == "Female" else MALE if gender == "Male" else FEMALE + MALE
    first = rng.choice(pool)
    last = rng.choice(LAST)
    if rng.random() < 0.08:
        last = f"{last}-{rng.choice(LAST)}"
    address = f"{rng.randint(1, 9999)} {rng.choice(STREETS)} {rng.choice(SUFFIXES)}"
    age = min(99, max(18, int(rng.gauss(45, 16))))
    return pid, first, last, age, card_number(rng), address, rng.choice(CITIES), gender


def persons(first_id: int, count: int, seed: int) -> Iterator[tuple[int, str, str, int, int, str, str, str]]:
    """``count`` rows with ids ``first_id`` … ``first_id + count - 1``; row 1 always holds the known plaintext."""
    rng = random.Random(f"tdebench-crud-{seed}-{first_id}")
    for pid in range(first_id, first_id + count):
        row = person(rng, pid)
        if pid == 1:
            row = (row[0], row[1], row[2], row[3], row[4], f"12 {KNOWN_STREET}", KNOWN_CITY, row[7])
        yield row


def write_tbl(path: Path, rows: Iterator[tuple[object, ...]]) -> int:
    """Write rows as ``a|b|…|`` lines (temp file + rename); returns the row count."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write("|".join(str(v) for v in row) + "|\n")
            count += 1
    os.replace(tmp, path)
    return count


def ensure_files(root: Path, rows: int, stage_rows: int, seed: int) -> tuple[Path, dict[str, int]]:
    """Directory with ``persons.tbl`` (ids 1…rows) and ``persons_stage.tbl`` (ids rows+1…rows+stage_rows)."""
    target = root / f"persons-v{FORMAT_VERSION}-r{rows}-s{seed}"
    target.mkdir(parents=True, exist_ok=True)
    counts = {}
    main = target / "persons.tbl"
    if not main.is_file():
        write_tbl(main, persons(1, rows, seed))
    counts["persons"] = rows
    stage = target / f"persons_stage-{stage_rows}.tbl"
    if not stage.is_file():
        write_tbl(stage, persons(rows + 1, stage_rows, seed))
    counts["persons_stage"] = stage_rows
    return target, counts


def read_tbl(path: Path) -> Iterator[tuple[int, str, str, int, int, str, str, str]]:
    """Typed rows back from a file written by :func:`write_tbl` (for engines loaded through executemany)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            f = line.rstrip("\n").split("|")
            yield int(f[0]), f[1], f[2], int(f[3]), int(f[4]), f[5], f[6], f[7]
