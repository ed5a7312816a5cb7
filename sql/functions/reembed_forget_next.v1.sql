-- The next model's vector of a chunk whose live vector is replaced during a re-embed run
-- (migration 20261205_0050).
--
-- Ingestion encodes a kept chunk again when its document's context changed (a new title, a
-- summary published later: sql/ingest.sql, refresh_embeddings). If the run had already
-- written that chunk's next vector, the vector was made from the old context and would
-- become the live one at the switch. While a run's columns exist, a trigger on chunks
-- (reembed.add_next_columns creates it, the switch and a cancel drop it first) calls this
-- function for every UPDATE that sets chunks.embedding: the next vector is forgotten, so
-- the run's catch-up encodes the chunk again from what its document says now, and the
-- switch waits for it (it switches only when no chunk lacks a next vector).
--
-- A batch that read the chunk before the change and writes after it is refused by the
-- batch's own statement (reembed.write_batch compares the row version it read).
--
-- plpgsql resolves the column names when it runs, so the function exists whether or not a
-- run's columns do; only the trigger, present exactly while they are, calls it.

CREATE OR REPLACE FUNCTION ewall_reembed_forget_next()
RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    NEW.embedding_next := NULL;
    NEW.embedding_next_model := NULL;
    RETURN NEW;
END
$fn$;
