#!/bin/bash
# Copy a finished run's summary files (not its raw samples) into benchmarks/results/reproductions/NAME, so the
# figures in docs/reproductions.md can be checked: manifest, verification and the report (its CSVs hold every figure).
# usage: benchmarks/results/keep.sh RUN_DIR NAME
set -euo pipefail
run=$1; name=$2
dest=$(dirname "$0")/reproductions/$name
rm -rf "$dest"; mkdir -p "$dest/report"
cp "$run"/manifest.json "$run"/verification.json "$dest"/
[ -f "$run/backups.json" ] && cp "$run/backups.json" "$dest"/
for f in index.html summary.md summary.csv overhead.csv anova.csv ciphers.json; do
    [ -f "$run/report/$f" ] && cp "$run/report/$f" "$dest/report/"
done
du -sh "$dest"
