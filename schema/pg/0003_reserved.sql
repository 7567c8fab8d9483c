-- Pigeon's PostgreSQL schema, version 3: reserved for the leases'
-- migration, made on another branch (see schema/0006_reserved.sql).
SELECT 1;
