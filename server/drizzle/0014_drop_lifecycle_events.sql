-- The lifecycle history so far moves into the outbox, in its order, before its table goes.
INSERT INTO "domain_events" ("workspace_id", "kind", "memory_id", "rule", "related_memory_id", "details", "created_at")
SELECT "workspace_id", "event", "memory_id", "rule", "related_memory_id", "details", "created_at"
FROM "memory_lifecycle_events"
WHERE "event" IN ('created', 'extracted', 'deduped', 'replaced', 'merged', 'archived', 'deleted', 'feedback')
ORDER BY "created_at", "id";--> statement-breakpoint
DROP TABLE "memory_lifecycle_events" CASCADE;
