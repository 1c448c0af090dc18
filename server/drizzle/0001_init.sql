CREATE TABLE "workspaces" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"plan" text DEFAULT 'launch' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workspace_id" uuid NOT NULL,
	"name" text NOT NULL,
	"key_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "server_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memories" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workspace_id" uuid NOT NULL,
	"owner_id" text NOT NULL,
	"owner_type" text DEFAULT 'user' NOT NULL,
	"scope" text,
	"namespace" text,
	"container_tag" text,
	"text" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"memory_type" text DEFAULT 'note' NOT NULL,
	"importance" real DEFAULT 1 NOT NULL,
	"chunk_profile" text DEFAULT 'balanced' NOT NULL,
	"lifecycle_state" text DEFAULT 'active' NOT NULL,
	"confidence" real,
	"volatility" real,
	"expires_at" timestamp with time zone,
	"effective_at" timestamp with time zone,
	"content_hash" text NOT NULL,
	"idempotency_key" text,
	"parent_memory_id" uuid,
	"replaced_by_memory_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memory_chunks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"memory_id" uuid NOT NULL,
	"workspace_id" uuid NOT NULL,
	"owner_id" text NOT NULL,
	"owner_type" text NOT NULL,
	"chunk_index" integer NOT NULL,
	"text" text NOT NULL,
	"embedding" vector,
	"embedding_provider" text,
	"embedding_dimension" integer,
	"embedding_version" text,
	"tsv" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', "text")) STORED,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memory_links" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workspace_id" uuid NOT NULL,
	"source_memory_id" uuid NOT NULL,
	"target_memory_id" uuid NOT NULL,
	"relation" text DEFAULT 'related' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "memory_links_edge_unique" UNIQUE("workspace_id","source_memory_id","target_memory_id","relation")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"request_id" text NOT NULL,
	"workspace_id" uuid,
	"api_key_id" uuid,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"status" integer NOT NULL,
	"duration_ms" integer NOT NULL,
	"ip" text,
	"user_agent" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_parent_memory_id_memories_id_fk" FOREIGN KEY ("parent_memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memories" ADD CONSTRAINT "memories_replaced_by_memory_id_memories_id_fk" FOREIGN KEY ("replaced_by_memory_id") REFERENCES "public"."memories"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_chunks" ADD CONSTRAINT "memory_chunks_memory_id_memories_id_fk" FOREIGN KEY ("memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_chunks" ADD CONSTRAINT "memory_chunks_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_links" ADD CONSTRAINT "memory_links_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_links" ADD CONSTRAINT "memory_links_source_memory_id_memories_id_fk" FOREIGN KEY ("source_memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_links" ADD CONSTRAINT "memory_links_target_memory_id_memories_id_fk" FOREIGN KEY ("target_memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_workspace_id_idx" ON "api_keys" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "memories_workspace_owner_created_idx" ON "memories" USING btree ("workspace_id","owner_type","owner_id","created_at");--> statement-breakpoint
CREATE INDEX "memories_workspace_content_hash_idx" ON "memories" USING btree ("workspace_id","content_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "memories_workspace_idempotency_key_unique" ON "memories" USING btree ("workspace_id","idempotency_key") WHERE "memories"."idempotency_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "memories_expires_at_idx" ON "memories" USING btree ("expires_at") WHERE "memories"."expires_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "memories_parent_memory_id_idx" ON "memories" USING btree ("parent_memory_id");--> statement-breakpoint
CREATE UNIQUE INDEX "memory_chunks_memory_chunk_index_unique" ON "memory_chunks" USING btree ("memory_id","chunk_index");--> statement-breakpoint
CREATE INDEX "memory_chunks_workspace_owner_idx" ON "memory_chunks" USING btree ("workspace_id","owner_type","owner_id");--> statement-breakpoint
CREATE INDEX "memory_chunks_tsv_gin" ON "memory_chunks" USING gin ("tsv");--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_256_hnsw" ON "memory_chunks" USING hnsw (("embedding"::vector(256)) vector_cosine_ops) WHERE "embedding_dimension" = 256;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_384_hnsw" ON "memory_chunks" USING hnsw (("embedding"::vector(384)) vector_cosine_ops) WHERE "embedding_dimension" = 384;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_768_hnsw" ON "memory_chunks" USING hnsw (("embedding"::vector(768)) vector_cosine_ops) WHERE "embedding_dimension" = 768;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_1024_hnsw" ON "memory_chunks" USING hnsw (("embedding"::vector(1024)) vector_cosine_ops) WHERE "embedding_dimension" = 1024;--> statement-breakpoint
CREATE INDEX "memory_chunks_embedding_1536_hnsw" ON "memory_chunks" USING hnsw (("embedding"::vector(1536)) vector_cosine_ops) WHERE "embedding_dimension" = 1536;--> statement-breakpoint
CREATE INDEX "memory_links_target_memory_id_idx" ON "memory_links" USING btree ("target_memory_id");--> statement-breakpoint
CREATE INDEX "audit_log_workspace_created_idx" ON "audit_log" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_log_request_id_idx" ON "audit_log" USING btree ("request_id");