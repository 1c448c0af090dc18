CREATE TABLE "memory_pins" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workspace_id" uuid NOT NULL,
	"owner_id" text NOT NULL,
	"owner_type" text NOT NULL,
	"memory_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "memory_pins_owner_memory_unique" UNIQUE("workspace_id","owner_type","owner_id","memory_id")
);
--> statement-breakpoint
CREATE TABLE "context_feedback" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workspace_id" uuid NOT NULL,
	"request_id" text NOT NULL,
	"rating" text,
	"helpful_memory_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"unhelpful_memory_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"comment" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memory_pins" ADD CONSTRAINT "memory_pins_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_pins" ADD CONSTRAINT "memory_pins_memory_id_memories_id_fk" FOREIGN KEY ("memory_id") REFERENCES "public"."memories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "context_feedback" ADD CONSTRAINT "context_feedback_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "memory_pins_memory_id_idx" ON "memory_pins" USING btree ("memory_id");--> statement-breakpoint
CREATE INDEX "context_feedback_workspace_request_idx" ON "context_feedback" USING btree ("workspace_id","request_id");