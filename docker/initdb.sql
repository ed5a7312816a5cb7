-- Runs once when the PostgreSQL container initialises its data directory: the login role of
-- the service (least privilege; the migrations grant it what it needs) and the database.
-- Its password is set by initdb-password.sh from the environment: none is written here.
CREATE ROLE ewall_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB;
CREATE DATABASE ewall;
