-- An owner erasure leaves one `erased` event (its receipt) in the outbox.
ALTER TABLE "domain_events" DROP CONSTRAINT "domain_events_kind_check";--> statement-breakpoint
ALTER TABLE "domain_events" ADD CONSTRAINT "domain_events_kind_check" CHECK ("kind" in ('created', 'extracted', 'deduped', 'replaced', 'merged', 'archived', 'deleted', 'feedback', 'erased'));