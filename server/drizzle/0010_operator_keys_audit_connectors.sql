CREATE TABLE "workspace_connector_settings" (
	"workspace_id" uuid PRIMARY KEY NOT NULL,
	"settings" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "scope" text DEFAULT 'tenant' NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "route" text;--> statement-breakpoint
ALTER TABLE "workspace_connector_settings" ADD CONSTRAINT "workspace_connector_settings_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;