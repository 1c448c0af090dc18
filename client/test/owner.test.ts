import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { CLIENT_OWNER_ID_ALIASES, CLIENT_OWNER_TYPE_ALIASES } from '@mnemo/contract';
import {
  InvalidOwnerIdError,
  MemoryClient,
  MnemoError,
  type OwnerParams,
  type OwnerTypeInput,
} from '../src/index.js';
import { normaliseOwner } from '../src/internal/owner.js';
import { BASE_URL, searchResponse } from './fixtures.js';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const inserted = {
  memory_id: 'm1',
  stored: true,
  extraction: { status: 'skipped', reason: 'none' },
};

describe('owner normalisation', () => {
  it('accepts exactly the owner aliases and types of the contract', () => {
    type ContractOwnerKey =
      (typeof CLIENT_OWNER_ID_ALIASES)[number] | (typeof CLIENT_OWNER_TYPE_ALIASES)[number];
    expectTypeOf<keyof OwnerParams>().toEqualTypeOf<ContractOwnerKey>();
    expectTypeOf<OwnerTypeInput>().toEqualTypeOf<'user' | 'team' | 'app' | 'agent'>();
    // Every alias is read: a differing value under any one of them is refused.
    for (const alias of CLIENT_OWNER_ID_ALIASES.slice(1)) {
      expect(() => normaliseOwner({ ownerId: 'a', [alias]: 'b' }), alias).toThrow(
        InvalidOwnerIdError,
      );
    }
    for (const alias of CLIENT_OWNER_TYPE_ALIASES.slice(1)) {
      expect(() => normaliseOwner({ ownerType: 'user', [alias]: 'team' }), alias).toThrow(
        InvalidOwnerIdError,
      );
    }
  });

  it.each([
    [
      { ownerId: 'u1', ownerType: 'user' as const },
      { owner_id: 'u1', owner_type: 'user' },
    ],
    [{ userId: 'u1' }, { owner_id: 'u1' }],
    [
      { entityId: 'bot', entityType: 'agent' as const },
      { owner_id: 'bot', owner_type: 'app' },
    ],
    [
      { ownerId: 'bot', ownerType: 'agent' as const },
      { owner_id: 'bot', owner_type: 'app' },
    ],
    [
      { ownerId: 't1', userId: 't1', entity_id: 't1', ownerType: 'team' as const },
      { owner_id: 't1', owner_type: 'team' },
    ],
    [{ ownerType: 'app' as const, entityType: 'agent' as const }, { owner_type: 'app' }],
    [{ user_id: 'u9' }, { owner_id: 'u9' }],
    [{}, {}],
  ])('%j becomes %j', (input, expected) => {
    expect(normaliseOwner(input)).toEqual(expected);
  });

  it.each([
    [{ ownerId: 'a', userId: 'b' }, /ownerId is "a" but userId is "b"/],
    [{ userId: 'a', entityId: 'b' }, /userId is "a" but entityId is "b"/],
    [{ ownerId: 'a', owner_id: 'b' }, /disagree/],
    [{ ownerType: 'user' as const, entityType: 'agent' as const }, /Owner types disagree/],
  ])('%j fails with INVALID_OWNER_ID', (input, message) => {
    let error: unknown;
    try {
      normaliseOwner(input);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidOwnerIdError);
    expect(error).toBeInstanceOf(MnemoError);
    expect(error).toMatchObject({ code: 'INVALID_OWNER_ID', status: undefined });
    expect((error as Error).message).toMatch(message);
  });

  it('memories.add sends only owner_id / owner_type', async () => {
    let body: unknown;
    server.use(
      http.post(`${BASE_URL}/v1/memories`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(inserted);
      }),
    );
    const client = new MemoryClient({ baseUrl: BASE_URL, apiKey: 'k' });
    await client.memories.add({
      text: 'x',
      entityId: 'bot',
      entityType: 'agent',
      idempotency_key: 'key-00001',
    });
    expect(body).toEqual({
      text: 'x',
      owner_id: 'bot',
      owner_type: 'app',
      idempotency_key: 'key-00001',
    });
  });

  it('search (REST) sends the normalised owner', async () => {
    let body: unknown;
    server.use(
      http.post(`${BASE_URL}/v1/search`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(searchResponse);
      }),
    );
    const client = new MemoryClient({ baseUrl: BASE_URL, apiKey: 'k', transport: 'rest' });
    await client.search.query({ query: 'q', userId: 'u1', ownerType: 'user' });
    expect(body).toEqual({ query: 'q', owner_id: 'u1', owner_type: 'user' });
  });

  it('disagreeing ids fail before any request, on every method that takes an owner', async () => {
    const fetch = vi.fn(async () => HttpResponse.json({}));
    const client = new MemoryClient({ baseUrl: BASE_URL, apiKey: 'k', fetch });
    const owner = { ownerId: 'a', userId: 'b' };
    await expect(client.memories.add({ text: 'x', ...owner })).rejects.toMatchObject({
      code: 'INVALID_OWNER_ID',
    });
    await expect(client.memories.list(owner)).rejects.toBeInstanceOf(InvalidOwnerIdError);
    await expect(client.search.query({ query: 'q', ...owner })).rejects.toBeInstanceOf(
      InvalidOwnerIdError,
    );
    await expect(client.context.get({ query: 'q', ...owner })).rejects.toBeInstanceOf(
      InvalidOwnerIdError,
    );
    expect(fetch).not.toHaveBeenCalled();
  });
});
