import { getAuditLog, getPruningMetrics } from './audit.js';
import { createCheckout, getBillingStatus } from './billing.js';
import { getConnectorSettings, updateConnectorSettings } from './connectors.js';
import type { OperationContext } from './context.js';
import { deleteMemory } from './delete-memory.js';
import { getContext } from './get-context.js';
import { getMemory } from './get-memory.js';
import { ingest, ingestConversation } from './ingest.js';
import { listMemories } from './list-memories.js';
import { createLink, deleteLink, listLinks } from './links.js';
import { eraseOwner, exportOwner, importOwner } from './owner-data.js';
import { getPins, updatePins } from './pins.js';
import { getSearchHistory, sendContextFeedback } from './search-history.js';
import { guard, type GuardedOperation, type PolicyMachinery } from './policy.js';
import { replaySearch } from './replay-search.js';
import { searchMemories } from './search-memories.js';
import { sendFeedback } from './send-feedback.js';
import { getUsageToday } from './usage.js';
import { writeMemory } from './write-memory.js';

export type { Caller, CallerVia, OperationContext } from './context.js';
export type { GuardedOperation, PolicyMachinery } from './policy.js';

/** Every operation a door can reach, by name. */
export const OPERATIONS = {
  writeMemory,
  searchMemories,
  getContext,
  sendFeedback,
  listMemories,
  getMemory,
  deleteMemory,
  ingest,
  ingestConversation,
  replaySearch,
  getSearchHistory,
  sendContextFeedback,
  createLink,
  listLinks,
  deleteLink,
  updatePins,
  getPins,
  exportOwner,
  importOwner,
  eraseOwner,
  getUsageToday,
  getBillingStatus,
  createCheckout,
  getAuditLog,
  getPruningMetrics,
  getConnectorSettings,
  updateConnectorSettings,
} as const;

type Definitions = typeof OPERATIONS;

/** The operations as the doors call them: each through the policy wrapper. */
export type Operations = {
  [K in keyof Definitions]: Definitions[K] extends {
    run(ctx: never, call: { input: infer I }): Promise<{ output: infer O }>;
  }
    ? GuardedOperation<I, O>
    : never;
};

/** Binds every operation to the context and the policy machinery (the composition root calls it). */
export function createOperations(ctx: OperationContext, machinery: PolicyMachinery): Operations {
  return {
    writeMemory: guard(writeMemory, ctx, machinery),
    searchMemories: guard(searchMemories, ctx, machinery),
    getContext: guard(getContext, ctx, machinery),
    sendFeedback: guard(sendFeedback, ctx, machinery),
    listMemories: guard(listMemories, ctx, machinery),
    getMemory: guard(getMemory, ctx, machinery),
    deleteMemory: guard(deleteMemory, ctx, machinery),
    ingest: guard(ingest, ctx, machinery),
    ingestConversation: guard(ingestConversation, ctx, machinery),
    replaySearch: guard(replaySearch, ctx, machinery),
    getSearchHistory: guard(getSearchHistory, ctx, machinery),
    sendContextFeedback: guard(sendContextFeedback, ctx, machinery),
    createLink: guard(createLink, ctx, machinery),
    listLinks: guard(listLinks, ctx, machinery),
    deleteLink: guard(deleteLink, ctx, machinery),
    updatePins: guard(updatePins, ctx, machinery),
    getPins: guard(getPins, ctx, machinery),
    exportOwner: guard(exportOwner, ctx, machinery),
    importOwner: guard(importOwner, ctx, machinery),
    eraseOwner: guard(eraseOwner, ctx, machinery),
    getUsageToday: guard(getUsageToday, ctx, machinery),
    getBillingStatus: guard(getBillingStatus, ctx, machinery),
    createCheckout: guard(createCheckout, ctx, machinery),
    getAuditLog: guard(getAuditLog, ctx, machinery),
    getPruningMetrics: guard(getPruningMetrics, ctx, machinery),
    getConnectorSettings: guard(getConnectorSettings, ctx, machinery),
    updateConnectorSettings: guard(updateConnectorSettings, ctx, machinery),
  };
}
