import { describe, expect, it } from 'vitest';
import { LocalExtractor } from '../../src/providers/extraction/local.js';
import {
  assessConfidence,
  assessVolatility,
  extractClaims,
  isReportedSpeech,
} from '../../src/services/lifecycle/analysis.js';
import { assessMemory } from '../../src/services/lifecycle/intelligence.js';
import { canonicalHash } from '../../src/text/canonical.js';
import { detectLanguage, ENGLISH, GERMAN, NEUTRAL } from '../../src/text/language.js';
import { asksAboutTime } from '../../src/text/temporal.js';
import { words } from '../../src/text/tokens.js';

const code = (text: string) => detectLanguage(text).code;
const from = new Date('2026-03-02T12:00:00Z');
const assess = (text: string) =>
  assessMemory({ text, memoryType: 'note', importance: 1, metadata: {}, effectiveAt: from }, from);

describe('language detection', () => {
  it('keeps English the default, for short notes, names, codes and English with German words', () => {
    for (const text of [
      'I live in Paris.',
      'Die Hard is my favourite film.',
      'I met Müller in Köln last week.',
      'Code 4821',
      'Danke!',
      '',
      'La La Land is a great movie.',
    ]) {
      expect(code(text), text).toBe('en');
    }
  });

  it('recognises German by its stop words, common words and letters', () => {
    expect(code('Ich wohne in Berlin.')).toBe('de');
    expect(code('Anna wohnt in Köln, sagt Peter.')).toBe('de');
    expect(code('Das Büro schließt um 18 Uhr.')).toBe('de');
  });

  it('reads other scripts and languages without rules neutrally', () => {
    expect(code('मैं दिल्ली में रहता हूँ।')).toBe('neutral');
    // Hindi with English words in Latin letters is still Hindi.
    expect(code('मेरा नाम Priya है। मैं maybe next week Mumbai shift हो रही हूँ।')).toBe('neutral');
    expect(code('Je pense que j’habite à Paris maintenant.')).toBe('neutral');
    expect(code('Yo vivo en Madrid con mi familia.')).toBe('neutral');
    expect(code('東京に住んでいます。')).toBe('neutral');
  });
});

describe('German rules', () => {
  it('finds the hedges, corrections and time-bound wording of German', () => {
    expect(assessConfidence('Vielleicht ziehe ich nach Wien.', 'note', GERMAN).confidence).toBe(
      0.65,
    );
    expect(assessConfidence('Ich rauche nicht mehr.', 'note', GERMAN).correction).toBe(true);
    expect(assessVolatility('Ich bin heute im Büro.', 'note', from, GERMAN).expiresAt).toEqual(
      new Date(from.getTime() + 86_400_000),
    );
    // A past event stays true after its day; a plan for tomorrow does not.
    expect(assessVolatility('Ich war heute beim Arzt.', 'note', from, GERMAN).expiresAt).toBeNull();
    expect(
      assessVolatility('Ich habe heute den Zaun gestrichen.', 'note', from, GERMAN).expiresAt,
    ).toBeNull();
    expect(
      assessVolatility('Ich fahre morgen nach Hamburg.', 'note', from, GERMAN).volatility,
    ).toBe(0.9);
    expect(assessVolatility('Guten Morgen, alles gut.', 'note', from, GERMAN).volatility).toBe(0.1);
  });

  it('states the claims German wording makes, and only those', () => {
    expect(extractClaims('Ich wohne jetzt in Hamburg.', GERMAN)).toEqual([
      { subject: 'self', attribute: 'residence', value: 'hamburg' },
    ]);
    expect(extractClaims('Wir arbeiten seit kurzem bei Siemens.', GERMAN)).toEqual([
      { subject: 'self', attribute: 'employer', value: 'siemens' },
    ]);
    expect(extractClaims('Meine Lieblingsfarbe ist Blau.', GERMAN)).toEqual([
      { subject: 'self', attribute: 'lieblingsfarbe', value: 'blau' },
    ]);
    expect(extractClaims('Anna wohnt in Köln.', GERMAN)).toEqual([
      { subject: 'anna', attribute: 'residence', value: 'köln' },
    ]);
    expect(extractClaims('Ich bin 34 Jahre alt.', GERMAN)).toEqual([
      { subject: 'self', attribute: 'age', value: '34' },
    ]);
    // A noun is no name: whose brother is not said, so no claim.
    expect(extractClaims('Mein Bruder wohnt in München.', GERMAN)).toEqual([]);
    expect(extractClaims('Wohnst du in Berlin?', GERMAN)).toEqual([]);
    expect(extractClaims('Ich wohne gern am See.', GERMAN)).toEqual([]);
    expect(extractClaims('Peter sagte: „Ich wohne in Rom.“', GERMAN)).toEqual([
      { subject: 'peter', attribute: 'residence', value: 'rom' },
    ]);
    expect(isReportedSpeech('Peter sagte: „Ich wohne in Rom.“', GERMAN)).toBe(true);
  });

  it('asks about time in German, and not in a language without rules', () => {
    expect(asksAboutTime('Wann bin ich nach Berlin gezogen?')).toBe(true);
    expect(asksAboutTime('In welchem Jahr hat Anna geheiratet?')).toBe(true);
    expect(asksAboutTime('Wo wohnt Anna?')).toBe(false);
    expect(asksAboutTime('When did I move to Berlin?')).toBe(true);
    expect(asksAboutTime('मैं कब when दिल्ली गया था?')).toBe(false);
  });
});

describe('no English rules on other languages', () => {
  it('finds no hedge, expiry or claim in Hindi with English words', () => {
    const text = 'मेरा नाम Priya है। मैं maybe next week Mumbai shift हो रही हूँ।';
    // What the English rules alone would make of it: a hedge and an expiry.
    expect(assessConfidence(text, 'note', ENGLISH).hedges).toBe(1);
    expect(assessVolatility(text, 'note', from, ENGLISH).expiresAt).not.toBeNull();
    const assessment = assess(text);
    expect(assessment.language).toBe(NEUTRAL);
    expect(assessment.confidence).toBe(0.8);
    expect(assessment.expiresAt).toBeNull();
    expect(assessment.claims).toEqual([]);
  });

  it('reads German with English phrases by the German rules', () => {
    const text = 'Der Termin war kind of chaotisch, und Maria is married now.';
    expect(extractClaims(text, ENGLISH)).toHaveLength(1);
    const assessment = assess(text);
    expect(assessment.language).toBe(GERMAN);
    expect(assessment.claims).toEqual([]);
    expect(assessment.confidence).toBe(0.8);
    // "Update:" opens a correction in English, not in German.
    expect(assess('Update: Die Deadline für den Launch ist heute.').correction).toBe(false);
  });

  it('keeps the sentences of a text without a grammar whole, typed as facts', () => {
    const extractor = new LocalExtractor();
    expect(
      extractor.extractSync(
        'Hallo Anna! Die Deadline für das Release ist Freitag. Ich muss noch das Follow-up schreiben. Kommst du morgen?',
        10,
      ),
    ).toEqual([
      // No German lead-in rules: a greeting with a name stays (English would drop it).
      { text: 'Hallo Anna!', memoryType: 'fact' },
      // English would type both as tasks ("deadline", "follow-up").
      { text: 'Die Deadline für das Release ist Freitag.', memoryType: 'fact' },
      { text: 'Ich muss noch das Follow-up schreiben.', memoryType: 'fact' },
    ]);
    expect(extractor.extractSync('मैं दिल्ली में रहता हूँ। मुझे चाय पसंद है।', 10)).toEqual([]);
  });
});

describe('words in scripts with combining marks', () => {
  it('keeps vowel signs inside the word, so different words hash apart', () => {
    expect(words('मैं दिल्ली में रहता हूँ')).toEqual(['मैं', 'दिल्ली', 'में', 'रहता', 'हूँ']);
    expect(canonicalHash('मैं दिल्ली में रहता हूँ।')).not.toBe(canonicalHash('मैं दिल्ली में रहती हूँ।'));
    // Emoji presentation selectors still end a word, as before.
    expect(words('call 1️⃣ now')).toEqual(['call', '1', 'now']);
  });
});
