import { describe, expect, it } from 'vitest';
import { LocalExtractor } from '../../src/providers/extraction/local.js';
import type { ExtractedMemory } from '../../src/providers/extraction/types.js';

const extractor = new LocalExtractor();

function extract(text: string, maxItems = 10): Promise<ExtractedMemory[]> {
  return extractor.extract(text, { maxItems });
}

/** Compact expectations: `[text, type]` pairs. */
function memories(...pairs: [string, ExtractedMemory['memoryType']][]): ExtractedMemory[] {
  return pairs.map(([text, memoryType]) => ({ text, memoryType }));
}

describe('LocalExtractor', () => {
  it('is named local', () => {
    expect(extractor.name).toBe('local');
  });

  it('splits the reference paragraph into typed atomic memories', async () => {
    const text =
      'I moved to Berlin last month and started working at Siemens as an engineer. I love ' +
      'hiking and my favourite food is ramen. I need to renew my passport before June.';
    expect(await extract(text)).toEqual(
      memories(
        ['I moved to Berlin last month.', 'event'],
        ['I started working at Siemens as an engineer.', 'fact'],
        ['I love hiking.', 'preference'],
        ['My favourite food is ramen.', 'preference'],
        ['I need to renew my passport before June.', 'task'],
      ),
    );
  });

  describe('clause splitting', () => {
    it.each([
      ['I love hiking and hate running.', ['I love hiking.', 'I hate running.']],
      [
        'I moved to Berlin and started at Siemens.',
        ['I moved to Berlin.', 'I started at Siemens.'],
      ],
      [
        'My wife and I moved to Lisbon in 2021 and bought a flat near the river.',
        ['My wife and I moved to Lisbon in 2021.', 'My wife and I bought a flat near the river.'],
      ],
      [
        "I'm going to call the bank and cancel my card tomorrow.",
        ["I'm going to call the bank.", "I'm going to cancel my card tomorrow."],
      ],
      [
        'I have lived in Rome and worked in Paris.',
        ['I have lived in Rome.', 'I have worked in Paris.'],
      ],
      [
        'Last month, my sister moved to Rome and started at the FAO.',
        ['Last month, my sister moved to Rome.', 'My sister started at the FAO.'],
      ],
      [
        'I love to cook pasta and hate cleaning up afterwards.',
        ['I love to cook pasta.', 'I hate cleaning up afterwards.'],
      ],
    ])('carries the subject over: %s', async (text, expected) => {
      expect((await extract(text)).map((memory) => memory.text)).toEqual(expected);
    });

    it.each([
      [
        'I work at Siemens and Anna works at Bosch.',
        ['I work at Siemens.', 'Anna works at Bosch.'],
      ],
      ['I like tea, but my wife prefers coffee.', ['I like tea.', 'My wife prefers coffee.']],
      [
        'I bought a car and it broke down a week later.',
        ['I bought a car.', 'It broke down a week later.'],
      ],
      ['I love hiking; my wife prefers swimming.', ['I love hiking.', 'My wife prefers swimming.']],
      [
        'I called support twice and nobody picked up.',
        ['I called support twice.', 'Nobody picked up.'],
      ],
    ])('splits where the right side has its own subject: %s', async (text, expected) => {
      expect((await extract(text)).map((memory) => memory.text)).toEqual(expected);
    });

    it.each([
      // Noun lists and object phrases.
      'I like tea and coffee.',
      "I'm allergic to peanuts and shellfish.",
      'I visited Paris and Rome last year.',
      'I like Harry Potter and the Lord of the Rings.',
      "I'm available between Monday and Friday.",
      'I bought milk and work supplies.',
      'I bought fried chicken and baked potatoes.',
      'I like books and travel guides.',
      'I like coffee but not tea.',
      // The right verb belongs to an embedded clause, not to the subject.
      'I know people who love hiking and hate running.',
      'I have a friend who lives in Rome and works at the FAO.',
      'I think Anna loves Rome and hates Paris.',
      // A subordinate clause first: "gets cold" has no subject of its own to borrow.
      'If it rains and gets cold, I stay home.',
      // A negated modal: which half "can't" covers is ambiguous.
      "I can't eat gluten and avoid dairy at dinner.",
      // Inside brackets.
      'I ordered the usual (a flat white and a croissant with jam).',
    ])('leaves one clause whole: %s', async (text) => {
      expect(await extract(text)).toEqual([]);
    });
  });

  describe('classification', () => {
    it.each([
      ['I love hiking.', 'preference'],
      ["I can't stand loud music.", 'preference'],
      ["I'd rather take the train than fly.", 'preference'],
      ['My favorite color is blue.', 'preference'],
      ['Customer prefers email over phone calls.', 'preference'],
      ['I hate Mondays.', 'preference'],
      ['My daughter is allergic to penicillin.', 'fact'],
      ['I have two kids.', 'fact'],
      ['I work as a nurse.', 'fact'],
      ['I used to live in Paris.', 'fact'],
      ['I usually go to the gym on Mondays.', 'fact'],
      ["I'm going to the gym.", 'fact'],
      ['I started working at Siemens as an engineer.', 'fact'],
      ["I don't have to work on Fridays.", 'fact'],
      ['I need to renew my passport before June.', 'task'],
      ["I'm planning to visit Japan next spring.", 'task'],
      ["I'm going to start running.", 'task'],
      ["I'll call the plumber tomorrow.", 'task'],
      ["Don't forget to water the plants.", 'task'],
      ['Remind me to send the renewal quote next week.', 'task'],
      ['We should book the venue by Friday.', 'task'],
      ['Please send the receipt to my work email.', 'task'],
      ['Call mom on Sunday.', 'task'],
      ['TODO: update the billing address.', 'task'],
      ['I moved to Berlin last month.', 'event'],
      ['We met on June 5 at the conference.', 'event'],
      ['The contract renews on 2026-01-31.', 'event'],
      ['The package will arrive on Friday.', 'event'],
      ['I was born in 1990.', 'event'],
      ['I paid the bill.', 'event'],
      ['My sister called me.', 'event'],
    ] as const)('%s → %s', async (sentence, memoryType) => {
      // A greeting in front, so the sentence is not the whole (already atomic) text.
      expect(await extract(`Hello! ${sentence}`)).toEqual([{ text: sentence, memoryType }]);
    });
  });

  describe('filtering and cleaning', () => {
    it('drops greetings, questions, thanks and sign-offs', async () => {
      const text =
        'Hi Anna! How are you? I moved to Berlin last month. Can you update my address? ' +
        'Thanks so much! Let me know if you need anything else. Have a great weekend!';
      expect(await extract(text)).toEqual(memories(['I moved to Berlin last month.', 'event']));
    });

    it.each([
      'ok thanks',
      'Sounds good, talk soon!',
      'Noted.',
      'Great, thanks!',
      'Where do I sign up?',
    ])('finds nothing in %j', async (text) => {
      expect(await extract(text)).toEqual([]);
    });

    it('strips lead-ins and list markers, capitalises and ends with a period', async () => {
      const text = '- buy milk\n- call the bank about the card\n* so i moved to Porto in march';
      expect(await extract(text)).toEqual(
        memories(
          ['Buy milk.', 'task'],
          ['Call the bank about the card.', 'task'],
          ['I moved to Porto in march.', 'event'],
        ),
      );
    });

    it('keeps exclamation marks and removes duplicates', async () => {
      const text = 'I love hiking! I hate running. I LOVE hiking.';
      expect(await extract(text)).toEqual(
        memories(['I love hiking!', 'preference'], ['I hate running.', 'preference']),
      );
    });

    it('returns [] for text that is already one atomic statement', async () => {
      expect(await extract('I love hiking')).toEqual([]);
      expect(await extract('  My favourite food is ramen.  ')).toEqual([]);
      expect(await extract('I need to renew my passport before June.')).toEqual([]);
      expect(await extract('')).toEqual([]);
    });

    it('returns a lone statement when the text had more around it', async () => {
      expect(await extract("Hi! I'm vegan.")).toEqual(memories(["I'm vegan.", 'fact']));
    });
  });

  describe('limits', () => {
    const sentences = Array.from(
      { length: 15 },
      (_, i) => `I visited city number ${i + 1} in 2020.`,
    );
    const text = sentences.join(' ');

    it('keeps the first maxItems children in text order', async () => {
      const found = await extract(text, 10);
      expect(found).toHaveLength(10);
      expect(found.map((memory) => memory.text)).toEqual(sentences.slice(0, 10));
      expect(found.every((memory) => memory.memoryType === 'event')).toBe(true);
      expect((await extract(text, 3)).map((memory) => memory.text)).toEqual(sentences.slice(0, 3));
    });

    it('returns nothing for maxItems below 1, and one child for maxItems 1', async () => {
      expect(await extract(text, 0)).toEqual([]);
      expect(await extract('I love hiking and hate running.', 1)).toEqual(
        memories(['I love hiking.', 'preference']),
      );
    });
  });

  it('skips run-on text instead of returning a giant child', async () => {
    const runOn = 'i moved to berlin and started at siemens and my wife likes tea '.repeat(30);
    expect(await extract(`${runOn}. I love hiking and hate running.`)).toEqual(
      memories(['I love hiking.', 'preference'], ['I hate running.', 'preference']),
    );
  });

  it('is deterministic', async () => {
    const text =
      'Hi, my name is Sarah Chen and I am on the Pro plan. My wife and I moved to Lisbon in ' +
      '2021 and bought a flat near the river. I love hiking and hate running.';
    const first = await extract(text);
    expect(first.length).toBeGreaterThan(3);
    expect(await extract(text)).toEqual(first);
    expect(await new LocalExtractor().extract(text, { maxItems: 10 })).toEqual(first);
  });

  describe('customer support notes', () => {
    it('a billing complaint', async () => {
      const text =
        "Hi, my name is Sarah Chen and I'm on the Pro plan. My invoice from March was charged " +
        "twice. I'd like to get a refund for the duplicate charge. Please send the receipt to " +
        'my work email. Thanks!';
      expect(await extract(text)).toEqual(
        memories(
          ['My name is Sarah Chen.', 'fact'],
          ["I'm on the Pro plan.", 'fact'],
          ['My invoice from March was charged twice.', 'event'],
          ["I'd like to get a refund for the duplicate charge.", 'task'],
          ['Please send the receipt to my work email.', 'task'],
        ),
      );
    });

    it('an agent note about a crash', async () => {
      const text =
        'Hello team, the customer reported that the app crashes on login since the 4.2 update. ' +
        'They use an iPhone 12 and iOS 17. Escalate to engineering if it happens again. Can ' +
        'you check the logs?';
      expect(await extract(text)).toEqual(
        memories(
          ['The customer reported that the app crashes on login since the 4.2 update.', 'event'],
          ['They use an iPhone 12 and iOS 17.', 'fact'],
          ['Escalate to engineering if it happens again.', 'task'],
        ),
      );
    });

    it('an account summary with a semicolon', async () => {
      const text =
        'Customer prefers email over phone calls. Their account ID is AC-4471; the contract ' +
        'renews on 2026-01-31. Remind me to send the renewal quote next week.';
      expect(await extract(text)).toEqual(
        memories(
          ['Customer prefers email over phone calls.', 'preference'],
          ['Their account ID is AC-4471.', 'fact'],
          ['The contract renews on 2026-01-31.', 'event'],
          ['Remind me to send the renewal quote next week.', 'task'],
        ),
      );
    });
  });
});
