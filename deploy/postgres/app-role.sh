#!/bin/sh
# The application's role (docker-entrypoint-initdb.d, first start only): it logs in, owns no
# table and is no superuser; `hat db upgrade --grant hat_app` (the migrate service) gives it
# its privileges on the hat database after each upgrade. See docs/operations.md.
set -e
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
     --set=pw="$HAT_APP_DB_PASSWORD" <<'SQL'
CREATE ROLE hat_app LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'pw';
SQL
