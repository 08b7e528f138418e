"""Seeded, realistic Persons rows for the CRUD workload, written once per (rows, staging rows, seed) and cached.

Columns follow the TDE framework study's ``randominput`` tables: id, first name, last name, age, credit-card
number (16 digits, Luhn-valid, Visa/Mastercard prefixes), street address, city of birth (some with non-ASCII
letters, so byte counts differ from character counts) and gender. Values come from :class:`random.Random`
seeded with the run's seed and the first id of each block of :data:`CHUNK_ROWS` ids, so every config of a run
(and every run with the same seed) gets identical data, whichever number of processes wrote the files: blocks
are generated in parallel (one process per CPU) and written in id order. 10M rows take ~1 min on 2 cores.

Files are ``|``-separated with a trailing ``|`` per line, like TPC-H ``.tbl`` files, so every engine's
``bulk_load`` reads them. No value contains ``|``, ``\\`` or a newline.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tdebench.engines.toolkit.process import own_children
from tdebench.lifeline import forked_child

FORMAT_VERSION = 2  # 2: rows seeded per block of CHUNK_ROWS ids (parallel generation), one draw per card body
CHUNK_ROWS = 100_000
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


_DOUBLED = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)  # digit -> sum of the digits of 2 x digit


def luhn_digit(digits: str) -> int:
    """The Luhn check digit that makes ``digits`` + it a valid card number."""
    total = sum(_DOUBLED[int(d)] for d in digits[::-1][::2]) + sum(int(d) for d in digits[::-1][1::2])
    return (10 - total % 10) % 10


def card_number(rng: random.Random) -> int:
    """A 16-digit Visa (4…) or Mastercard (51–55…) number with a valid Luhn digit."""
    prefix = "4" if rng.random() < 0.6 else str(rng.randint(51, 55))
    width = 15 - len(prefix)
    body = prefix + f"{rng.randrange(10 ** width):0{width}d}"
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


def _chunk(first_id: int, count: int, seed: int) -> Iterator[tuple[int, str, str, int, int, str, str, str]]:
    """Rows ``first_id`` … ``first_id + count - 1`` of one block, from the block's own generator."""
    rng = random.Random(f"tdebench-crud-{seed}-{first_id}")
    for pid in range(first_id, first_id + count):
        row = person(rng, pid)
        if pid == 1:
            row = (row[0], row[1], row[2], row[3], row[4], f"12 {KNOWN_STREET}", KNOWN_CITY, row[7])
        yield row


def chunks(first_id: int, count: int) -> list[tuple[int, int]]:
    """(first id, rows) of the blocks covering ``first_id`` … ``first_id + count - 1``."""
    return [(start, min(CHUNK_ROWS, first_id + count - start))
            for start in range(first_id, first_id + count, CHUNK_ROWS)]


def persons(first_id: int, count: int, seed: int) -> Iterator[tuple[int, str, str, int, int, str, str, str]]:
    """``count`` rows with ids ``first_id`` … ``first_id + count - 1``; row 1 always holds the known plaintext."""
    for start, rows in chunks(first_id, count):
        yield from _chunk(start, rows, seed)


def tbl_lines(rows: Iterator[tuple[object, ...]]) -> str:
    """Rows as ``a|b|…|`` lines."""
    return "".join("|".join(str(v) for v in row) + "|\n" for row in rows)


def _chunk_text(args: tuple[int, int, int]) -> str:
    first_id, count, seed = args
    return tbl_lines(_chunk(first_id, count, seed))


def write_persons(path: Path, first_id: int, count: int, seed: int, workers: int | None = None) -> int:
    """Write the rows of :func:`persons` to ``path`` (temp file + rename), blocks generated by ``workers``
    processes (default: one per CPU; 1: in this process) and written in id order; returns the row count."""
    parts = [(start, rows, seed) for start, rows in chunks(first_id, count)]
    workers = max(1, min(workers or os.cpu_count() or 1, len(parts) or 1))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
            if workers == 1:
                for part in parts:
                    handle.write(_chunk_text(part))
            else:
                with ProcessPoolExecutor(max_workers=workers, initializer=forked_child) as pool:
                    texts = pool.map(_chunk_text, parts)  # submits every part: the workers are started
                    own_children()
                    for text in texts:
                        handle.write(text)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return count


def ensure_files(root: Path, rows: int, stage_rows: int, seed: int) -> tuple[Path, dict[str, int]]:
    """Directory with ``persons.tbl`` (ids 1…rows) and ``persons_stage.tbl`` (ids rows+1…rows+stage_rows)."""
    target = root / f"persons-v{FORMAT_VERSION}-r{rows}-s{seed}"
    target.mkdir(parents=True, exist_ok=True)
    counts = {}
    main = target / "persons.tbl"
    if not main.is_file():
        write_persons(main, 1, rows, seed)
    counts["persons"] = rows
    stage = target / f"persons_stage-{stage_rows}.tbl"
    if not stage.is_file():
        write_persons(stage, rows + 1, stage_rows, seed)
    counts["persons_stage"] = stage_rows
    return target, counts


def read_tbl(path: Path) -> Iterator[tuple[int, str, str, int, int, str, str, str]]:
    """Typed rows back from a file written by :func:`write_tbl` (for engines loaded through executemany)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            f = line.rstrip("\n").split("|")
            yield int(f[0]), f[1], f[2], int(f[3]), int(f[4]), f[5], f[6], f[7]
