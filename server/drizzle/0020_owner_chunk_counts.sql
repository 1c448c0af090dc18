CREATE TABLE "owner_chunk_counts" (
	"workspace_id" uuid NOT NULL,
	"owner_type" text NOT NULL,
	"owner_id" text NOT NULL,
	"chunks" bigint NOT NULL,
	CONSTRAINT "owner_chunk_counts_workspace_id_owner_type_owner_id_pk" PRIMARY KEY("workspace_id","owner_type","owner_id")
);
--> statement-breakpoint
ALTER TABLE "owner_chunk_counts" ADD CONSTRAINT "owner_chunk_counts_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Kept exact by the database itself: every statement that inserts or deletes chunks (cascades
-- included) adds or takes off its rows per owner. Rows are taken in key order, so two statements that touch
-- several owners lock their counts in the same order.
CREATE FUNCTION "owner_chunk_counts_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "owner_chunk_counts" ("workspace_id", "owner_type", "owner_id", "chunks")
  SELECT "workspace_id", "owner_type", "owner_id", count(*) FROM "added_chunks"
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT ("workspace_id", "owner_type", "owner_id")
  DO UPDATE SET "chunks" = "owner_chunk_counts"."chunks" + excluded."chunks";
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "owner_chunk_counts_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "owner_chunk_counts" AS c SET "chunks" = c."chunks" - removed."chunks"
  FROM (SELECT "workspace_id", "owner_type", "owner_id", count(*) AS "chunks" FROM "removed_chunks"
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) AS removed
  WHERE c."workspace_id" = removed."workspace_id" AND c."owner_type" = removed."owner_type"
    AND c."owner_id" = removed."owner_id";
  -- An owner with no chunks left keeps no row: erasure leaves no trace of the owner's id here.
  DELETE FROM "owner_chunk_counts" AS c USING "removed_chunks" AS r
  WHERE c."workspace_id" = r."workspace_id" AND c."owner_type" = r."owner_type"
    AND c."owner_id" = r."owner_id" AND c."chunks" <= 0;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "memory_chunks_count_insert" AFTER INSERT ON "memory_chunks"
  REFERENCING NEW TABLE AS "added_chunks" FOR EACH STATEMENT EXECUTE FUNCTION "owner_chunk_counts_add"();--> statement-breakpoint
CREATE TRIGGER "memory_chunks_count_delete" AFTER DELETE ON "memory_chunks"
  REFERENCING OLD TABLE AS "removed_chunks" FOR EACH STATEMENT EXECUTE FUNCTION "owner_chunk_counts_remove"();--> statement-breakpoint
-- The chunks stored before: counted once, after the triggers exist (creating them locks out writers until the migration commits).
INSERT INTO "owner_chunk_counts" ("workspace_id", "owner_type", "owner_id", "chunks")
SELECT "workspace_id", "owner_type", "owner_id", count(*) FROM "memory_chunks" GROUP BY 1, 2, 3;
