import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryClient, AuthenticationError } from '@mnemo/client';
import {
  generateText,
  simulateReadableStream,
  stepCountIs,
  streamText,
  wrapLanguageModel,
  type LanguageModelMiddleware,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../server/test/support/app.js';
import { describeDb } from '../../server/test/support/db.js';
import { mnemoMemory, mnemoTools, type RememberOutcome } from '../src/index.js';

type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapGenerate']>>>;
type StreamPart =
  Awaited<
    ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>
  >['stream'] extends ReadableStream<infer Part>
    ? Part
    : never;
type Prompt = MockLanguageModelV3['doGenerateCalls'][number]['prompt'];

const usage: GenerateResult['usage'] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** What a model answers with when it answers in text. */
function answer(text: string): GenerateResult {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  };
}

/** A stream of the answer in a few pieces, as a provider sends it. */
function streamedAnswer(text: string): { stream: ReadableStream<StreamPart> } {
  const pieces = text.match(/.{1,12}/g) ?? [];
  return {
    stream: simulateReadableStream<StreamPart>({
      chunks: [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't1' },
        ...pieces.map((delta): StreamPart => ({ type: 'text-delta', id: 't1', delta })),
        { type: 'text-end', id: 't1' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
      ],
    }),
  };
}

/** The system messages of a prompt the model received. */
const systemTexts = (prompt: Prompt | undefined) =>
  (prompt ?? []).flatMap((message) => (message.role === 'system' ? [message.content] : []));

// The package against a real listening server (the app over a fresh database), with the AI SDK's
// mock language model standing in for a provider.
describeDb('@mnemo/ai-sdk against a live server', () => {
  let testApp: TestApp;
  let listener: Server;
  let baseUrl: string;
  let client: MemoryClient;

  beforeAll(async () => {
    testApp = await createTestApp();
    listener = await new Promise<Server>((resolve) => {
      const server = testApp.app.listen(0, '127.0.0.1', () => resolve(server));
    });
    baseUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    client = new MemoryClient({ baseUrl, apiKey: testApp.tenant.apiKey, transport: 'rest' });
    // A fresh PGlite database runs every migration: past the 30 s default on a busy machine.
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await new Promise<void>((resolve) => {
      listener?.closeAllConnections();
      listener?.close(() => resolve());
    });
    await testApp?.close();
  });

  it("puts the owner's remembered context in the prompt the model receives, after the app's system prompt", async () => {
    const peanuts = await client.memories.add({
      text: 'Ana is allergic to peanuts and carries an epipen',
      ownerId: 'ana',
      extract: false,
    });
    await client.memories.add({
      text: 'Bruno is allergic to shellfish',
      ownerId: 'bruno',
      extract: false,
    });
    const model = new MockLanguageModelV3({ doGenerate: answer('Try the lentil curry.') });

    const result = await generateText({
      model: wrapLanguageModel({
        model,
        middleware: mnemoMemory({ client, owner: 'ana', remember: false }),
      }),
      system: 'You are a helpful cook.',
      prompt: 'Which food allergies should the dinner menu avoid?',
    });

    expect(result.text).toBe('Try the lentil curry.');
    const prompt = model.doGenerateCalls[0]?.prompt;
    expect(prompt?.map((message) => message.role)).toEqual(['system', 'system', 'user']);
    const [appSystem, memorySystem] = systemTexts(prompt);
    expect(appSystem).toBe('You are a helpful cook.');
    expect(memorySystem).toContain('[1] Ana is allergic to peanuts and carries an epipen');
    // Another owner's memory never reaches this owner's prompt.
    expect(memorySystem).not.toContain('shellfish');
    expect(result.providerMetadata?.mnemo).toMatchObject({
      citations: [{ i: 1, memoryId: peanuts.memory_id }],
    });
    expect(result.providerMetadata?.mnemo?.contextRequestId).toEqual(expect.any(String));
  });

  it('adds nothing to the prompt when nothing relevant is remembered; shouldRemember can skip a turn', async () => {
    const model = new MockLanguageModelV3({ doGenerate: answer('Hello!') });
    const seen: Array<{ userText?: string; answerText: string }> = [];
    const memory = mnemoMemory({
      client,
      owner: 'nobody-yet',
      shouldRemember: (turn) => {
        seen.push(turn);
        return false;
      },
    });
    await generateText({
      model: wrapLanguageModel({ model, middleware: memory }),
      prompt: 'Hi there',
    });
    await memory.flush();

    expect(model.doGenerateCalls[0]?.prompt.map((message) => message.role)).toEqual(['user']);
    expect(seen).toEqual([{ userText: 'Hi there', answerText: 'Hello!' }]);
    expect((await client.memories.list({ ownerId: 'nobody-yet' })).results).toEqual([]);
  });

  it('stores what the turn taught after the answer; it is searchable and recalled on the next turn', async () => {
    const outcomes: RememberOutcome[] = [];
    const memory = mnemoMemory({
      client,
      owner: { ownerId: 'carla', ownerType: 'user' },
      remember: 'turn',
      metadata: { app: 'travel' },
      onRemembered: (outcome) => outcomes.push(outcome),
    });
    const model = new MockLanguageModelV3({
      doGenerate: [
        answer('Noted: aisle seats from now on.'),
        answer('Booked an aisle seat to Lisbon.'),
      ],
    });
    const wrapped = wrapLanguageModel({ model, middleware: memory });

    await generateText({
      model: wrapped,
      prompt: 'I always want an aisle seat on flights because of my long legs.',
    });
    await memory.flush();
    const [stored] = outcomes;
    expect(outcomes).toHaveLength(1);
    expect(stored).toMatchObject({ status: 'stored', deduped: false });
    if (stored?.status !== 'stored') throw new Error('not stored');

    const kept = await client.memories.get(stored.memoryId);
    expect(kept.text).toBe(
      'user: I always want an aisle seat on flights because of my long legs.\n' +
        'assistant: Noted: aisle seats from now on.',
    );
    expect(kept.owner_id).toBe('carla');
    expect(kept.metadata).toMatchObject({
      app: 'travel',
      ingest: 'ai-sdk',
      roles: 'user, assistant',
    });
    const found = await client.search.query({ query: 'aisle seat flights', ownerId: 'carla' });
    // One result per fact: the turn may come back as itself or behind a fact extracted from it.
    const members = found.results.flatMap((hit) => [
      hit.memory_id,
      ...(hit.related ?? []).map((member) => member.memory_id),
    ]);
    expect(members).toContain(stored.memoryId);

    await generateText({ model: wrapped, prompt: 'Book my seat on the flight to Lisbon.' });
    expect(systemTexts(model.doGenerateCalls[1]?.prompt).join('\n')).toContain(
      'I always want an aisle seat on flights',
    );
    await memory.flush();
    expect(outcomes).toHaveLength(2);
  });

  it('streams: the context reaches the model, the answer streams through, the answer is stored', async () => {
    await client.memories.add({
      text: 'Dmitri prefers answers in short bullet points',
      ownerId: 'dmitri',
      extract: false,
    });
    const outcomes: RememberOutcome[] = [];
    const memory = mnemoMemory({
      client,
      owner: 'dmitri',
      remember: 'assistant',
      onRemembered: (outcome) => outcomes.push(outcome),
    });
    const reply = 'Your Kyoto itinerary is three days of temples, gardens and tea houses.';
    const model = new MockLanguageModelV3({ doStream: streamedAnswer(reply) });

    const result = streamText({
      model: wrapLanguageModel({ model, middleware: memory }),
      prompt: 'Plan my Kyoto trip; short answers in bullet points, please.',
    });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);

    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(reply);
    expect(systemTexts(model.doStreamCalls[0]?.prompt).join('\n')).toContain(
      'Dmitri prefers answers in short bullet points',
    );
    expect((await result.providerMetadata)?.mnemo).toMatchObject({
      citations: [{ i: 1 }],
    });
    await memory.flush();
    const [stored] = outcomes;
    if (stored?.status !== 'stored') throw new Error(`not stored: ${JSON.stringify(stored)}`);
    expect((await client.memories.get(stored.memoryId)).text).toBe(reply);
    const found = await client.search.query({ query: 'Kyoto itinerary', ownerId: 'dmitri' });
    // One result per fact: the turn may come back as itself or behind a fact extracted from it.
    const members = found.results.flatMap((hit) => [
      hit.memory_id,
      ...(hit.related ?? []).map((member) => member.memory_id),
    ]);
    expect(members).toContain(stored.memoryId);
  });

  it("the tools run against the server for the model's tool calls; a tool loop stores the turn once", async () => {
    const seats = await client.memories.add({
      text: 'Eva prefers window seats on long flights',
      ownerId: 'eva',
      extract: false,
    });
    const outcomes: RememberOutcome[] = [];
    const memory = mnemoMemory({
      client,
      owner: 'eva',
      onRemembered: (outcome) => outcomes.push(outcome),
    });
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'c1',
              toolName: 'searchMemories',
              input: JSON.stringify({ query: 'seat preference', topK: 3 }),
            },
            {
              type: 'tool-call',
              toolCallId: 'c2',
              toolName: 'getContext',
              input: JSON.stringify({ query: 'seats on flights' }),
            },
            {
              type: 'tool-call',
              toolCallId: 'c3',
              toolName: 'addMemory',
              input: JSON.stringify({
                text: 'Eva is flying to Oslo on 3 March',
                memoryType: 'event',
              }),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        answer('Window seat booked for Oslo.'),
      ],
    });

    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: memory }),
      tools: mnemoTools({ client, owner: 'eva', metadata: { app: 'travel' } }),
      stopWhen: stepCountIs(3),
      prompt: 'Book me a seat on my long flight to Oslo on 3 March.',
    });

    expect(result.text).toBe('Window seat booked for Oslo.');
    const outputs = Object.fromEntries(
      result.steps[0]!.toolResults.map((toolResult) => [toolResult.toolName, toolResult.output]),
    );
    expect(outputs.searchMemories).toMatchObject({
      memories: [{ memoryId: seats.memory_id, text: 'Eva prefers window seats on long flights' }],
    });
    expect(outputs.getContext).toMatchObject({
      context: expect.stringContaining('[1] Eva prefers window seats on long flights'),
      citations: [{ i: 1, memoryId: seats.memory_id }],
    });
    expect(outputs.addMemory).toMatchObject({ memoryId: expect.any(String), deduped: false });
    const added = await client.memories.get((outputs.addMemory as { memoryId: string }).memoryId);
    expect(added).toMatchObject({
      text: 'Eva is flying to Oslo on 3 March',
      owner_id: 'eva',
      memory_type: 'event',
      metadata: { app: 'travel', ingest: 'ai-sdk', roles: 'tool' },
    });

    // Both steps saw the context; only the step that answered stored the user's message.
    expect(model.doGenerateCalls).toHaveLength(2);
    for (const call of model.doGenerateCalls) {
      expect(systemTexts(call.prompt).join('\n')).toContain('Eva prefers window seats');
    }
    await memory.flush();
    expect(outcomes).toHaveLength(1);
    const [turn] = outcomes;
    if (turn?.status !== 'stored') throw new Error('not stored');
    expect((await client.memories.get(turn.memoryId)).text).toBe(
      'Book me a seat on my long flight to Oslo on 3 March.',
    );
  });

  it('answers without memory when the server refuses, and reports both failures', async () => {
    const errors: Array<{ stage: string; error: unknown }> = [];
    const outcomes: RememberOutcome[] = [];
    const memory = mnemoMemory({
      client: new MemoryClient({ baseUrl, apiKey: 'mnemo_not_a_key', transport: 'rest' }),
      owner: 'fay',
      onError: (error, stage) => errors.push({ stage, error }),
      onRemembered: (outcome) => outcomes.push(outcome),
    });
    const model = new MockLanguageModelV3({ doGenerate: answer('Hello Fay.') });

    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: memory }),
      prompt: 'I am Fay and I like jazz.',
    });

    expect(result.text).toBe('Hello Fay.');
    expect(model.doGenerateCalls[0]?.prompt.map((message) => message.role)).toEqual(['user']);
    await memory.flush();
    expect(outcomes).toMatchObject([{ status: 'failed' }]);
    expect(errors.map(({ stage }) => stage)).toEqual(['recall', 'remember']);
    for (const { error } of errors) expect(error).toBeInstanceOf(AuthenticationError);
  });
});
