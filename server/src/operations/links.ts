import {
  contract,
  type CreateLinkPayload,
  type CreateLinkResponse,
  type DeleteLinkQuery,
  type DeleteLinkResponse,
  type ListLinksResponse,
} from '@mnemo/contract';
import {
  createLink as create,
  deleteLink as remove,
  listLinks as list,
} from '../services/links.js';
import type { OperationContext } from './context.js';
import { defineOperation } from './operation.js';

/** POST /v1/memories/:id/links */
export const createLink = defineOperation<
  { id: string; link: CreateLinkPayload },
  CreateLinkResponse,
  Pick<OperationContext, 'writer'>
>('createLink', contract.links.createLink, async (ctx, { caller, input }) => ({
  output: await create(ctx.writer, caller.workspaceId, input.id, input.link),
}));

/** GET /v1/memories/:id/links */
export const listLinks = defineOperation<
  { id: string },
  ListLinksResponse,
  Pick<OperationContext, 'reader'>
>('listLinks', contract.links.listLinks, async (ctx, { caller, input }) => ({
  output: await list(ctx.reader, caller.workspaceId, input.id),
}));

/** DELETE /v1/memories/:id/links */
export const deleteLink = defineOperation<
  { id: string; query: DeleteLinkQuery },
  DeleteLinkResponse,
  Pick<OperationContext, 'writer'>
>('deleteLink', contract.links.deleteLink, async (ctx, { caller, input }) => ({
  output: await remove(ctx.writer, caller.workspaceId, input.id, input.query),
}));
