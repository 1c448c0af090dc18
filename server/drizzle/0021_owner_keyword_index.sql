-- btree_gin lets one GIN index hold the owner beside the words: a keyword search then reads only
-- its owner's chunks that hold a query word, not every owner's (contrib; PGlite loads it too).
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE INDEX "memory_chunks_keyword_owner_gin" ON "memory_chunks" USING gin ("owner_id","tsv");--> statement-breakpoint
DROP INDEX "memory_chunks_tsv_gin";
