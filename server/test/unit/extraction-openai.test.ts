import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createExtractor } from '../../src/providers/extraction/index.js';
import { LocalExtractor } from '../../src/providers/extraction/local.js';
import {
  EXTRACTION_SYSTEM_PROMPT,
  OpenAIExtractor,
  type OpenAIExtractorOptions,
} from '../../src/providers/extraction/openai.js';
import { ExtractionError } from '../../src/providers/extraction/types.js';

const BASE = 'https://llm.test/v1';
const URL_ = `${BASE}/chat/completions`;
const API_KEY = 'sk-test-0123456789abcdef';
const MODEL = 'gpt-4o-mini';
const TEXT = 'I moved to Berlin last month. I love hiking and my favourite food is ramen.';

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

interface ChatBody {
  model: string;
  temperature: number;
  response_format: { type: string };
  messages: { role: string; content: string }[];
}

/** A chat completion whose message content is `content`. */
function completion(content: string) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: MODEL,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
  };
}

/** Answers every request with `content` and records what was sent. */
function answering(content: string) {
  const requests: { body: ChatBody; headers: Headers }[] = [];
  server.use(
    http.post(URL_, async ({ request }) => {
      requests.push({ body: (await request.json()) as ChatBody, headers: request.headers });
      return HttpResponse.json(completion(content));
    }),
  );
  return requests;
}

function makeExtractor(overrides: Partial<OpenAIExtractorOptions> = {}) {
  const sleeps: number[] = [];
  const extractor = new OpenAIExtractor({
    baseUrl: BASE,
    model: MODEL,
    apiKey: API_KEY,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  });
  return { extractor, sleeps };
}

async function extractionError(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  expect((error as Error).message).not.toContain(API_KEY);
  return error as ExtractionError;
}

const GOOD_ANSWER = JSON.stringify({
  memories: [
    { text: 'I moved to Berlin last month.', memory_type: 'event' },
    { text: 'I love hiking.', memory_type: 'preference' },
    { text: 'My favourite food is ramen.', memory_type: 'preference' },
  ],
});

describe('OpenAIExtractor', () => {
  it('posts a JSON-mode chat completion with the prompt, the text and the key', async () => {
    const requests = answering(GOOD_ANSWER);
    const { extractor } = makeExtractor();
    await extractor.extract(TEXT, { maxItems: 7 });

    expect(requests).toHaveLength(1);
    const { body, headers } = requests[0]!;
    expect(body).toEqual({
      model: MODEL,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: EXTRACTION_SYSTEM_PROMPT.replace('{max_items}', '7') },
        { role: 'user', content: TEXT },
      ],
    });
    expect(body.messages[0]!.content).toContain('At most 7 memories');
    expect(body.messages[0]!.content).toContain('"memory_type"');
    expect(headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
    expect(headers.get('content-type')).toBe('application/json');
    expect(extractor.name).toBe('openai');
  });

  it('sends no Authorization header without a key', async () => {
    const requests = answering(GOOD_ANSWER);
    const { extractor } = makeExtractor({ apiKey: undefined });
    await extractor.extract(TEXT, { maxItems: 10 });
    expect(requests[0]!.headers.has('authorization')).toBe(false);
  });

  it('returns the memories of a good answer', async () => {
    answering(GOOD_ANSWER);
    const { extractor } = makeExtractor();
    expect(await extractor.extract(TEXT, { maxItems: 10 })).toEqual([
      { text: 'I moved to Berlin last month.', memoryType: 'event' },
      { text: 'I love hiking.', memoryType: 'preference' },
      { text: 'My favourite food is ramen.', memoryType: 'preference' },
    ]);
  });

  it.each([
    ['```json fences', '```json\n' + GOOD_ANSWER + '\n```'],
    ['bare ``` fences', '```\n' + GOOD_ANSWER + '\n```'],
    ['surrounding whitespace', '\n  ' + GOOD_ANSWER + '  \n'],
  ])('reads JSON wrapped in %s', async (_name, content) => {
    answering(content);
    const { extractor } = makeExtractor();
    expect(await extractor.extract(TEXT, { maxItems: 10 })).toHaveLength(3);
  });

  it('drops invalid items, maps unknown types to fact, trims, dedupes and caps', async () => {
    answering(
      JSON.stringify({
        memories: [
          { text: '  I love hiking.  ', memory_type: 'preference' },
          { memory_type: 'fact' },
          { text: 42, memory_type: 'fact' },
          'I am a string',
          null,
          { text: '   ', memory_type: 'task' },
          { text: 'I love hiking.', memory_type: 'fact' },
          { text: 'I work at  Siemens.', memory_type: 'employment' },
          { text: 'I have a dog.' },
          { text: 'Renew the passport.', type: 'TASK' },
          { text: 'One too many.', memory_type: 'fact' },
        ],
      }),
    );
    const { extractor } = makeExtractor();
    expect(await extractor.extract(TEXT, { maxItems: 4 })).toEqual([
      { text: 'I love hiking.', memoryType: 'preference' },
      { text: 'I work at Siemens.', memoryType: 'fact' },
      { text: 'I have a dog.', memoryType: 'fact' },
      { text: 'Renew the passport.', memoryType: 'task' },
    ]);
  });

  it('returns [] for an empty list, and asks nothing for blank text or maxItems 0', async () => {
    const requests = answering('{"memories": []}');
    const { extractor } = makeExtractor();
    expect(await extractor.extract(TEXT, { maxItems: 10 })).toEqual([]);
    expect(await extractor.extract('   ', { maxItems: 10 })).toEqual([]);
    expect(await extractor.extract(TEXT, { maxItems: 0 })).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('retries a 500 once and succeeds', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        if (calls === 1)
          return HttpResponse.json({ error: { message: 'overloaded' } }, { status: 500 });
        return HttpResponse.json(completion(GOOD_ANSWER));
      }),
    );
    const { extractor, sleeps } = makeExtractor();
    expect(await extractor.extract(TEXT, { maxItems: 10 })).toHaveLength(3);
    expect(calls).toBe(2);
    // Full jitter on the default 250 ms base: random() * 250.
    expect(sleeps).toEqual([125]);
  });

  it('gives up after one retry on repeated 500s', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return HttpResponse.json({ error: { message: 'overloaded' } }, { status: 503 });
      }),
    );
    const { extractor } = makeExtractor();
    const error = await extractionError(extractor.extract(TEXT, { maxItems: 10 }));
    expect(calls).toBe(2);
    expect(error.message).toBe('openai extraction returned HTTP 503 after 2 attempts: overloaded');
  });

  it('fails a 401 at once, without retrying and without the key', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, () => {
        calls += 1;
        return HttpResponse.json(
          { error: { message: `Incorrect API key provided: ${API_KEY}` } },
          { status: 401 },
        );
      }),
    );
    const { extractor, sleeps } = makeExtractor();
    const error = await extractionError(extractor.extract(TEXT, { maxItems: 10 }));
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
    expect(error.message).toBe(
      'openai extraction returned HTTP 401: Incorrect API key provided: ***',
    );
    expect((error as ExtractionError & { status?: number }).status).toBe(401);
  });

  it('times out each attempt and fails after the retry', async () => {
    let calls = 0;
    server.use(
      http.post(URL_, async () => {
        calls += 1;
        await delay(2_000);
        return HttpResponse.json(completion(GOOD_ANSWER));
      }),
    );
    const { extractor } = makeExtractor({ timeoutMs: 30 });
    const started = Date.now();
    const error = await extractionError(extractor.extract(TEXT, { maxItems: 10 }));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(calls).toBe(2);
    expect(error.message).toBe(
      `openai extraction request to ${URL_} failed after 2 attempt(s): timed out after 30 ms`,
    );
  });

  it.each([
    [
      'non-JSON content',
      completion('Sure! Here are your memories: I love hiking.'),
      /non-JSON content: Sure! Here/,
    ],
    ['JSON without memories', completion('{"items": []}'), /no `memories` array/],
    [
      'memories that is not a list',
      completion('{"memories": "I love hiking"}'),
      /no `memories` array/,
    ],
    ['no choices', { choices: [] }, /no choices\[0\]\.message\.content/],
    [
      'null content',
      { choices: [{ message: { role: 'assistant', content: null } }] },
      /no choices/,
    ],
  ])('fails on %s', async (_name, answer, message) => {
    server.use(http.post(URL_, () => HttpResponse.json(answer)));
    const { extractor } = makeExtractor();
    const error = await extractionError(extractor.extract(TEXT, { maxItems: 10 }));
    expect(error.message).toMatch(message);
  });

  it('fails on a body that is not JSON at all', async () => {
    server.use(
      http.post(URL_, () => new HttpResponse('<html>bad gateway</html>', { status: 200 })),
    );
    const { extractor } = makeExtractor();
    const error = await extractionError(extractor.extract(TEXT, { maxItems: 10 }));
    expect(error.message).toMatch(/invalid JSON/);
  });
});

describe('createExtractor', () => {
  it('builds the local extractor', () => {
    expect(createExtractor({ provider: 'local' })).toBeInstanceOf(LocalExtractor);
  });

  it('builds the openai extractor, which then talks to the configured endpoint', async () => {
    const requests = answering(GOOD_ANSWER);
    const extractor = createExtractor({
      provider: 'openai',
      baseUrl: BASE,
      model: MODEL,
      apiKey: API_KEY,
    });
    expect(extractor).toBeInstanceOf(OpenAIExtractor);
    expect(await extractor.extract(TEXT, { maxItems: 10 })).toHaveLength(3);
    expect(requests[0]!.body.model).toBe(MODEL);
    expect(requests[0]!.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
  });

  it.each([
    [{ provider: 'openai', model: MODEL }],
    [{ provider: 'openai', baseUrl: BASE }],
  ] as const)('refuses openai without baseUrl or model: %j', (config) => {
    expect(() => createExtractor(config)).toThrow(
      'the openai extractor needs both `baseUrl` and `model`',
    );
  });
});
