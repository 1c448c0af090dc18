-- pgvector must exist before any table declares a vector column.
CREATE EXTENSION IF NOT EXISTS vector;
