/**
 * The text-analysis port: everything language-specific the server reads from wording (stop
 * words, stemming, hedges, corrections, time-bound wording, claims, time questions, the
 * extractor's grammar lexicon) comes from one data file per language in `lang/`, compiled once
 * at start-up. A text is read by the rules of its own language; a language without data is read
 * by the neutral rules, which infer nothing from wording.
 */
import { z } from 'zod';
import { SetupError } from '../errors.js';
import english from './lang/en.json' with { type: 'json' };
import german from './lang/de.json' with { type: 'json' };
import detection from './lang/detection.json' with { type: 'json' };
import { stem as porterStem, words } from './tokens.js';

const PatternSchema = z.object({ source: z.string(), flags: z.string().optional() });
const WordsSchema = z.array(z.string());

const ClaimRulesSchema = z.object({
  /** Subject-verb-value rules ("I live in X"): `self` for the owner, `other` for a name. */
  relations: z.array(
    z.object({ attribute: z.string(), self: PatternSchema, other: PatternSchema.optional() }),
  ),
  /** Closed-set states ("I'm 34", "Jane is vegan"). */
  states: z.array(z.object({ attribute: z.string(), self: PatternSchema, other: PatternSchema })),
  /** "my <attr> is <value>" and "<Name>'s <attr> is <value>" (groups attr, value, name). */
  possessiveSelf: PatternSchema,
  possessiveOther: PatternSchema,
  /** Spelling variants folded together in attributes and values. */
  spelling: z.array(z.object({ pattern: PatternSchema, replacement: z.string() })),
  leadingArticle: PatternSchema,
  /** Time words removed from a value ("now", "anymore"): they are not part of it. */
  valueNoise: PatternSchema,
  skipAttributes: WordsSchema,
  /** A possessive attribute that names a list ("hobbies"): not a single value. */
  multiValued: PatternSchema.optional(),
  /** `Jane said, "…"`: the quote's first person is the speaker (groups speaker, quote). */
  reportedSpeech: PatternSchema,
});

const EnglishGrammarSchema = z.object({
  grammar: z.literal('english'),
  regularVerbs: WordsSchema,
  irregularVerbs: WordsSchema,
  doubling: WordsSchema,
  bothSpellings: WordsSchema,
  nounLikePasts: WordsSchema,
  strongVerbs: WordsSchema,
  extraForms: z.array(
    z.tuple([z.string(), z.enum(['base', 's', 'past', 'pp', 'ing']), z.string()]),
  ),
  modals: WordsSchema,
  doTense: z.record(z.enum(['base', 's', 'past'])),
  haveTense: z.record(z.enum(['base', 's', 'past'])),
  beTense: z.record(z.enum(['base', 's', 'past'])),
  subjectPronouns: WordsSchema,
  determiners: WordsSchema,
  adverbs: WordsSchema,
  catenative: WordsSchema,
  newHead: WordsSchema,
  embedded: WordsSchema,
  subordinators: WordsSchema,
  followers: WordsSchema,
  introWords: WordsSchema,
  dateWord: PatternSchema,
  leadIn: PatternSchema,
  leadConnective: PatternSchema,
  greetingTail: WordsSchema,
  closing: PatternSchema,
  classify: z.object({
    allergy: PatternSchema,
    negatedObligation: PatternSchema,
    task: z.array(PatternSchema),
    goingTo: PatternSchema,
    will: PatternSchema,
    deadline: PatternSchema,
    preference: z.array(PatternSchema),
    eventVerb: PatternSchema,
    stative: WordsSchema,
    ongoingStart: PatternSchema,
    timeMarkers: z.array(PatternSchema),
    imperativeVerbs: WordsSchema,
    imperativeLead: WordsSchema,
  }),
});

const LanguageDataSchema = z.object({
  $comment: z.string().optional(),
  code: z.string().min(2),
  name: z.string(),
  /** `porter2`: Snowball English, as PostgreSQL's `english` configuration; `none`: words as they are. */
  stemmer: z.enum(['porter2', 'none']),
  stopwords: WordsSchema,
  /**
   * What else tells the language apart, for detection only: common words that are not stop words
   * ("wohnt", "heute"), and letters the language uses and English does not ("ß").
   */
  detection: z.object({ words: WordsSchema, letters: z.string() }).optional(),
  /** Words that carry no information on their own beyond the stop words ("thanks", "okay"). */
  filler: WordsSchema,
  /** Pieces of patterns, inserted where a pattern says {{NAME}}. */
  fragments: z.record(z.string()),
  timeQuestion: PatternSchema,
  confidence: z.object({ hedges: z.array(PatternSchema), corrections: z.array(PatternSchema) }),
  volatility: z.object({
    markers: z.array(
      z.object({
        pattern: PatternSchema,
        volatility: z.number().min(0).max(1),
        lifetimeDays: z.number().positive(),
        future: z.literal(true).optional(),
      }),
    ),
    pastEvent: PatternSchema,
  }),
  claims: ClaimRulesSchema,
  /** The English clause splitter and typer's lexicon; a language without one is extracted neutrally. */
  extraction: EnglishGrammarSchema.optional(),
});

const DetectionSchema = z.object({
  $comment: z.string().optional(),
  /** Languages recognised by their stop words although no rules exist for them: read neutrally. */
  stopwords: z.record(WordsSchema),
});

/** A language's words and letters as detection counts them. */
interface Evidence {
  code: string;
  words: string[];
  letters: string;
}

type LanguageData = z.infer<typeof LanguageDataSchema>;
/** A regular expression as data: its source (with {{NAME}} fragments) and flags. */
export type Pattern = z.infer<typeof PatternSchema>;
export type EnglishGrammarData = z.infer<typeof EnglishGrammarSchema>;

export interface VolatileMarker {
  pattern: RegExp;
  volatility: number;
  lifetimeMs: number;
  future: boolean;
}

export interface ClaimRules {
  relations: Array<{ attribute: string; self: RegExp; other: RegExp | null }>;
  statesSelf: Array<{ attribute: string; pattern: RegExp }>;
  statesOther: Array<{ attribute: string; pattern: RegExp }>;
  possessiveSelf: RegExp;
  possessiveOther: RegExp;
  spelling: Array<[RegExp, string]>;
  leadingArticle: RegExp;
  valueNoise: RegExp;
  skipAttributes: ReadonlySet<string>;
  multiValued: RegExp | null;
  reportedSpeech: RegExp;
}

/** One language's compiled rules. The neutral language has none: it infers nothing. */
export interface TextLanguage {
  /** ISO 639-1 code, or `neutral`. */
  readonly code: string;
  readonly stopwords: ReadonlySet<string>;
  readonly filler: ReadonlySet<string>;
  stem(word: string): string;
  /** Content-word stems: the words that carry meaning, normalised. */
  contentStems(text: string): string[];
  readonly timeQuestion: RegExp | null;
  readonly hedges: readonly RegExp[];
  readonly corrections: readonly RegExp[];
  readonly volatileMarkers: readonly VolatileMarker[];
  readonly pastEvent: RegExp | null;
  readonly claims: ClaimRules | null;
  readonly grammar: EnglishGrammarData | null;
  /** A pattern of this language's data, its fragments inserted. */
  compile(pattern: Pattern): RegExp;
}

const DAY = 86_400_000;
const FRAGMENT = /\{\{(\w+)\}\}/g;

function expand(source: string, fragments: Record<string, string>, depth = 0): string {
  if (depth > 5) throw new SetupError('language data: fragments nest too deep');
  return source.replace(FRAGMENT, (_, name: string) => {
    const fragment = fragments[name];
    if (fragment === undefined) throw new SetupError(`language data: unknown fragment {{${name}}}`);
    return expand(fragment, fragments, depth + 1);
  });
}

const unchanged = (word: string) => word;

function compileLanguage(data: LanguageData): TextLanguage {
  const compile = (pattern: Pattern) =>
    new RegExp(expand(pattern.source, data.fragments), pattern.flags ?? '');
  const stopwords = new Set(data.stopwords);
  const stem = data.stemmer === 'porter2' ? porterStem : unchanged;
  const claims = data.claims;
  return {
    code: data.code,
    stopwords,
    filler: new Set(data.filler),
    stem,
    contentStems: (text) =>
      words(text)
        .filter((word) => !stopwords.has(word))
        .map(stem),
    timeQuestion: compile(data.timeQuestion),
    hedges: data.confidence.hedges.map(compile),
    corrections: data.confidence.corrections.map(compile),
    volatileMarkers: data.volatility.markers.map((marker) => ({
      pattern: compile(marker.pattern),
      volatility: marker.volatility,
      lifetimeMs: marker.lifetimeDays * DAY,
      future: marker.future === true,
    })),
    pastEvent: compile(data.volatility.pastEvent),
    claims: {
      relations: claims.relations.map((rule) => ({
        attribute: rule.attribute,
        self: compile(rule.self),
        other: rule.other ? compile(rule.other) : null,
      })),
      statesSelf: claims.states.map((s) => ({ attribute: s.attribute, pattern: compile(s.self) })),
      statesOther: claims.states.map((s) => ({
        attribute: s.attribute,
        pattern: compile(s.other),
      })),
      possessiveSelf: compile(claims.possessiveSelf),
      possessiveOther: compile(claims.possessiveOther),
      spelling: claims.spelling.map(({ pattern, replacement }) => [compile(pattern), replacement]),
      leadingArticle: compile(claims.leadingArticle),
      valueNoise: compile(claims.valueNoise),
      skipAttributes: new Set(claims.skipAttributes),
      multiValued: claims.multiValued ? compile(claims.multiValued) : null,
      reportedSpeech: compile(claims.reportedSpeech),
    },
    grammar: data.extraction ?? null,
    compile,
  };
}

/** What the server reads when it knows no rules for a text's language: words, nothing more. */
export const NEUTRAL: TextLanguage = {
  code: 'neutral',
  stopwords: new Set(),
  filler: new Set(),
  stem: unchanged,
  contentStems: words,
  timeQuestion: null,
  hedges: [],
  corrections: [],
  volatileMarkers: [],
  pastEvent: null,
  claims: null,
  grammar: null,
  compile: (pattern) => new RegExp(pattern.source, pattern.flags ?? ''),
};

/** The default language: texts without clear signs of another are read as English. */
export const ENGLISH = compileLanguage(LanguageDataSchema.parse(english));
/** Languages with rules besides English. */
const OTHER_DATA = [LanguageDataSchema.parse(german)];
const LANGUAGES = new Map(OTHER_DATA.map((data) => [data.code, compileLanguage(data)]));
export const GERMAN = LANGUAGES.get('de')!;

const EVIDENCE: Evidence[] = [
  ...OTHER_DATA.map((data) => ({
    code: data.code,
    words: [...data.stopwords, ...(data.detection?.words ?? [])],
    letters: data.detection?.letters ?? '',
  })),
  ...Object.entries(DetectionSchema.parse(detection).stopwords).map(([code, list]) => ({
    code,
    words: list,
    letters: '',
  })),
];

/** Per word, the languages it speaks for (English aside). */
const OTHER_WORDS = new Map<string, string[]>();
for (const { code, words: list } of EVIDENCE) {
  for (const word of list) {
    const codes = OTHER_WORDS.get(word) ?? [];
    if (!codes.includes(code)) codes.push(code);
    OTHER_WORDS.set(word, codes);
  }
}
/** Per language with letters of its own, a search for any of them. */
const OTHER_LETTERS = EVIDENCE.filter((evidence) => evidence.letters !== '').map(
  ({ code, letters }) => ({ code, pattern: new RegExp(`[${letters}]`, 'iu') }),
);

const LATIN = /\p{Script=Latin}/u;
const LETTER = /\p{L}/u;
/** Less evidence than this never outvotes the English default. */
const MIN_EVIDENCE = 2;

/**
 * The language a text is written in, cheaply: words mostly in a script other than Latin mean a
 * language we have no rules for (neutral); Latin words are English unless another language's
 * evidence (its stop words, its detection words, a word with one of its letters) clearly
 * outweighs the English stop words (at least two, and more than the English ones), so short
 * notes, names and codes keep the English default.
 */
export function detectLanguage(text: string): TextLanguage {
  // A write reads its text twice (assessment, extraction): the second time is free.
  if (text === lastText) return lastLanguage;
  const language = detect(text);
  lastText = text;
  lastLanguage = language;
  return language;
}

let lastText: string | undefined;
let lastLanguage: TextLanguage = ENGLISH;

function detect(text: string): TextLanguage {
  const all = words(text);
  let latin = 0;
  let otherScript = 0;
  let english = 0;
  const others = new Map<string, number>();
  for (const word of all) {
    const first = word.charCodeAt(0);
    // Words are lower case: an ASCII letter first needs no regular expression.
    if ((first >= 0x61 && first <= 0x7a) || LATIN.test(word)) latin += 1;
    else if (LETTER.test(word)) otherScript += 1;
    if (ENGLISH.stopwords.has(word)) english += 1;
    for (const code of OTHER_WORDS.get(word) ?? []) others.set(code, (others.get(code) ?? 0) + 1);
  }
  if (otherScript > latin) return NEUTRAL;
  // A language's letters count once per text: names carry them too ("Müller", "Köln").
  for (const { code, pattern } of OTHER_LETTERS) {
    if (pattern.test(text)) others.set(code, (others.get(code) ?? 0) + 1);
  }
  let best: string | null = null;
  let bestCount = 0;
  for (const [code, count] of others) {
    if (count > bestCount) [best, bestCount] = [code, count];
  }
  if (best === null || bestCount < MIN_EVIDENCE || bestCount <= english) return ENGLISH;
  return LANGUAGES.get(best) ?? NEUTRAL;
}
