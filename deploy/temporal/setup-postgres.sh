#!/bin/sh
# Creates or upgrades Temporal's two databases (persistence and visibility) on its Postgres, with the
# schema tool of the admin-tools image matching the server's version. Safe to run on every `up`:
# creating a database that exists is a no-op, and an initialised schema is only brought up to date.
set -eu

# The connection comes from the environment (SQL_USER, SQL_PASSWORD, SQL_PORT), so the password is on
# no command line.
sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$SQL_HOST" "$@"
}

for db in temporal temporal_visibility; do
  case "$db" in
    temporal) schema=/etc/temporal/schema/postgresql/v12/temporal/versioned ;;
    *) schema=/etc/temporal/schema/postgresql/v12/visibility/versioned ;;
  esac
  sql_tool --db "$db" create-database
  if ! sql_tool --db "$db" update-schema -d "$schema"; then
    echo "no schema in $db yet: setting it up"
    sql_tool --db "$db" setup-schema -v 0.0
    sql_tool --db "$db" update-schema -d "$schema"
  fi
done
echo "Temporal's schema is up to date"
