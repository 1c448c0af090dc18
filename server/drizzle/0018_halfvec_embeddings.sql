DROP INDEX "memory_chunks_embedding_256_hnsw";--> statement-breakpoint
DROP INDEX "memory_chunks_embedding_384_hnsw";--> statement-breakpoint
DROP INDEX "memory_chunks_embedding_768_hnsw";--> statement-breakpoint
DROP INDEX "memory_chunks_embedding_1024_hnsw";--> statement-breakpoint
DROP INDEX "memory_chunks_embedding_1536_hnsw";--> statement-breakpoint
ALTER TABLE "memory_chunks" ALTER COLUMN "embedding" SET DATA TYPE halfvec USING "embedding"::halfvec;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_256_hnsw" ON "memory_chunks" USING hnsw (("embedding"::halfvec(256)) halfvec_cosine_ops) WHERE "embedding_dimension" = 256;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_384_hnsw" ON "memory_chunks" USING hnsw (("embedding"::halfvec(384)) halfvec_cosine_ops) WHERE "embedding_dimension" = 384;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_768_hnsw" ON "memory_chunks" USING hnsw (("embedding"::halfvec(768)) halfvec_cosine_ops) WHERE "embedding_dimension" = 768;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_1024_hnsw" ON "memory_chunks" USING hnsw (("embedding"::halfvec(1024)) halfvec_cosine_ops) WHERE "embedding_dimension" = 1024;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_1536_hnsw" ON "memory_chunks" USING hnsw (("embedding"::halfvec(1536)) halfvec_cosine_ops) WHERE "embedding_dimension" = 1536;