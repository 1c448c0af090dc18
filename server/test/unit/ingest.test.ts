import {
  LIMITS,
  MAX_SECTION_CHARS,
  splitDocumentSections,
  splitSectionPieces,
  type ConversationMessage,
} from '@mnemo/contract';
import { describe, expect, it } from 'vitest';
import { createExtractor } from '../../src/providers/extraction/index.js';
import { groupTurns, parseTranscript } from '../../src/services/ingest/conversation.js';
import { estimateIngestCost } from '../../src/services/ingest/index.js';
import { estimateWriteCost as writeCost } from '../../src/services/memory-write/budget.js';
import { ServiceError } from '../../src/errors.js';

const user = (content: string): ConversationMessage => ({ role: 'user', content });
const assistant = (content: string): ConversationMessage => ({ role: 'assistant', content });

describe('parseTranscript', () => {
  it('reads speakers, roles and continuation lines', () => {
    // A line that starts with a letter and has a colon within 100 characters is a speaker's.
    expect(
      parseTranscript(
        [
          'SYSTEM: be brief',
          'Human: first line',
          '- a list item: with a colon, still the same message',
          '',
          'Agent Smith: hello',
          'AI: hi',
          'Priya: a named user',
        ].join('\r\n'),
        ['agent smith'],
      ),
    ).toEqual([
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: 'first line\n- a list item: with a colon, still the same message',
      },
      { role: 'assistant', name: 'Agent Smith', content: 'hello' },
      { role: 'assistant', content: 'hi' },
      { role: 'user', name: 'Priya', content: 'a named user' },
    ]);
  });

  it('refuses text before the first speaker, and a transcript without messages', () => {
    expect(() => parseTranscript('\n  \nno speaker here\nuser: hi')).toThrow(ServiceError);
    expect(() => parseTranscript('user:   \nassistant:')).toThrow(/no messages/);
  });
});

describe('groupTurns', () => {
  const chat = [
    { role: 'system', content: 'scene' } as ConversationMessage,
    user('a'),
    user('b'),
    assistant('c'),
    { role: 'tool', content: 'd' } as ConversationMessage,
    user('e'),
    assistant('f'),
  ];

  it('exchange: user messages with the replies after them; the system message with the first', () => {
    expect(groupTurns(chat, 'exchange').map((turn) => turn.indexes)).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6],
    ]);
  });

  const said = (name: string, content: string): ConversationMessage => ({
    role: 'user',
    name,
    content,
  });

  it('exchange between people: a message and the answers after it, until its speaker speaks again', () => {
    const talk = [
      said('Ana', 'a'),
      said('Ben', 'b'),
      said('Ben', 'c'),
      said('Ana', 'd'),
      said('Ana', 'e'),
      said('Cy', 'f'),
      said('Ben', 'g'),
      said('Ana', 'h'),
    ];
    expect(groupTurns(talk, 'exchange').map((turn) => turn.indexes)).toEqual([
      [0, 1, 2],
      [3, 4, 5, 6],
      [7],
    ]);
  });

  it('exchange: one speaker alone stays one turn; after an assistant reply any user starts one', () => {
    expect(
      groupTurns([said('Ana', 'a'), said('Ana', 'b'), said('Ana', 'c')], 'exchange').map(
        (turn) => turn.indexes,
      ),
    ).toEqual([[0, 1, 2]]);
    expect(
      groupTurns([said('Ana', 'a'), assistant('b'), said('Ben', 'c')], 'exchange').map(
        (turn) => turn.indexes,
      ),
    ).toEqual([[0, 1], [2]]);
  });

  it('message: one turn per message, roles filtered out keep their indexes', () => {
    expect(groupTurns(chat, 'message', ['user']).map((turn) => turn.indexes)).toEqual([
      [1],
      [2],
      [5],
    ]);
  });

  it('ends a turn before a message that would pass the memory text limit', () => {
    const long = 'x'.repeat(30_000);
    const turns = groupTurns([user(long), assistant(long), assistant('short')], 'exchange');
    expect(turns.map((turn) => turn.indexes)).toEqual([[0], [1, 2]]);
    for (const turn of turns) expect(turn.text.length).toBeLessThanOrEqual(LIMITS.memoryText.max);
  });
});

describe('document sections and pieces', () => {
  it('cuts at headings, not inside fenced code, and keeps the text before the first heading', () => {
    const sections = splitDocumentSections(
      'Preface.\n\n# One\n\nText.\n\n```sh\n# a shell comment\n```\n\n## Two ##\n\nMore.',
    );
    expect(sections.map((s) => [s.title, s.continued])).toEqual([
      ['', false],
      ['One', false],
      ['Two', false],
    ]);
    expect(sections[1]!.text).toBe('# One\n\nText.\n\n```sh\n# a shell comment\n```');
  });

  it('continues a section over the size limit under the same title, losing no text', () => {
    const paragraph = 'word '.repeat(200).trim();
    const body = Array.from({ length: 50 }, () => paragraph).join('\n\n');
    const sections = splitDocumentSections(`# Big\n\n${body}`);
    expect(sections.length).toBeGreaterThan(2);
    expect(sections.every((s) => s.title === 'Big')).toBe(true);
    expect(sections.map((s) => s.continued)).toEqual(sections.map((_, i) => i > 0));
    for (const s of sections) expect(s.text.length).toBeLessThanOrEqual(MAX_SECTION_CHARS);
    expect(sections.map((s) => s.text).join('\n\n')).toBe(`# Big\n\n${body}`);
  });

  it('packs whole paragraphs into pieces, cutting only a paragraph longer than a piece', () => {
    const pieces = splitSectionPieces(
      `a${'b'.repeat(298)}\n\n${'c'.repeat(300)}\n\n${'d '.repeat(400)}`,
      600,
    );
    expect(pieces.map((p) => p.length)).toEqual([299, 300, 599, 199]);
    expect(pieces.every((p) => p.length <= 600)).toBe(true);
  });
});

describe('estimateIngestCost', () => {
  const prices = { embedMicroInrPerToken: 2, genMicroInrPerToken: 10 };
  // A model extractor (never called here): its calls are priced.
  const model = createExtractor({ provider: 'openai', baseUrl: 'http://127.0.0.1:9', model: 'm' });
  const estimateWriteCost = (text: string, extract: boolean, p: typeof prices) =>
    writeCost(model, { text, extract }, p);

  it('counts every message as one write, extraction included unless turned off', () => {
    const body = { messages: [{ content: 'a'.repeat(40) }, { content: 'b'.repeat(80) }, 7] };
    const each = (text: string, extract: boolean) => estimateWriteCost(text, extract, prices);
    expect(each('a'.repeat(40), true)).toBeGreaterThan(each('a'.repeat(40), false));
    expect(estimateIngestCost(body, 'conversation', model, prices)).toBe(
      each('a'.repeat(40), true) + each('b'.repeat(80), true) + each('', true),
    );
    expect(estimateIngestCost({ ...body, extract: false }, 'conversation', model, prices)).toBe(
      each('a'.repeat(40), false) + each('b'.repeat(80), false) + each('', false),
    );
  });

  it('dispatches on type; a document is extracted only when asked; junk costs nothing', () => {
    const text = 'x'.repeat(400);
    expect(estimateIngestCost({ type: 'document', text }, 'ingest', model, prices)).toBe(
      estimateWriteCost(text, false, prices),
    );
    expect(
      estimateIngestCost({ type: 'document', text, extract: true }, 'ingest', model, prices),
    ).toBe(estimateWriteCost(text, true, prices));
    expect(estimateIngestCost({ type: 'memory', text }, 'ingest', model, prices)).toBe(
      estimateWriteCost(text, true, prices),
    );
    expect(
      estimateIngestCost(
        { type: 'conversation', transcript: 'user: a\n\nassistant: b' },
        'ingest',
        undefined,
        prices,
      ),
    ).toBe(
      estimateWriteCost('user: a', false, prices) +
        estimateWriteCost('assistant: b', false, prices),
    );
    expect(estimateIngestCost({ type: 'video', text }, 'ingest', model, prices)).toBe(0);
  });
});
