ALTER TABLE "memories" ADD COLUMN "archive_rule" text;--> statement-breakpoint
-- Archives made before this column: the rule of each memory's latest `archived` event.
UPDATE "memories" m SET "archive_rule" = e."rule"
FROM (
  SELECT DISTINCT ON ("memory_id") "memory_id", "rule" FROM "memory_lifecycle_events"
  WHERE "event" = 'archived' ORDER BY "memory_id", "created_at" DESC
) e
WHERE m."id" = e."memory_id" AND m."lifecycle_state" = 'archived';
