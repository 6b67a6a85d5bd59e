#!/usr/bin/env bash
# Makes sure the tests can have PostgreSQL: DATABASE_URL, a server on 127.0.0.1:5432, or the
# machine's initdb/pg_ctl (the test harness then starts a throw-away cluster itself). On a
# machine with none of these, installs Debian's PostgreSQL server binaries when it can.
set -euo pipefail

if [ -n "${DATABASE_URL:-}" ]; then exit 0; fi
if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then exit 0; fi
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then exit 0; fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-postgres: no PostgreSQL found; installing Debian's postgresql package" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  exit 0
fi
echo "ensure-postgres: no PostgreSQL: set DATABASE_URL, run a server on 127.0.0.1:5432, or install PostgreSQL" >&2
exit 1
