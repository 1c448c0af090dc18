CREATE TABLE "workspace_entitlements" (
	"workspace_id" uuid PRIMARY KEY NOT NULL,
	"plan" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"period_start" timestamp with time zone NOT NULL,
	"period_end" timestamp with time zone NOT NULL,
	"entitlement_source" text NOT NULL,
	"grace_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workspace_entitlements_status_check" CHECK ("workspace_entitlements"."status" in ('active', 'past_due', 'canceled')),
	CONSTRAINT "workspace_entitlements_source_check" CHECK ("workspace_entitlements"."entitlement_source" in ('billing', 'internal_grant')),
	CONSTRAINT "workspace_entitlements_period_check" CHECK ("workspace_entitlements"."period_end" > "workspace_entitlements"."period_start")
);
--> statement-breakpoint
CREATE TABLE "usage_counters" (
	"workspace_id" uuid NOT NULL,
	"window_kind" text NOT NULL,
	"window_start" date NOT NULL,
	"resource" text NOT NULL,
	"used" bigint DEFAULT 0 NOT NULL,
	"reserved" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "usage_counters_workspace_id_window_kind_window_start_resource_pk" PRIMARY KEY("workspace_id","window_kind","window_start","resource"),
	CONSTRAINT "usage_counters_window_kind_check" CHECK ("usage_counters"."window_kind" in ('day', 'period', 'total')),
	CONSTRAINT "usage_counters_amounts_check" CHECK ("usage_counters"."used" >= 0 and "usage_counters"."reserved" >= 0)
);
--> statement-breakpoint
CREATE TABLE "usage_reservations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"workspace_id" uuid NOT NULL,
	"amounts" jsonb NOT NULL,
	"state" text DEFAULT 'reserved' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expired_at" timestamp with time zone,
	CONSTRAINT "usage_reservations_state_check" CHECK ("usage_reservations"."state" in ('reserved', 'expired'))
);
--> statement-breakpoint
ALTER TABLE "workspace_entitlements" ADD CONSTRAINT "workspace_entitlements_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_counters" ADD CONSTRAINT "usage_counters_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_reservations" ADD CONSTRAINT "usage_reservations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "usage_reservations_open_expiry_idx" ON "usage_reservations" USING btree ("expires_at") WHERE "usage_reservations"."state" = 'reserved';