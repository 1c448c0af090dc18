import {
  contract,
  type GetPinsQuery,
  type PinsResponse,
  type UpdatePinsPayload,
} from '@mnemo/contract';
import { getPins as get, updatePins as update } from '../services/pins.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** PATCH /v1/pins: an owner's pinned memories. */
export const updatePins = defineOperation<
  UpdatePinsPayload,
  PinsResponse,
  Pick<OperationContext, 'writer'>
>('updatePins', contract.pins.updatePins, async (ctx, { caller, input }) => ({
  output: await update(ctx.writer, caller.workspaceId, input),
}));

/** GET /v1/pins */
export const getPins = defineOperation<
  GetPinsQuery,
  PinsResponse,
  Pick<OperationContext, 'reader'>
>('getPins', contract.pins.getPins, async (ctx, { caller, input }) => ({
  output: await get(ctx.reader, caller.workspaceId, input),
}));
