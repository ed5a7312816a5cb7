-- Runs once when the PostgreSQL container initialises its data directory: the login role of
-- the service (least privilege; the migrations grant it what it needs) and the database.
-- Passwords come from the compose file's environment; change them for anything real.
CREATE ROLE ewall_app LOGIN PASSWORD 'ewall-app-password' NOSUPERUSER NOBYPASSRLS NOCREATEDB;
CREATE DATABASE ewall;
