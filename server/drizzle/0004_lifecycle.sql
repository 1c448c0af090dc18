CREATE TABLE "memory_lifecycle_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workspace_id" uuid NOT NULL,
	"memory_id" uuid NOT NULL,
	"event" text NOT NULL,
	"rule" text NOT NULL,
	"related_memory_id" uuid,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "claims" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "claim_keys" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "pinned" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "source_weight" real DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "memories" ADD COLUMN "priority_score" real;--> statement-breakpoint
ALTER TABLE "memory_lifecycle_events" ADD CONSTRAINT "memory_lifecycle_events_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_lifecycle_events" ADD CONSTRAINT "memory_lifecycle_events_memory_id_memories_id_fk" FOREIGN KEY ("memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memory_lifecycle_events_memory_idx" ON "memory_lifecycle_events" USING btree ("memory_id","created_at");--> statement-breakpoint
CREATE INDEX "memories_claim_keys_gin" ON "memories" USING gin ("claim_keys");