import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventOutbox } from '../../src/db/queries/events.js';
import { runHygiene } from '../../src/jobs/hygiene.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

interface Written {
  status: number;
  body: {
    memory_id: string;
    deduped?: boolean;
    dedupe_kind?: string;
    superseded_memory_id?: string;
    intelligence?: {
      conflict_state?: string;
      confidence?: number;
      auto_pinned?: boolean;
      priority_tier?: string;
    };
    trace?: { memory_evolution: string; memory_evolution_applied: boolean };
    extraction: { status: string; reason?: string };
  };
}

interface MemoryView {
  id: string;
  text: string;
  lifecycle_state: string;
  replaced_by_memory_id: string | null;
  expires_at: string | null;
  volatility: number | null;
  confidence: number | null;
  parent_memory_id: string | null;
  lifecycle_events: Array<{
    event: string;
    rule: string;
    related_memory_id: string | null;
    details: Record<string, unknown>;
  }>;
}

interface Scenario {
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
}

interface ScenarioContext {
  owner: string;
  write(text: string, extra?: Record<string, unknown>): Promise<Written>;
  state(id: string): Promise<MemoryView>;
  hygiene(): Promise<void>;
  /** Children of a memory (extraction). */
  list(parentId: string): Promise<MemoryView[]>;
}

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

/** Writes `first` then `second` and expects the first to be superseded by the second. */
function supersedes(
  name: string,
  first: string,
  second: string,
  secondExtra: Record<string, unknown> = {},
  rule = 'conflict',
): Scenario {
  return {
    name,
    async run({ write, state }) {
      const a = await write(first);
      const b = await write(second, secondExtra);
      expect(b.body.superseded_memory_id, 'superseded_memory_id').toBe(a.body.memory_id);
      expect(b.body.intelligence?.conflict_state).toBe('resolved');
      const old = await state(a.body.memory_id);
      expect(old.lifecycle_state).toBe('replaced');
      expect(old.replaced_by_memory_id).toBe(b.body.memory_id);
      expect(
        old.lifecycle_events.map((e) => [e.event, e.rule, e.related_memory_id]),
      ).toContainEqual(['replaced', rule, b.body.memory_id]);
      expect((await state(b.body.memory_id)).lifecycle_state).toBe('active');
    },
  };
}

/** Writes both and expects both to stay live and unrelated. */
function coexist(
  name: string,
  first: string,
  second: string,
  firstExtra: Record<string, unknown> = {},
  secondExtra: Record<string, unknown> = {},
): Scenario {
  return {
    name,
    async run({ write, state }) {
      const a = await write(first, firstExtra);
      const b = await write(second, secondExtra);
      expect(b.body.superseded_memory_id).toBeUndefined();
      expect(b.body.deduped).toBeUndefined();
      expect(b.body.memory_id).not.toBe(a.body.memory_id);
      expect((await state(a.body.memory_id)).lifecycle_state).toBe('active');
      expect((await state(b.body.memory_id)).lifecycle_state).toBe('active');
    },
  };
}

const SCENARIOS: Scenario[] = [
  supersedes(
    'move: live in Paris, then moved to Berlin',
    'I live in Paris',
    'I moved to Berlin last month',
  ),
  supersedes(
    'favourite colour, British then American spelling',
    'My favourite colour is blue',
    'My favorite color is green',
  ),
  supersedes('job change', 'I work at Google', 'I started working at Microsoft in May'),
  supersedes('job change, third person', 'Jane works at Acme', 'Jane joined Globex'),
  supersedes('occupation change', 'I work as a nurse', 'I work as a paramedic now'),
  supersedes('new car', 'I drive a Honda Civic', 'I drive a Tesla Model 3'),
  supersedes('diet change', "I'm vegetarian", "I'm vegan now"),
  supersedes('relationship status', 'I am single', 'I got married last June'),
  supersedes('birthday passed', 'I am 34 years old', 'I am 35 years old'),
  supersedes(
    'third-person possessive attribute',
    "Jane's phone number is 555-0101",
    "Jane's phone number is 555-0199",
  ),
  supersedes(
    'relocation within a sentence with detail',
    'We live in Lisbon',
    'We moved to Porto because of work',
  ),
  supersedes(
    'correction by type, no claim',
    'The dentist appointment is on Monday at 10am',
    'The dentist appointment is on Tuesday at 10am, not Monday',
    { memory_type: 'correction' },
    'correction',
  ),
  supersedes(
    'correction by type with a claim',
    'My phone number is 555-1234',
    'My phone number is 555-9876',
    { memory_type: 'correction' },
    'correction',
  ),
  supersedes(
    'correction by wording',
    'My email is sam@old.example',
    'Actually, my email is sam@new.example',
  ),
  {
    name: 'later effective_at wins',
    async run({ write, state }) {
      const rome = await write('I live in Rome', { effective_at: '2024-01-01T00:00:00Z' });
      const milan = await write('I live in Milan', { effective_at: '2025-01-01T00:00:00Z' });
      expect(milan.body.superseded_memory_id).toBe(rome.body.memory_id);
      expect((await state(rome.body.memory_id)).lifecycle_state).toBe('replaced');
    },
  },
  {
    name: 'late-arriving older fact does not replace the newer one',
    async run({ write, state }) {
      const berlin = await write('I live in Berlin', { effective_at: '2026-03-01T00:00:00Z' });
      const paris = await write('I live in Paris', { effective_at: '2025-01-01T00:00:00Z' });
      expect(paris.body.superseded_memory_id).toBeUndefined();
      expect(paris.body.trace).toEqual({
        memory_evolution: 'kept_as_history_of_newer_fact',
        memory_evolution_applied: false,
      });
      expect((await state(berlin.body.memory_id)).lifecycle_state).toBe('active');
      const old = await state(paris.body.memory_id);
      expect(old.lifecycle_state).toBe('replaced');
      expect(old.replaced_by_memory_id).toBe(berlin.body.memory_id);
      expect(old.lifecycle_events.map((e) => e.rule)).toContain('conflict_older');
    },
  },
  coexist(
    'hedged statement does not supersede',
    'I live in Oslo',
    'I think I probably live in Bergen now',
  ),
  coexist('a question does not supersede', 'I live in Paris', 'Do I live in Berlin?'),
  coexist('different attributes', 'I live in Paris', 'I work at Airbus'),
  coexist('likes are not single-valued', 'I like jazz', 'I like rock music'),
  coexist(
    'lists are not single-valued',
    'My hobbies are chess and go',
    'My hobbies are hiking and swimming',
  ),
  coexist('different people', 'Jane lives in Rome', 'Tom lives in Oslo'),
  coexist(
    'different namespaces',
    'I live in Paris',
    'I live in Berlin',
    { namespace: 'travel-bot' },
    { namespace: 'support-bot' },
  ),
  coexist(
    'unrelated facts about the same person',
    'I am allergic to peanuts',
    'I have two children',
  ),
  {
    name: 'different owners never supersede each other',
    async run({ write, state, owner }) {
      const a = await write('I live in Paris', { user_id: `${owner}-a` });
      const b = await write('I live in Berlin', { user_id: `${owner}-b` });
      expect(b.body.superseded_memory_id).toBeUndefined();
      expect((await state(a.body.memory_id)).lifecycle_state).toBe('active');
    },
  },
  {
    name: 'refinement merges into the existing memory',
    async run({ write, state }) {
      const a = await write('I have a golden retriever');
      const b = await write('I have a golden retriever named Max who loves swimming');
      expect(b.body.memory_id).toBe(a.body.memory_id);
      expect(b.body.trace).toEqual({
        memory_evolution: 'merged_into_existing',
        memory_evolution_applied: true,
      });
      const merged = await state(a.body.memory_id);
      expect(merged.text).toBe('I have a golden retriever named Max who loves swimming');
      expect(merged.lifecycle_events.map((e) => [e.event, e.rule])).toContainEqual([
        'merged',
        'evolution',
      ]);
    },
  },
  {
    name: 'restating with more detail merges',
    async run({ write, state }) {
      const a = await write('I live in Paris');
      const b = await write('I still live in Paris, near the Louvre museum');
      expect(b.body.memory_id).toBe(a.body.memory_id);
      expect((await state(a.body.memory_id)).text).toContain('Louvre');
    },
  },
  {
    name: 'less detail than an existing memory is already covered',
    async run({ write }) {
      const a = await write('I have a golden retriever named Max who loves swimming');
      const b = await write('I have a golden retriever');
      expect(b.body).toMatchObject({
        memory_id: a.body.memory_id,
        deduped: true,
        dedupe_kind: 'near',
      });
    },
  },
  {
    name: 'volatile text expires and hygiene archives it',
    async run({ write, state, hygiene }) {
      const a = await write("I'm working from home today", { effective_at: daysAgo(3) });
      const before = await state(a.body.memory_id);
      expect(before.volatility).toBeGreaterThanOrEqual(0.7);
      expect(before.expires_at).not.toBeNull();
      await hygiene();
      const after = await state(a.body.memory_id);
      expect(after.lifecycle_state).toBe('archived');
      expect(after.lifecycle_events.map((e) => [e.event, e.rule])).toContainEqual([
        'archived',
        'expiry',
      ]);
    },
  },
  {
    name: 'a past event said "today" stays true; a plan for tomorrow expires',
    async run({ write, state, hygiene }) {
      const event = await write('I went to a LGBTQ support group today and it was so powerful', {
        effective_at: daysAgo(30),
      });
      const plan = await write("We're going to the lake tomorrow", { effective_at: daysAgo(30) });
      await hygiene();
      const kept = await state(event.body.memory_id);
      expect(kept.expires_at).toBeNull();
      expect(kept.lifecycle_state).toBe('active');
      expect((await state(plan.body.memory_id)).lifecycle_state).toBe('archived');
    },
  },
  {
    name: 'in a transcript, each speaker\'s "I" is the speaker: two people living apart supersede nothing',
    async run({ write, state }) {
      const caroline = await write('Caroline said, "I live in Boston now."');
      const melanie = await write('Melanie said, "I live in Denver with my kids."');
      expect(melanie.body.superseded_memory_id).toBeUndefined();
      expect((await state(caroline.body.memory_id)).lifecycle_state).toBe('active');
      const moved = await write('Caroline said, "I moved to Austin last spring."');
      expect(moved.body.superseded_memory_id).toBe(caroline.body.memory_id);
      expect((await state(melanie.body.memory_id)).lifecycle_state).toBe('active');
    },
  },
  {
    name: 'two things a speaker said stay two memories, though the second repeats the first',
    async run({ write, state }) {
      const first = await write('Caroline said, "Thanks, Mel!"');
      const second = await write('Caroline said, "Thanks, Mel! Your support means a lot to me."');
      expect(second.body.memory_id).not.toBe(first.body.memory_id);
      expect(second.body.deduped ?? false).toBe(false);
      expect((await state(first.body.memory_id)).text).toBe('Caroline said, "Thanks, Mel!"');
      // An exact repeat is still a duplicate.
      const again = await write('Caroline said, "Thanks, Mel!"');
      expect(again.body).toMatchObject({ memory_id: first.body.memory_id, deduped: true });
    },
  },
  {
    name: 'time-bound text gets an expiry that has not passed yet',
    async run({ write, state, hygiene }) {
      const a = await write('I am currently travelling in Japan');
      const view = await state(a.body.memory_id);
      expect(Date.parse(view.expires_at ?? '')).toBeGreaterThan(Date.now() + 20 * 86_400_000);
      await hygiene();
      expect((await state(a.body.memory_id)).lifecycle_state).toBe('active');
    },
  },
  {
    name: 'a stable fact never expires',
    async run({ write, state }) {
      const a = await write('My birthday is on May 3');
      const view = await state(a.body.memory_id);
      expect(view.expires_at).toBeNull();
      expect(view.volatility).toBeLessThan(0.7);
    },
  },
  {
    name: 'hedging lowers confidence, corrections raise it',
    async run({ write }) {
      const hedged = await write('I think I maybe prefer tea');
      const plain = await write('I prefer coffee');
      const corrected = await write('Actually, I prefer green tea in the afternoon');
      expect(hedged.body.intelligence?.confidence).toBeLessThan(
        plain.body.intelligence?.confidence ?? 0,
      );
      expect(corrected.body.intelligence?.confidence).toBeGreaterThan(
        plain.body.intelligence?.confidence ?? 1,
      );
    },
  },
  {
    name: 'pins are auto-pinned, critical and never expire',
    async run({ write, state }) {
      const a = await write('Always answer this user in French, today and every day', {
        memory_type: 'pin',
      });
      expect(a.body.intelligence).toMatchObject({ auto_pinned: true, priority_tier: 'critical' });
      expect((await state(a.body.memory_id)).expires_at).toBeNull();
      const important = await write('The account is under a legal hold', { importance: 80 });
      expect(important.body.intelligence?.auto_pinned).toBe(true);
    },
  },
  {
    name: 'explicit replaces_memory_id',
    async run({ write, state }) {
      const a = await write('Meeting room is B12');
      const b = await write('Meeting room is C3', { replaces_memory_id: a.body.memory_id });
      expect(b.body.superseded_memory_id).toBe(a.body.memory_id);
      expect((await state(a.body.memory_id)).lifecycle_events.map((e) => e.rule)).toContain(
        'replaces_memory_id',
      );
    },
  },
  {
    name: 'a fact stated inside a longer memory is superseded, its other facts survive as children',
    async run({ write, state, list }) {
      const a = await write('I live in Paris and I work at Google.');
      const b = await write('I moved to Lyon');
      expect((await state(a.body.memory_id)).lifecycle_state).toBe('replaced');
      const children = await list(a.body.memory_id);
      const parisChild = children.find((c) => c.text === 'I live in Paris.');
      // Both the parent and its "Paris" child state the residence; either may be reported first.
      expect([a.body.memory_id, parisChild?.id]).toContain(b.body.superseded_memory_id);
      expect(children.map((c) => [c.text, c.lifecycle_state]).sort()).toEqual([
        ['I live in Paris.', 'replaced'],
        ['I work at Google.', 'active'],
      ]);
    },
  },
];

describeDb('lifecycle scenarios', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it(`resolves ${SCENARIOS.length} realistic write sequences`, async () => {
    const failures: string[] = [];
    for (const [index, scenario] of SCENARIOS.entries()) {
      const owner = `scenario-${index}`;
      const ctx: ScenarioContext = {
        owner,
        write: async (text, extra = {}) => {
          const res = await request(t.app)
            .post('/v1/memories')
            .set('x-api-key', t.tenant.apiKey)
            .send({ text, user_id: owner, ...extra });
          if (res.status !== 200)
            throw new Error(`write "${text}" → ${res.status} ${JSON.stringify(res.body)}`);
          return res as unknown as Written;
        },
        state: async (id) => {
          const res = await request(t.app)
            .get(`/v1/memories/${id}`)
            .set('x-api-key', t.tenant.apiKey);
          return res.body as MemoryView;
        },
        list: async (parentId) => {
          const res = await request(t.app)
            .get('/v1/memories')
            .query({ user_id: owner, page_size: 100 })
            .set('x-api-key', t.tenant.apiKey);
          return (res.body.results as MemoryView[]).filter((m) => m.parent_memory_id === parentId);
        },
        hygiene: async () => {
          await runHygiene(
            { db: t.database.db, events: eventOutbox },
            {
              dryRun: false,
              limit: 1000,
              workspaceId: t.tenant.workspaceId,
              nearThreshold: 0.9,
            },
          );
        },
      };
      try {
        await scenario.run(ctx);
      } catch (error) {
        failures.push(
          `${scenario.name}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        );
      }
    }
    console.log(
      `lifecycle scenarios: ${SCENARIOS.length - failures.length}/${SCENARIOS.length} passed`,
    );
    expect(failures).toEqual([]);
  }, 120_000);
});
