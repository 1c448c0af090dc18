import { findNearestLiveMemories, writeLookups } from '../../db/queries/memory-writes.js';
import { DEDUPE_CANDIDATES, decideWrite, dedupedResponse, finishDuplicate } from './dedupe.js';
import { consumedAmounts, reserveWrite, storedBytes } from './budget.js';
import { embed } from './embed.js';
import { mergedResponse, mergeIntoExisting } from './evolve.js';
import { settle } from './idempotency.js';
import { extractAndPlan, insertPlanned } from './insert.js';
import { safetyOf } from './response.js';
import type { MemoryWriteDeps, WriteRequest, WriteResult } from './types.js';
import { checkLookups, checkMetadataSize, lookupKeys, prepareWrite } from './validate.js';

export type { MemoryWriteDeps, WriteRequest, WriteResult } from './types.js';
export { memorySpace } from './validate.js';
export { assessedColumns } from './rows.js';
export { MAX_CHILDREN, MIN_IMPORTANCE_TO_EXTRACT } from './extract.js';

/**
 * POST /v1/memories: owner space → assessment (confidence, volatility, claims) → chunking →
 * (in-process embedder: embedding) → one lookup (idempotency replay, the memory to replace, exact
 * duplicate, memories holding the same claims, nearest memories), with the quota reservation
 * running beside it → (remote
 * embedder: embedding, nearest memories) → lifecycle decision (dedupe, conflict, correction,
 * evolution) → extraction (children embedded in one batch) → one transaction (supersessions,
 * memory + chunks, children + links, lifecycle events, idempotency record, audit) → commit of
 * the reservation.
 *
 * On PostgreSQL a new memory costs five statements in two round trips, the children of an
 * extraction included: the lookup (with the nearest memories when the embedder runs in-process; a
 * statement of its own otherwise), then `begin`, the lock, one statement writing everything and
 * `commit`, sent together. Metering
 * (limits on) adds its reservation, in parallel with the lookup, and its commit.
 *
 * The plan's budget (memory-write/budget.ts): over the cap of writes or stored bytes nothing is
 * written (`CAP_EXCEEDED`); over the embedding budget the memory is stored without vectors
 * (`embedding: "skipped_due_to_budget"`, no `chunks`): keyword search finds it, vector search and
 * semantic dedupe do not. Vectors an in-process embedder made before the reservation are then
 * dropped, with the nearest memories found with them, so the outcome does not depend on where the
 * embedder runs. Over the extraction budget the memory is stored without children.
 *
 * The stages live in `memory-write/`: validate (the request and what the lookup says of it),
 * budget (what the plan grants), dedupe (is it stored already, and the lifecycle decision),
 * evolve (merge into a memory, or supersede), extract (children), insert (the rows and the
 * transaction), each testable alone. This function only orders them, and every await between
 * stages is here, so the hot path's round trips are counted in one place.
 */
export async function writeMemory(
  deps: MemoryWriteDeps,
  request: WriteRequest,
): Promise<WriteResult> {
  const write = prepareWrite(request);
  checkMetadataSize(write.metadata, deps.config.metadataMaxBytes);
  // An in-process embedder costs less than a round trip: embed first and fetch the nearest
  // memories with the lookups. A remote one runs only once the write is known to need it, after
  // the quota reservation.
  const early = deps.embeddings.inProcess ? await embed(deps.embeddings, write.chunks) : undefined;
  // The quota reservation runs beside the lookup (another connection), so metering adds no round
  // trip; a write the lookup settles (a replay, an exact duplicate, an error) gives it back.
  const reserving = reserveWrite(deps, write);
  // Its refusal is handled where it is awaited; until then it must not count as unhandled.
  reserving.catch(() => undefined);
  const giveBack = () =>
    reserving.then(
      (budget) => budget.reservation.release(),
      () => undefined,
    );
  const safety = safetyOf(request);
  let lookups: Awaited<ReturnType<typeof writeLookups>>;
  try {
    lookups = await writeLookups(deps.db, write.space, lookupKeys(write, early));
    const replay = checkLookups(write, lookups);
    if (replay) {
      await giveBack();
      return replay;
    }
  } catch (error) {
    await giveBack();
    throw error;
  }
  if (lookups.duplicateId) {
    await giveBack();
    return finishDuplicate(deps.db, write, dedupedResponse(lookups.duplicateId, safety), 'exact');
  }

  const budget = await reserving;
  const { reservation } = budget;
  try {
    let vectors: number[][] = [];
    let nearest = budget.embed ? lookups.nearest : [];
    if (budget.embed) {
      vectors = early ?? (await embed(deps.embeddings, write.chunks));
      if (!early && vectors[0] && !write.replacesId)
        nearest = await findNearestLiveMemories(
          deps.db,
          write.space,
          vectors[0],
          DEDUPE_CANDIDATES,
        );
    }
    const decision = decideWrite(write, nearest, lookups.claimHolders, deps.config.dedupe);

    let result: WriteResult;
    let rowsWritten = 0;
    let consumed = { storageBytes: 0, embedded: [] as string[], extracted: false };
    if (decision.kind === 'dedupe') {
      const response = dedupedResponse(decision.memoryId, safety, decision.dedupeKind);
      result = await finishDuplicate(deps.db, write, response, decision.dedupeKind);
    } else if (decision.kind === 'merge') {
      const response = mergedResponse(write, decision, safety, budget.embed);
      result = await settle(deps.db, write, () =>
        mergeIntoExisting(deps, write, decision, vectors, response),
      );
      rowsWritten = write.chunks.length;
      consumed = {
        storageBytes: Math.max(
          0,
          // The metadata the merge sets counts in full (the previous metadata is not known here).
          storedBytes(request.payload.text, request.payload.metadata) -
            storedBytes(decision.previousText),
        ),
        embedded: budget.embed ? write.chunks : [],
        extracted: false,
      };
    } else {
      const { plan, extraction, childTexts } = await extractAndPlan(
        deps,
        write,
        decision,
        vectors,
        safety,
        { embedded: budget.embed, extractionRefused: budget.extractionRefused },
      );
      result = await settle(deps.db, write, () => insertPlanned(deps, write, plan));
      rowsWritten = plan.rows;
      consumed = {
        storageBytes: storedBytes(request.payload.text, write.metadata),
        embedded: budget.embed ? [...write.chunks, ...childTexts] : [],
        extracted: extraction.outcome.status !== 'skipped',
      };
    }
    // A duplicate, or a replay of the write that won the idempotency key, stored nothing.
    const storedNothing = result.response.deduped || !result.audited;
    await (storedNothing
      ? reservation.release()
      : reservation.commit(consumedAmounts(budget, consumed)));
    if (rowsWritten > 0 && result.audited) deps.onRowsWritten?.(rowsWritten);
    return result;
  } catch (error) {
    await reservation.release();
    throw error;
  }
}
