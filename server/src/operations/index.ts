import {
  cleanupDashboardSessions,
  getBillingHealth,
  listScheduledJobs,
  reconcileUsage,
  reprocessWebhooks,
  runMemoryHygiene,
  runMemoryRetention,
  setCancelAtPeriodEnd,
} from './admin.js';
import { createApiKey, createWorkspace, listApiKeys, revokeApiKey } from './api-keys.js';
import { getAuditLog, getPruningMetrics } from './audit.js';
import { createCheckout, getBillingStatus, receivePaymentCallback } from './billing.js';
import { getConnectorSettings, updateConnectorSettings } from './connectors.js';
import type { AnyCaller, OperationContext } from './context.js';
import {
  bootstrapDashboard,
  createDashboardApiKey,
  createDashboardSession,
  createDashboardWorkspace,
  getOverviewStats,
  listDashboardApiKeys,
  listDashboardWorkspaces,
  logoutDashboard,
  revokeDashboardApiKey,
} from './dashboard.js';
import { deleteMemory } from './delete-memory.js';
import { getContext } from './get-context.js';
import { getHealth, getReadiness, getVersionedHealth } from './health.js';
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
import { getMemoryBreakdown, getUsageHistory, getUsageToday } from './usage.js';
import { writeMemory } from './write-memory.js';
import {
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookSecret,
  listWebhookDeliveries,
  replayWebhookDelivery,
} from './webhooks.js';

export type {
  AnonymousCaller,
  Caller,
  CallerVia,
  DashboardSessionCaller,
  DashboardTokenCaller,
  Maintenance,
  OperationContext,
  OperatorCaller,
} from './context.js';
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
  getUsageHistory,
  getMemoryBreakdown,
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookSecret,
  listWebhookDeliveries,
  replayWebhookDelivery,
  getUsageToday,
  getBillingStatus,
  createCheckout,
  getAuditLog,
  getPruningMetrics,
  getConnectorSettings,
  updateConnectorSettings,
  runMemoryHygiene,
  runMemoryRetention,
  reconcileUsage,
  reprocessWebhooks,
  listScheduledJobs,
  getBillingHealth,
  setCancelAtPeriodEnd,
  cleanupDashboardSessions,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  createWorkspace,
  bootstrapDashboard,
  createDashboardSession,
  logoutDashboard,
  getOverviewStats,
  listDashboardWorkspaces,
  createDashboardWorkspace,
  listDashboardApiKeys,
  createDashboardApiKey,
  revokeDashboardApiKey,
  receivePaymentCallback,
  getHealth,
  getVersionedHealth,
  getReadiness,
} as const;

type Definitions = typeof OPERATIONS;

/** The operations as the doors call them: each through the policy wrapper. */
export type Operations = {
  [K in keyof Definitions]: Definitions[K] extends {
    run(ctx: never, call: { caller: infer K; input: infer I }): Promise<{ output: infer O }>;
  }
    ? K extends AnyCaller
      ? GuardedOperation<I, O, K>
      : never
    : never;
};

/**
 * Binds every operation to the context and the policy machinery (the composition root calls it).
 * Each says how it uses read replicas: searches, context, lists and gets read (`'read'`),
 * changes answer with a consistency token (`'write'`); feedback and saved history stay on the
 * primary, as the history a search saves off the response path may not have reached a replica.
 */
export function createOperations(ctx: OperationContext, machinery: PolicyMachinery): Operations {
  return {
    writeMemory: guard(writeMemory, ctx, machinery, 'write'),
    searchMemories: guard(searchMemories, ctx, machinery, 'read'),
    getContext: guard(getContext, ctx, machinery, 'read'),
    sendFeedback: guard(sendFeedback, ctx, machinery),
    listMemories: guard(listMemories, ctx, machinery, 'read'),
    getMemory: guard(getMemory, ctx, machinery, 'read'),
    deleteMemory: guard(deleteMemory, ctx, machinery, 'write'),
    ingest: guard(ingest, ctx, machinery, 'write'),
    ingestConversation: guard(ingestConversation, ctx, machinery, 'write'),
    replaySearch: guard(replaySearch, ctx, machinery),
    getSearchHistory: guard(getSearchHistory, ctx, machinery),
    sendContextFeedback: guard(sendContextFeedback, ctx, machinery),
    createLink: guard(createLink, ctx, machinery, 'write'),
    listLinks: guard(listLinks, ctx, machinery, 'read'),
    deleteLink: guard(deleteLink, ctx, machinery, 'write'),
    updatePins: guard(updatePins, ctx, machinery, 'write'),
    getPins: guard(getPins, ctx, machinery, 'read'),
    // An export pages through everything an owner has: from the primary, complete and current.
    exportOwner: guard(exportOwner, ctx, machinery),
    importOwner: guard(importOwner, ctx, machinery, 'write'),
    eraseOwner: guard(eraseOwner, ctx, machinery, 'write'),
    getUsageHistory: guard(getUsageHistory, ctx, machinery, 'read'),
    getMemoryBreakdown: guard(getMemoryBreakdown, ctx, machinery, 'read'),
    createWebhookEndpoint: guard(createWebhookEndpoint, ctx, machinery, 'write'),
    listWebhookEndpoints: guard(listWebhookEndpoints, ctx, machinery),
    getWebhookEndpoint: guard(getWebhookEndpoint, ctx, machinery),
    updateWebhookEndpoint: guard(updateWebhookEndpoint, ctx, machinery, 'write'),
    deleteWebhookEndpoint: guard(deleteWebhookEndpoint, ctx, machinery, 'write'),
    rotateWebhookSecret: guard(rotateWebhookSecret, ctx, machinery, 'write'),
    listWebhookDeliveries: guard(listWebhookDeliveries, ctx, machinery),
    replayWebhookDelivery: guard(replayWebhookDelivery, ctx, machinery, 'write'),
    getUsageToday: guard(getUsageToday, ctx, machinery),
    getBillingStatus: guard(getBillingStatus, ctx, machinery),
    createCheckout: guard(createCheckout, ctx, machinery, 'write'),
    getAuditLog: guard(getAuditLog, ctx, machinery),
    getPruningMetrics: guard(getPruningMetrics, ctx, machinery),
    getConnectorSettings: guard(getConnectorSettings, ctx, machinery),
    updateConnectorSettings: guard(updateConnectorSettings, ctx, machinery, 'write'),
    runMemoryHygiene: guard(runMemoryHygiene, ctx, machinery),
    runMemoryRetention: guard(runMemoryRetention, ctx, machinery),
    reconcileUsage: guard(reconcileUsage, ctx, machinery),
    reprocessWebhooks: guard(reprocessWebhooks, ctx, machinery),
    listScheduledJobs: guard(listScheduledJobs, ctx, machinery),
    getBillingHealth: guard(getBillingHealth, ctx, machinery),
    setCancelAtPeriodEnd: guard(setCancelAtPeriodEnd, ctx, machinery),
    cleanupDashboardSessions: guard(cleanupDashboardSessions, ctx, machinery),
    // Keys, workspaces and the console read and write on the primary, as before replicas.
    createApiKey: guard(createApiKey, ctx, machinery),
    listApiKeys: guard(listApiKeys, ctx, machinery),
    revokeApiKey: guard(revokeApiKey, ctx, machinery),
    createWorkspace: guard(createWorkspace, ctx, machinery),
    bootstrapDashboard: guard(bootstrapDashboard, ctx, machinery),
    createDashboardSession: guard(createDashboardSession, ctx, machinery),
    logoutDashboard: guard(logoutDashboard, ctx, machinery),
    getOverviewStats: guard(getOverviewStats, ctx, machinery),
    listDashboardWorkspaces: guard(listDashboardWorkspaces, ctx, machinery),
    createDashboardWorkspace: guard(createDashboardWorkspace, ctx, machinery),
    listDashboardApiKeys: guard(listDashboardApiKeys, ctx, machinery),
    createDashboardApiKey: guard(createDashboardApiKey, ctx, machinery),
    revokeDashboardApiKey: guard(revokeDashboardApiKey, ctx, machinery),
    receivePaymentCallback: guard(receivePaymentCallback, ctx, machinery),
    getHealth: guard(getHealth, ctx, machinery),
    getVersionedHealth: guard(getVersionedHealth, ctx, machinery),
    getReadiness: guard(getReadiness, ctx, machinery),
  };
}
