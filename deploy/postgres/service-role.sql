-- The role the API and the worker connect as, amy_service (docs/operations.md#database-roles): it reads and writes
-- the service's rows, uses their sequences and calls the service's functions (create_queued_turn,
-- append_turn_events), and nothing else. No DDL (no CREATE, ALTER or DROP in the schema), no TRUNCATE, no
-- temporary tables, no access to the migrations' history; it is no superuser and owns nothing, so neither
-- pg_authid nor a server file is within its reach. Migrations keep running as the schema's owner, the role that
-- runs this file.
--
-- Run by psql, as the owner, after every `prisma migrate deploy` (deploy/compose.yaml's db-roles service, and
-- test/e2e/service-role.test.ts, on this same file):
--
--   AMY_SERVICE_DB_PASSWORD=… psql -v ON_ERROR_STOP=1 -f deploy/postgres/service-role.sql <the owner's URL>
--
-- Idempotent, on a new database as on one upgraded from a release before this role: it creates the role if
-- missing, (re)sets its password from AMY_SERVICE_DB_PASSWORD (the environment, never the command line), and
-- grants on what exists; default privileges cover what later migrations create as the owner.
\set ON_ERROR_STOP on

\getenv service_password AMY_SERVICE_DB_PASSWORD
\if :{?service_password}
\else
  \set service_password ''
\endif
SELECT :'service_password' = '' AS no_password \gset
\if :no_password
  DO $$ BEGIN RAISE EXCEPTION 'set AMY_SERVICE_DB_PASSWORD: the password of the amy_service role'; END $$;
\endif

SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'amy_service') AS role_missing \gset
\if :role_missing
  CREATE ROLE amy_service;
\endif
ALTER ROLE amy_service WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'service_password';

-- Into this database, and its one schema, to use what is there. Nobody but the owner creates in the schema
-- (Postgres 15 and later already say so; older clusters do not), and no role makes temporary tables.
SELECT current_database() AS database \gset
GRANT CONNECT ON DATABASE :"database" TO amy_service;
REVOKE TEMPORARY ON DATABASE :"database" FROM PUBLIC, amy_service;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO amy_service;

-- What exists now.
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO amy_service;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO amy_service;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO amy_service;

-- What later migrations create, run as this same owner.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO amy_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO amy_service;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO amy_service;

-- The migrations' history is the owner's alone: the service never reads it, and must not be able to rewrite it.
DO $$
BEGIN
  IF to_regclass('public._prisma_migrations') IS NOT NULL THEN
    REVOKE ALL ON TABLE public._prisma_migrations FROM amy_service;
  END IF;
END
$$;
