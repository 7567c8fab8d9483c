-- Pigeon's PostgreSQL schema, version 4: reserved for the
-- acknowledgements' migration, made on another branch (see
-- schema/0007_reserved.sql).
SELECT 1;
