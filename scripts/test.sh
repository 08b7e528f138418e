#!/usr/bin/env bash
# Sets up everything the test suite needs on a fresh Debian 12 machine, then runs it.
#   - Debian packages for the server engines (installed when running as root and missing)
#   - tdebench and its test dependencies (pip, editable)
# Extra arguments go to pytest, e.g.  bash scripts/test.sh -k sqlite
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(mariadb-server mariadb-backup mariadb-plugin-hashicorp-key-management galera-4 rsync socat postgresql postgresql-contrib gocryptfs fuse3 sysbench chromium)
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # tdebench starts private instances; the distribution's default services are not needed
    (service mariadb stop; service postgresql stop) >/dev/null 2>&1 || true
  else
    echo "note: missing ${missing[*]}; their engine tests will be skipped (install them as root to run them)"
  fi
fi

# gocryptfs runs as the servers' unprivileged user, which must open /dev/fuse itself (fusermount3's set-uid bit
# is not honoured in every sandbox); some fresh machines here come with 0600 instead of Debian's usual 0666
if [ "$(id -u)" = 0 ] && [ -c /dev/fuse ]; then chmod 0666 /dev/fuse; fi

python3 -m pip install -q --disable-pip-version-check -e '.[test]'
set +e
# Three workers (pytest-xdist) on this 2-core machine: much of the suite waits on servers starting, disks and
# sleeps (docs/testing.md has the timings). A test class (or else module) stays on one worker, with its fixtures;
# the longest ones (marked slow) are handed out first (tests/conftest.py), so none starts at the end.
# TDEBENCH_TEST_WORKERS=0: serial. --heavy: the long scenarios too (docs/testing.md).
workers="${TDEBENCH_TEST_WORKERS:-3}"
# --durations: every run (CI included) prints the 40 slowest tests, which is where the suite time goes
python3 -m pytest -q -p no:cacheprovider --timeout 900 -n "$workers" --dist loadscope --no-loadscope-reorder \
  --durations=40 --durations-min=20 "$@"
code=$?
set -e
# pytest exits 5 when nothing was collected: that is a broken suite, not a pass
if [ "$code" = 5 ]; then echo "no tests ran" >&2; exit 1; fi
exit "$code"
