#!/bin/sh
# The official image's contract, enough for compose.yaml: initialise PGDATA once with
# POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, then run the server on all addresses.
set -eu
mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
    chown postgres /tmp/pwfile
    su postgres -c "initdb -D '$PGDATA' -U '$POSTGRES_USER' --pwfile=/tmp/pwfile --auth-host=scram-sha-256 --auth-local=trust"
    rm -f /tmp/pwfile
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    su postgres -c "pg_ctl -D '$PGDATA' -o '-c listen_addresses=' -w start"
    su postgres -c "createdb -U '$POSTGRES_USER' '$POSTGRES_DB'"
    su postgres -c "pg_ctl -D '$PGDATA' -m fast -w stop"
fi
exec su postgres -c "exec postgres -D '$PGDATA' -c listen_addresses='*'"
