#!/bin/sh
# Runs once, after initdb.sql: the service role's password from the compose environment
# (EWALL_APP_DB_PASSWORD, required there), passed to psql as a variable so it is quoted as a
# literal by psql itself and never spliced into the SQL text.
psql -v ON_ERROR_STOP=1 -v app_password="$EWALL_APP_DB_PASSWORD" \
  --username "$POSTGRES_USER" --dbname postgres <<'SQL'
ALTER ROLE ewall_app PASSWORD :'app_password';
SQL
