import {
  contract,
  type ConversationIngestPayload,
  type ConversationIngestResponse,
  type IngestPayload,
  type IngestResponse,
} from '@mnemo/contract';
import { ingestConversation as runConversation } from '../services/ingest/conversation.js';
import { ingest as runIngest } from '../services/ingest/index.js';
import { writePorts, type WriteContext } from './context.js';
import { defineOperation } from './operation.js';

/** POST /v1/memories/conversation. */
export const ingestConversation = defineOperation<
  ConversationIngestPayload,
  ConversationIngestResponse,
  WriteContext
>(
  'ingestConversation',
  contract.ingest.ingestConversation,
  async (ctx, { caller, input, audit }) => {
    const result = await runConversation(
      writePorts(ctx),
      { workspaceId: caller.workspaceId, piiScan: caller.piiScan, audit },
      input,
    );
    return { output: result.response, audited: result.audited };
  },
);

/** POST /v1/ingest: a memory, a conversation or a document. */
export const ingest = defineOperation<IngestPayload, IngestResponse, WriteContext>(
  'ingest',
  contract.ingest.ingest,
  async (ctx, { caller, input, audit }) => {
    const result = await runIngest(
      writePorts(ctx),
      { workspaceId: caller.workspaceId, piiScan: caller.piiScan, audit },
      input,
    );
    return { output: result.response, audited: result.audited };
  },
);
