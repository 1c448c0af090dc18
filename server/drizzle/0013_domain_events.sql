CREATE TABLE "domain_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "domain_events_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"workspace_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"memory_id" uuid,
	"rule" text NOT NULL,
	"related_memory_id" uuid,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "domain_events_kind_check" CHECK ("kind" in ('created', 'extracted', 'deduped', 'replaced', 'merged', 'archived', 'deleted', 'feedback'))
);
--> statement-breakpoint
ALTER TABLE "domain_events" ADD CONSTRAINT "domain_events_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "domain_events_memory_idx" ON "domain_events" USING btree ("memory_id","created_at");--> statement-breakpoint
CREATE INDEX "domain_events_workspace_seq_idx" ON "domain_events" USING btree ("workspace_id","seq");