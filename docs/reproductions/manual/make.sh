#!/bin/sh
# Regenerates the manual-mode material of docs/reproductions (run from the repository root):
#   sh docs/reproductions/manual/make.sh
# Everything here is tdebench's own output: `tdebench tde-setup` (the DBA's steps, placeholders only) and
# `tdebench script` (TPC-H streams for the server's console client). See docs/manual-mode.md.
set -eu
out=docs/reproductions/manual
tdebench=${TDEBENCH:-"python3 -m tdebench"}
setup() { # DIR ENGINE SPEC
    mkdir -p "$out/$1/tde-setup"
    name=$(printf '%s-%s' "$2" "$3" | tr ':' '-')
    $tdebench tde-setup --engine "$2" --encryption "$3" > "$out/$1/tde-setup/$name.txt"
}
# 000: TPC-H SF 1 on SQL Server 2022, Oracle 19c and MySQL 8.0/9.2 with AES-128/192/256 (MySQL: AES-256 only)
for spec in none tde:aes-128 tde:aes-192 tde:aes-256; do
    setup 000 sqlserver "$spec"
    setup 000 oracle "$spec"
done
setup 000 mysql none
setup 000 mysql tde:aes-256-cbc
for dialect in tsql oracle mysql; do
    $tdebench script --dialect "$dialect" --test power --sf 1 --out "$out/000/scripts/$dialect-power" > /dev/null
    $tdebench script --dialect "$dialect" --test throughput --sf 1 --streams 2 \
        --out "$out/000/scripts/$dialect-throughput" > /dev/null
done
# 001: SQL Server 2019 (AES-128/192/256, 3DES) and MySQL 8.0 (AES-256 only) CRUD on a 10M-row table
for spec in none tde:aes-128 tde:aes-192 tde:aes-256 tde:3des; do setup 001 sqlserver "$spec"; done
setup 001 mysql none
setup 001 mysql tde:aes-256-cbc
# 002: MySQL 8 and MariaDB, AES-128/192/256, TPROC-C
setup 002 mysql none
setup 002 mysql tde:aes-256-cbc
for spec in none tde:aes-128-cbc tde:aes-192-cbc tde:aes-256-cbc; do setup 002 mariadb "$spec"; done
# 004: SQL Server 2017 TDE, backup with and without compression
setup 004 sqlserver none
setup 004 sqlserver tde:aes-256
