ALTER TABLE "memory_chunks" ADD COLUMN "context_text" text;--> statement-breakpoint
ALTER TABLE "memory_chunks" DROP COLUMN "tsv";--> statement-breakpoint
ALTER TABLE "memory_chunks" ADD COLUMN "tsv" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('english', "text"), 'A') || setweight(to_tsvector('english', coalesce("context_text", '')), 'D')) STORED;--> statement-breakpoint
CREATE INDEX "memory_chunks_tsv_gin" ON "memory_chunks" USING gin ("tsv");
