CREATE TABLE "job_runs" (
	"name" text PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"last_started_at" timestamp with time zone NOT NULL,
	"last_finished_at" timestamp with time zone,
	"last_duration_ms" integer,
	"last_error" text,
	"attempt" integer DEFAULT 1 NOT NULL,
	"runs" bigint DEFAULT 0 NOT NULL,
	"failures" bigint DEFAULT 0 NOT NULL
);
