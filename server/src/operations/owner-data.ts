import {
  contract,
  type ErasePayload,
  type ErasureReceipt,
  type ExportQuery,
  type ImportResponse,
} from '@mnemo/contract';
import { eraseOwner as erase } from '../services/owner-data/erase.js';
import { openExport, type OpenExport } from '../services/owner-data/export.js';
import { importLines } from '../services/owner-data/import.js';
import { resolveOwner } from '../services/owner.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** GET /v1/export: the lines of an owner's (or the workspace's) memories, read as consumed. */
export const exportOwner = defineOperation<
  ExportQuery,
  OpenExport,
  Pick<OperationContext, 'reader' | 'clock'>
>('exportOwner', contract.ownerData.exportOwner, async (ctx, { caller, input }) => ({
  output: await openExport(ctx.reader, caller.workspaceId, input, new Date(ctx.clock.now())),
}));

/** POST /v1/import: the lines of an export, written batch by batch. */
export const importOwner = defineOperation<
  { body: string; lineOffset: number },
  ImportResponse,
  Pick<OperationContext, 'writer' | 'embeddings' | 'quota' | 'onRowsWritten'>
>('importOwner', contract.ownerData.importOwner, async (ctx, { caller, input }) => ({
  output: await importLines(
    {
      db: ctx.writer,
      embeddings: ctx.embeddings,
      quota: ctx.quota,
      onRowsWritten: (rows) => ctx.onRowsWritten(rows),
    },
    caller.workspaceId,
    input.body,
    input.lineOffset,
  ),
}));

/** POST /v1/erase: everything of one owner, with a receipt. */
export const eraseOwner = defineOperation<
  ErasePayload,
  ErasureReceipt,
  Pick<OperationContext, 'writer'>
>('eraseOwner', contract.ownerData.eraseOwner, async (ctx, { caller, input }) => ({
  output: await erase(ctx.writer, caller.workspaceId, resolveOwner(input)),
}));
