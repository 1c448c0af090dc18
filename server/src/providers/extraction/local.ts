/**
 * Rule-based extraction: sentences, then the clauses of a compound sentence where a split is
 * safe, each typed by keyword rules. Deterministic, no network, microseconds per memory: the
 * default, so a write never waits on a model.
 *
 * The splitter is conservative on purpose: a wrong split invents a statement the user never
 * made, a missed one only leaves a longer child. It splits at "and" / "but" (and ";") only when
 * the right side starts a clause of its own ("... and my favourite food is ramen") or starts
 * with a verb that agrees with the left side's verb, whose subject (and modal chain) it then
 * borrows ("I love hiking and hate running" → "I hate running").
 */
import { STOPWORDS, words } from '../../text/tokens.js';
import { splitSentences } from '../../text/sentences.js';
import type { ExtractedMemory, Extractor } from './types.js';

type MemoryType = ExtractedMemory['memoryType'];

// ---------------------------------------------------------------------------------------------
// Lexicon
// ---------------------------------------------------------------------------------------------

type Form = 'base' | 's' | 'past' | 'pp' | 'ing';
type Tense = 'base' | 's' | 'past' | 'modal';
type Kind = 'modal' | 'do' | 'have' | 'be' | 'verb';

// Common regular verbs; their forms are generated. Nouns among them ("work", "book", "call")
// are why a borrowed-subject split also wants a plausible word after the verb.
// prettier-ignore
const REGULAR_VERBS = (
  'accept add admire admit adopt adore agree allow answer appear apply arrange arrive ask attend ' +
  'avoid bake believe belong bike book borrow call camp cancel care carry change charge chat ' +
  'check clean climb close collect commute complain complete confirm consider contact continue ' +
  'cook copy count cover crash create cry dance date decide delete deliver depend deploy describe ' +
  'design die dislike divorce download downgrade drop earn email end enjoy enroll enter escalate ' +
  'expect experience explain expire export fail fill finish fix follow graduate hate help hike ' +
  'hire hope host ignore import improve include install intend invest invite join jog jump kiss ' +
  'laugh launch learn like list listen live load lock log look love manage marry mention migrate ' +
  'miss move need note notice offer open order own paint pass pause pick plan play prefer ' +
  'prepare print promise provide publish pull push reach receive recommend record refund ' +
  'register relax relocate remember remind renew rent repair replace reply report request ' +
  'require reserve reset resign resolve rest restart retire return review sail save schedule ' +
  'share shop sign ski smoke solve start stay stop stream study submit subscribe suffer suggest ' +
  'support surf switch talk taste test text thank train transfer travel try turn type unlock ' +
  'unsubscribe update upgrade upload use visit volunteer vote wait walk want wash watch wish ' +
  'wonder work worry promote approve reject deny block suspend verify diagnose injure'
).split(' ');

// base past participle; `|` separates variants.
// prettier-ignore
const IRREGULAR_VERBS = [
  'be was|were been', 'have had had', 'do did done', 'become became become', 'begin began begun',
  'bet bet bet', 'bite bit bitten', 'break broke broken', 'bring brought brought',
  'build built built', 'burn burned|burnt burned|burnt', 'buy bought bought',
  'catch caught caught', 'choose chose chosen', 'come came come', 'cost cost cost', 'cut cut cut',
  'deal dealt dealt', 'dig dug dug', 'draw drew drawn', 'dream dreamed|dreamt dreamed|dreamt',
  'drink drank drunk', 'drive drove driven', 'eat ate eaten', 'fall fell fallen', 'feed fed fed',
  'feel felt felt', 'fight fought fought', 'find found found', 'fly flew flown',
  'forget forgot forgotten', 'forgive forgave forgiven', 'freeze froze frozen',
  'get got got|gotten', 'give gave given', 'go went gone', 'grow grew grown', 'hang hung hung',
  'hear heard heard', 'hide hid hidden', 'hit hit hit', 'hold held held', 'hurt hurt hurt',
  'keep kept kept', 'know knew known', 'lay laid laid', 'lead led led', 'leave left left',
  'lend lent lent', 'let let let', 'lose lost lost', 'make made made', 'mean meant meant',
  'meet met met', 'pay paid paid', 'put put put', 'quit quit quit', 'read read read',
  'ride rode ridden', 'ring rang rung', 'rise rose risen', 'run ran run', 'say said said',
  'see saw seen', 'sell sold sold', 'send sent sent', 'set set set', 'shoot shot shot',
  'show showed shown', 'shut shut shut', 'sing sang sung', 'sit sat sat', 'sleep slept slept',
  'speak spoke spoken', 'spend spent spent', 'stand stood stood', 'steal stole stolen',
  'stick stuck stuck', 'swim swam swum', 'take took taken', 'teach taught taught',
  'tell told told', 'think thought thought', 'throw threw thrown', 'understand understood understood',
  'wake woke woken', 'wear wore worn', 'win won won', 'withdraw withdrew withdrawn',
  'write wrote written',
];

/** Stressed last syllable: the consonant doubles although the verb has two syllables. */
// prettier-ignore
const DOUBLING = new Set(['prefer', 'admit', 'submit', 'control', 'commit', 'occur', 'refer', 'begin', 'forget', 'quit']);
/** British and American spellings both occur. */
const BOTH_SPELLINGS = new Set(['cancel', 'travel']);
/** Irregular past forms that are also common nouns or adjectives ("a saw", "a shot"). */
// prettier-ignore
const NOUN_LIKE_PASTS = new Set(['left', 'saw', 'rose', 'bit', 'shot', 'stuck', 'felt', 'fell', 'lay', 'lit', 'led', 'fed']);

const VERB_FORMS = new Map<string, Set<Form>>();
const BASE_OF = new Map<string, string>();
/**
 * Verbs that are never nouns, so "and <verb> <noun>" is a verb phrase: a few attitude verbs
 * plus the irregular past forms (added below).
 */
const STRONG_VERBS = new Set(['enjoy', 'prefer', 'dislike', 'hate', 'adore', 'want', 'need']);

function addForm(word: string, form: Form, base: string): void {
  let forms = VERB_FORMS.get(word);
  if (!forms) VERB_FORMS.set(word, (forms = new Set()));
  forms.add(form);
  if (!BASE_OF.has(word)) BASE_OF.set(word, base);
}

function doublesFinalConsonant(base: string): boolean {
  return DOUBLING.has(base) || /^[^aeiou]*[aeiou][^aeiouwxy]$/.test(base);
}

function thirdPerson(base: string): string {
  if (/(?:s|x|z|ch|sh|o)$/.test(base)) return `${base}es`;
  return /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ies` : `${base}s`;
}

/** The stems "-ed" and "-ing" attach to: "plan" → "plann", both for "travel". */
function suffixStems(base: string): string[] {
  const doubled = base + base.slice(-1);
  if (BOTH_SPELLINGS.has(base)) return [base, doubled];
  return [doublesFinalConsonant(base) ? doubled : base];
}

function ingForm(stem: string): string {
  if (stem.endsWith('ie')) return `${stem.slice(0, -2)}ying`;
  return /[^e]e$/.test(stem) && stem !== 'be' ? `${stem.slice(0, -1)}ing` : `${stem}ing`;
}

for (const base of REGULAR_VERBS) {
  addForm(base, 'base', base);
  addForm(thirdPerson(base), 's', base);
  for (const stem of suffixStems(base)) {
    const past = stem.endsWith('e')
      ? `${stem}d`
      : /[^aeiou]y$/.test(stem)
        ? `${stem.slice(0, -1)}ied`
        : `${stem}ed`;
    addForm(past, 'past', base);
    addForm(past, 'pp', base);
    addForm(ingForm(stem), 'ing', base);
  }
}
for (const line of IRREGULAR_VERBS) {
  const [base = '', past = '', participle = ''] = line.split(' ');
  addForm(base, 'base', base);
  if (base !== 'be') addForm(base === 'have' ? 'has' : thirdPerson(base), 's', base);
  for (const stem of suffixStems(base)) addForm(ingForm(stem), 'ing', base);
  for (const form of past.split('|')) {
    addForm(form, 'past', base);
    if (form !== base && !NOUN_LIKE_PASTS.has(form)) STRONG_VERBS.add(form);
  }
  for (const form of participle.split('|')) addForm(form, 'pp', base);
}
addForm('learnt', 'past', 'learn');
addForm('learnt', 'pp', 'learn');

// prettier-ignore
const MODALS = new Set([
  'will', 'would', 'can', 'could', 'shall', 'should', 'may', 'might', 'must', 'cannot', "won't",
  "wouldn't", "can't", "couldn't", "shouldn't", "mustn't",
]);
const DO_TENSE: Record<string, Tense> = {
  do: 'base',
  "don't": 'base',
  does: 's',
  "doesn't": 's',
  did: 'past',
  "didn't": 'past',
};
const HAVE_TENSE: Record<string, Tense> = {
  have: 'base',
  "haven't": 'base',
  has: 's',
  "hasn't": 's',
  had: 'past',
  "hadn't": 'past',
};
const BE_TENSE: Record<string, Tense> = {
  am: 'base',
  are: 'base',
  "aren't": 'base',
  is: 's',
  "isn't": 's',
  was: 'past',
  "wasn't": 'past',
  were: 'past',
  "weren't": 'past',
};
// prettier-ignore
const SUBJECT_PRONOUNS = new Set([
  'i', 'we', 'you', 'they', 'he', 'she', 'it', 'nobody', 'somebody', 'someone', 'everyone',
  'everybody',
]);
/** A subject and an auxiliary in one word: what the auxiliary is. */
const CONTRACTED_SUBJECTS: Record<string, { kind: Kind; tense: Tense }> = {};
for (const pronoun of ['i', 'we', 'you', 'they', 'he', 'she', 'it']) {
  const third = pronoun === 'he' || pronoun === 'she' || pronoun === 'it';
  if (pronoun === 'i') CONTRACTED_SUBJECTS["i'm"] = { kind: 'be', tense: 'base' };
  else if (third) CONTRACTED_SUBJECTS[`${pronoun}'s`] = { kind: 'be', tense: 's' };
  else CONTRACTED_SUBJECTS[`${pronoun}'re`] = { kind: 'be', tense: 'base' };
  if (!third) CONTRACTED_SUBJECTS[`${pronoun}'ve`] = { kind: 'have', tense: 'base' };
  CONTRACTED_SUBJECTS[`${pronoun}'ll`] = { kind: 'modal', tense: 'modal' };
  CONTRACTED_SUBJECTS[`${pronoun}'d`] = { kind: 'modal', tense: 'modal' };
}
// prettier-ignore
const DETERMINERS = new Set([
  'my', 'our', 'your', 'his', 'her', 'their', 'the', 'this', 'that', 'these', 'those',
]);
/** May stand between a subject and its verb, or open the right side, without changing them. */
// prettier-ignore
const ADVERBS = new Set([
  'also', 'really', 'still', 'just', 'always', 'never', 'often', 'usually', 'sometimes', 'recently',
  'finally', 'actually', 'already', 'definitely', 'absolutely', 'totally', 'truly', 'kinda',
  'only', 'even', 'then', 'now', 'mostly', 'rarely', 'generally', 'currently', 'honestly',
  'probably', 'seriously', 'originally', 'eventually', 'later', 'soon', 'not', 'certainly',
  'genuinely', 'especially', 'particularly', 'immediately', 'quickly', 'regularly',
]);
/** Verbs taking "to + verb" whose whole chain a borrowed subject carries ("I need to"). */
// prettier-ignore
const CATENATIVE = new Set([
  'need', 'want', 'have', 'plan', 'hope', 'try', 'love', 'like', 'hate', 'prefer', 'decide',
  'start', 'begin', 'forget', 'remember', 'intend', 'expect', 'agree', 'promise', 'learn', 'continue',
]);
/** Right-side verbs that start a new attitude rather than continue a "need to ..." chain. */
// prettier-ignore
const NEW_HEAD = new Set(['like', 'love', 'hate', 'enjoy', 'prefer', 'dislike', 'want', 'need', 'adore', 'hope', 'plan']);
/** Left-side words after the verb that open an embedded clause: its verb is not the head's. */
// prettier-ignore
const EMBEDDED = new Set([
  'i', 'we', 'they', 'he', 'she', 'who', 'which', 'that', 'whom', 'whose', 'where', 'when',
  'because', 'if', 'while', 'although', 'though', 'since', 'unless', 'whether', 'until',
]);
// prettier-ignore
const SUBORDINATORS = new Set([
  'if', 'when', 'whenever', 'because', 'although', 'though', 'since', 'unless', 'while', 'after',
  'before', 'once', 'as', 'whether', 'until', 'where', 'wherever',
]);
/** Words that plausibly follow a verb (objects, prepositions, adverbs), unlike a bare noun. */
// prettier-ignore
const FOLLOWERS = new Set([
  'a', 'an', 'the', 'my', 'your', 'his', 'her', 'our', 'their', 'its', 'this', 'that', 'these',
  'those', 'some', 'any', 'every', 'all', 'no', 'each', 'both', 'another', 'more', 'most', 'it',
  'them', 'him', 'me', 'us', 'you', 'myself', 'yourself', 'himself', 'herself', 'ourselves',
  'themselves', 'everything', 'something', 'anything', 'nothing', 'everyone', 'someone', 'to',
  'at', 'in', 'on', 'for', 'with', 'from', 'about', 'into', 'onto', 'up', 'out', 'down', 'off',
  'over', 'back', 'away', 'around', 'by', 'after', 'before', 'through', 'across', 'along', 'under',
  'there', 'here', 'home', 'again', 'now', 'later', 'soon', 'today', 'tonight', 'tomorrow',
  'yesterday', 'early', 'late', 'hard', 'well', 'really', 'very', 'too', 'always', 'never',
  'often', 'not', 'so', 'lots', 'plenty', 'what', 'how', 'why', 'where', 'when', 'whether',
]);
/** Words that carry no information on their own, beyond the shared stopwords. */
// prettier-ignore
const FILLER = new Set([
  'thanks', 'thank', 'thx', 'ty', 'please', 'pls', 'hi', 'hello', 'hey', 'ok', 'okay', 'yes',
  'yeah', 'yep', 'sure', 'nope', 'cool', 'great', 'nice', 'good', 'fine', 'perfect', 'awesome',
  'bye', 'goodbye', 'cheers', 'lol', 'haha', 'hmm', 'um', 'uh', 'oh', 'well', 'anyway', 'sounds',
  'got', 'noted', 'welcome', 'hope', 'doing', "you're", "we're", "they're", 'morning',
  'afternoon', 'evening', 'night', 'day', 'weekend', 'much', 'lot', 'again', 'really', 'one',
  'also', 'still', 'let', 'know', 'see', 'soon', 'talk', 'later', 'regards', 'best', 'kind',
  'appreciate', 'appreciated', 'help', 'done', 'alright', 'right', 'problem', 'worries', 'wow', 'sorry',
]);

const WORD_START = /[\p{L}\p{N}]/u;
const UPPER_START = /^\p{Lu}/u;
const TOKEN = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*|\S/gu;

interface Token {
  text: string;
  /** Lower case, typographic apostrophes straightened. */
  lower: string;
  start: number;
  end: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const raw = match[0];
    tokens.push({
      text: raw,
      lower: raw.toLowerCase().replace(/’/g, "'"),
      start: match.index,
      end: match.index + raw.length,
    });
  }
  return tokens;
}

function isWord(token: Token | undefined): token is Token {
  return token !== undefined && WORD_START.test(token.text);
}

function kindOf(token: Token | undefined): Kind | null {
  if (!token) return null;
  const word = token.lower;
  if (MODALS.has(word)) return 'modal';
  if (word in DO_TENSE) return 'do';
  if (word in HAVE_TENSE) return 'have';
  if (word in BE_TENSE) return 'be';
  return VERB_FORMS.has(word) ? 'verb' : null;
}

function hasForm(token: Token | undefined, form: Form): boolean {
  return token !== undefined && (VERB_FORMS.get(token.lower)?.has(form) ?? false);
}

function baseOf(token: Token | undefined): string {
  return token ? (BASE_OF.get(token.lower) ?? token.lower) : '';
}

/** Tenses a finite verb or auxiliary may carry ("read" is both present and past). */
function tensesOf(token: Token, kind: Kind): Set<Tense> {
  const word = token.lower;
  if (kind === 'modal') return new Set(['modal']);
  const fixed = DO_TENSE[word] ?? HAVE_TENSE[word] ?? BE_TENSE[word];
  if (fixed) return new Set([fixed]);
  const tenses = new Set<Tense>();
  const forms = VERB_FORMS.get(word);
  if (forms?.has('base')) tenses.add('base');
  if (forms?.has('s')) tenses.add('s');
  if (forms?.has('past')) tenses.add('past');
  return tenses;
}

// prettier-ignore
const INTRO_WORDS = new Set([
  'yesterday', 'today', 'tomorrow', 'tonight', 'recently', 'lately', 'now', 'then', 'later',
  'eventually', 'finally', 'also', 'so', 'and', 'but', 'last', 'next', 'this', 'on', 'in', 'at',
  'week', 'weekend', 'month', 'year', 'morning', 'afternoon', 'evening', 'night', 'ago',
]);
const DATE_WORD =
  /^(?:\d+|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)$/;

function isIntroWord(word: string): boolean {
  return INTRO_WORDS.has(word) || SUBORDINATORS.has(word) || DATE_WORD.test(word);
}

function skipAdverbs(tokens: Token[], from: number): number {
  let i = from;
  while (i < tokens.length && ADVERBS.has(tokens[i]!.lower)) i += 1;
  return i;
}

// ---------------------------------------------------------------------------------------------
// Clause heads
// ---------------------------------------------------------------------------------------------

/** The subject and verb chain that open a clause. */
interface Head {
  subjectStart: number;
  /** Exclusive; a contraction ("I'm") is both subject and finite verb. */
  subjectEnd: number;
  contracted: boolean;
  tenses: Set<Tense>;
  /** The last verb of the chain ("renew" in "I need to renew"). */
  lexical: number;
  /** Set when a modal or "to" chain precedes the lexical verb: a base verb may borrow it. */
  modalEnd: number;
  /** Set after "have + participle": a participle may borrow "I have". */
  perfectEnd: number;
}

/** End (exclusive) of a noun-phrase or pronoun subject at `i`, or -1. */
function subjectEnd(tokens: Token[], i: number): number {
  const first = tokens[i];
  if (!isWord(first)) return -1;
  if (SUBJECT_PRONOUNS.has(first.lower) || first.lower in CONTRACTED_SUBJECTS) return i + 1;
  const determiner = DETERMINERS.has(first.lower);
  // A name, unless it is a word we know (a capital at the start of a sentence means nothing);
  // a name runs on with capitalised words only ("Anna Smith works", not "Paris and Rome last").
  const proper =
    !determiner &&
    UPPER_START.test(first.text) &&
    kindOf(first) === null &&
    !STOPWORDS.has(first.lower) &&
    !ADVERBS.has(first.lower) &&
    !SUBORDINATORS.has(first.lower) &&
    !FILLER.has(first.lower);
  if (!determiner && !proper) return -1;
  // The word after a determiner is the noun or its adjective, even when it could be a verb.
  let j = determiner ? i + 2 : i + 1;
  if (determiner && !isWord(tokens[i + 1])) return -1;
  for (; j < tokens.length && j < i + 7; j += 1) {
    const token = tokens[j]!;
    if (!isWord(token)) return -1;
    // "My wife and I": a pronoun joined to the noun phrase is part of it.
    if (SUBJECT_PRONOUNS.has(token.lower) && tokens[j - 1]!.lower === 'and') continue;
    if (SUBJECT_PRONOUNS.has(token.lower) || EMBEDDED.has(token.lower)) return -1;
    if (
      proper &&
      kindOf(token) === null &&
      !UPPER_START.test(token.text) &&
      token.lower !== 'and'
    ) {
      return -1;
    }
    // A capital inside the phrase is a name ("the Lord of the Rings"), not a verb.
    const kind = UPPER_START.test(token.text) ? null : kindOf(token);
    if (kind === 'modal' || kind === 'do' || kind === 'have' || kind === 'be') return j;
    if (kind === 'verb') {
      if (hasForm(token, 's') || hasForm(token, 'past')) return j;
      // "my parents live": a plural-looking noun before a base form.
      const previous = tokens[j - 1]!.lower;
      if (!proper && hasForm(token, 'base') && /[^s]s$/.test(previous)) return j;
    }
  }
  return -1;
}

/**
 * The head of the clause starting at `from`: subject, then finite verb. With `allowIntro`, a
 * short lead-in without verbs ("Last month", "When") may come first.
 */
function parseHead(tokens: Token[], from: number, allowIntro: boolean): Head | null {
  let start = from;
  let end = subjectEnd(tokens, start);
  if (end < 0 && allowIntro) {
    // A lead-in is a few words ending in a comma, or time words and subordinators only.
    for (let i = from + 1; i < tokens.length && i <= from + 5; i += 1) {
      const previous = tokens[i - 1]!;
      if (kindOf(previous) !== null) break;
      const afterComma = previous.text === ',';
      if (!afterComma && !isIntroWord(previous.lower)) break;
      const token = tokens[i]!;
      if (afterComma || SUBJECT_PRONOUNS.has(token.lower) || token.lower in CONTRACTED_SUBJECTS) {
        end = subjectEnd(tokens, i);
        if (end >= 0) {
          start = i;
          break;
        }
      }
    }
  }
  if (end < 0) return null;

  const subjectToken = tokens[start]!;
  const contraction = CONTRACTED_SUBJECTS[subjectToken.lower];
  let cur: number;
  let kind: Kind | null;
  let tenses: Set<Tense>;
  if (contraction && end === start + 1) {
    cur = start;
    kind = contraction.kind;
    tenses = new Set([contraction.tense]);
  } else {
    cur = skipAdverbs(tokens, end);
    kind = kindOf(tokens[cur]);
    if (kind === null) return null;
    tenses = tensesOf(tokens[cur]!, kind);
    if (tenses.size === 0) return null;
  }

  let modalEnd = -1;
  let perfectEnd = -1;
  let negated = false;
  for (let guard = 0; guard < 6; guard += 1) {
    let n = cur + 1;
    while (n < tokens.length && ADVERBS.has(tokens[n]!.lower)) {
      if (tokens[n]!.lower === 'not') negated = true;
      n += 1;
    }
    if (tokens[cur]!.lower.endsWith("n't") || tokens[cur]!.lower === 'cannot') negated = true;
    const next = tokens[n];
    if (
      (kind === 'verb' || kind === 'have') &&
      CATENATIVE.has(baseOf(tokens[cur])) &&
      next?.lower === 'to' &&
      hasForm(tokens[n + 1], 'base')
    ) {
      cur = n + 1;
      modalEnd = cur;
      kind = kindOf(tokens[cur]);
      continue;
    }
    if (
      kind === 'be' &&
      next?.lower === 'going' &&
      tokens[n + 1]?.lower === 'to' &&
      hasForm(tokens[n + 2], 'base')
    ) {
      cur = n + 2;
      modalEnd = cur;
      kind = kindOf(tokens[cur]);
      continue;
    }
    if ((kind === 'modal' || kind === 'do') && hasForm(next, 'base')) {
      if (kind === 'modal') modalEnd = n;
      cur = n;
      kind = kindOf(next);
      continue;
    }
    if (kind === 'have' && hasForm(next, 'pp')) {
      cur = n;
      perfectEnd = n;
      kind = 'verb';
      continue;
    }
    if (kind === 'be' && (hasForm(next, 'pp') || hasForm(next, 'ing'))) {
      cur = n;
      kind = 'verb';
      continue;
    }
    break;
  }
  // "I can't eat gluten and avoid dairy": which half the negation covers is anyone's guess.
  if (negated) modalEnd = -1;
  return {
    subjectStart: start,
    subjectEnd: end,
    contracted: contraction !== undefined && end === start + 1,
    tenses,
    lexical: cur,
    modalEnd,
    perfectEnd,
  };
}

function plausibleAfterVerb(token: Token): boolean {
  if (FOLLOWERS.has(token.lower)) return true;
  if (/^\p{N}/u.test(token.text) || UPPER_START.test(token.text)) return true;
  return token.lower.length >= 5 && token.lower.endsWith('ing');
}

/** Index of the first word after the head verb that opens an embedded clause ("who", "I"). */
function firstEmbedded(tokens: Token[], head: Head): number {
  let i = head.lexical + 1;
  while (i < tokens.length && !EMBEDDED.has(tokens[i]!.lower)) i += 1;
  return i;
}

/**
 * The words the right side of "and"/"but" at `conj` borrows from the left clause ("I",
 * "I need to", "I have"), or null when it should not be split off. The caller has checked
 * that no embedded clause ({@link firstEmbedded}) comes before `conj`.
 */
function borrowedPrefix(clause: string, tokens: Token[], head: Head, conj: number): string | null {
  const r = skipAdverbs(tokens, conj + 1);
  const verb = tokens[r];
  const after = tokens[r + 1];
  const kind = kindOf(verb);
  if (!verb || !kind || !isWord(after)) return null;
  if (after.lower === 'and' || after.lower === 'or') return null;
  if (kind === 'verb' && !STRONG_VERBS.has(verb.lower) && !plausibleAfterVerb(after)) return null;

  const subject = tokens[head.subjectStart]!;
  const slice = (endToken: number) => clause.slice(subject.start, tokens[endToken - 1]!.end);
  if (
    head.modalEnd >= 0 &&
    kind === 'verb' &&
    hasForm(verb, 'base') &&
    !NEW_HEAD.has(baseOf(verb))
  ) {
    return slice(head.modalEnd);
  }
  if (head.perfectEnd >= 0 && kind === 'verb' && hasForm(verb, 'pp')) return slice(head.perfectEnd);
  const subjectOnly = head.contracted
    ? subject.text.slice(0, subject.text.search(/['’]/))
    : slice(head.subjectEnd);
  if (kind === 'modal') return subjectOnly;
  for (const tense of tensesOf(verb, kind)) {
    if (tense !== 'modal' && head.tenses.has(tense)) return subjectOnly;
  }
  return null;
}

/** Tracks, left to right, whether a position sits inside brackets or double quotes. */
class EnclosureScanner {
  private position = 0;
  private depth = 0;
  private quotes = 0;

  constructor(private readonly text: string) {}

  /** Whether `index` (never smaller than the previous call's) is enclosed. */
  enclosed(index: number): boolean {
    for (; this.position < index; this.position += 1) {
      const c = this.text[this.position];
      if (c === '(' || c === '[') this.depth += 1;
      else if ((c === ')' || c === ']') && this.depth > 0) this.depth -= 1;
      else if (c === '"') this.quotes += 1;
    }
    return this.depth > 0 || this.quotes % 2 === 1;
  }
}

const MAX_CLAUSES_PER_SENTENCE = 6;
/**
 * Longer "sentences" (run-on text, pasted logs, missing punctuation) hold no atomic statement
 * we could cut out safely; skipping them keeps the cost linear in the text.
 */
const MAX_SENTENCE_CHARS = 1_000;
/** A child longer than this is not atomic: the parent already holds it. */
const MAX_CHILD_CHARS = 400;

/** Splits one clause at "and"/"but" where both sides are clauses; recursive on the right side. */
function splitCoordination(clause: string, budget: number): string[] {
  const tokens = tokenize(clause);
  if (budget <= 1 || tokens.length < 5) return [clause];
  const head = parseHead(tokens, 0, true);
  if (!head) return [clause];
  for (let i = 0; i < head.subjectStart; i += 1) {
    if (SUBORDINATORS.has(tokens[i]!.lower)) return [clause];
  }
  const scanner = new EnclosureScanner(clause);
  const embedded = firstEmbedded(tokens, head);
  for (let k = head.lexical + 1; k < tokens.length - 2; k += 1) {
    const word = tokens[k]!.lower;
    if (word !== 'and' && word !== 'but') continue;
    const leftEnd = tokens[k - 1]!.text === ',' ? k - 1 : k;
    if (leftEnd <= head.lexical || scanner.enclosed(tokens[k]!.start)) continue;
    const left = clause.slice(0, tokens[leftEnd - 1]!.end);
    const right = clause.slice(tokens[k + 1]!.start);
    const own = parseHead(tokens, k + 1, false);
    if (own) return [left, ...splitCoordination(right, budget - 1)];
    const prefix = embedded < k ? null : borrowedPrefix(clause, tokens, head, k);
    if (prefix !== null) return [left, ...splitCoordination(`${prefix} ${right}`, budget - 1)];
  }
  return [clause];
}

/** Splits at ";" when every piece has a verb, then at safe coordinations. */
function splitSentence(sentence: string): string[] {
  let pieces = [sentence];
  if (sentence.includes(';')) {
    const parts = sentence.split(/\s*;\s*/).filter((part) => part.trim() !== '');
    const hasVerb = (part: string) => tokenize(part).some((token) => kindOf(token) !== null);
    if (parts.length > 1 && parts.every(hasVerb)) {
      pieces = [parts[0]!];
      for (let i = 1; i < parts.length; i += 1) {
        const part = parts[i]!;
        const previous = parts[i - 1]!;
        const joined = `${previous} and ${part}`;
        const tokens = tokenize(joined);
        const head = parseHead(tokens, 0, true);
        const conj = tokenize(previous).length;
        const prefix =
          head &&
          head.lexical < conj &&
          firstEmbedded(tokens, head) > conj &&
          !parseHead(tokens, conj + 1, false)
            ? borrowedPrefix(joined, tokens, head, conj)
            : null;
        pieces.push(prefix === null ? part : `${prefix} ${part}`);
      }
    }
  }
  return pieces.flatMap((piece) => splitCoordination(piece, MAX_CLAUSES_PER_SENTENCE));
}

// ---------------------------------------------------------------------------------------------
// Cleaning and filtering
// ---------------------------------------------------------------------------------------------

const LIST_MARKER = /^(?:[-*•·–]|\d{1,3}[.)]|\p{L}\))\s+/u;
const LEAD_WORDS =
  '(?:hi|hello|hey|dear|greetings|good (?:morning|afternoon|evening)|ok|okay|alright|oh|well|so|anyway|anyways|btw|by the way|ps|p\\.s\\.|plus|also|and|but|yes|yeah|no|sure|thanks|thank you|um|uh|hmm|fyi|note)';
/** "Hi Anna," / "Thanks!" / "Well," / "Note:" before the statement (group 1: a name?). */
const LEAD_IN = new RegExp(`^${LEAD_WORDS}(?:\\s+([\\p{L}'’]+))?\\s*[,!:;.–—]+\\s*`, 'iu');
/** "And my ...", "So I ...": a connective without punctuation. */
const LEAD_CONNECTIVE =
  /^(?:and|but|so|also|plus|oh|ok|okay|well|hi|hello|hey)\s+(?=(?:i|i'm|i've|i'd|i'll|we|we're|my|our|the|he|she|they|it|you)\b)/iu;
/** Words after a greeting that are not a name but still part of it ("Hi there,"). */
const GREETING_TAIL = new Set([
  'there',
  'team',
  'all',
  'everyone',
  'guys',
  'folks',
  'again',
  'you',
]);
/** Thanks and sign-offs: polite, never worth remembering. */
const CLOSING =
  /^(?:thanks|thank you|thx|many thanks|cheers|much appreciated|appreciate it|let me know|looking forward|have a (?:nice|great|good|lovely) (?:day|weekend|evening|one)|hope (?:this|that) helps|feel free|(?:i )?hope (?:you're|you are|all is)|best regards|kind regards|see you)\b/i;
const TRAILING_PUNCTUATION = /[\s,;:\-–—]+$/;
const TERMINAL = /[.!…]["'’”)\]]*$/;

function stripLeadIn(text: string): string {
  let out = text.trim().replace(LIST_MARKER, '');
  for (let i = 0; i < 4; i += 1) {
    const lead = LEAD_IN.exec(out);
    const name = lead?.[1];
    if (
      lead &&
      (name === undefined || UPPER_START.test(name) || GREETING_TAIL.has(name.toLowerCase()))
    ) {
      out = out.slice(lead[0].length);
      continue;
    }
    const connective = LEAD_CONNECTIVE.exec(out);
    if (!connective) break;
    out = out.slice(connective[0].length);
  }
  return out;
}

function isQuestion(sentence: string): boolean {
  return /\?["'’”)\]]*$/.test(sentence.trim());
}

/** Trimmed, capitalised, with terminal punctuation; '' when nothing is left. */
function tidy(clause: string): string {
  let text = stripLeadIn(clause).replace(TRAILING_PUNCTUATION, '').replace(/\s+/g, ' ');
  if (text === '') return '';
  text = text.charAt(0).toLocaleUpperCase() + text.slice(1);
  return TERMINAL.test(text) ? text : `${text}.`;
}

/** Something worth remembering: two words or more, at least one carrying content. */
function informative(text: string): boolean {
  if (CLOSING.test(text.replace(/’/g, "'"))) return false;
  const all = words(text);
  if (all.length < 2) return false;
  return all.some((word) => !STOPWORDS.has(word) && !FILLER.has(word));
}

// ---------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------

const MONTH =
  '(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)';
const WEEKDAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const PERIOD = `(?:week|weekend|month|year|summer|winter|spring|fall|autumn|quarter|${WEEKDAY})`;

const ALLERGY = /\b(?:allerg(?:y|ies|ic)|intoleran(?:t|ce)|anaphyla)/;
const NEGATED_OBLIGATION =
  /\b(?:don't|do not|doesn't|does not|didn't|did not|no|never|not) (?:need|needs|have|has) to\b/g;
// prettier-ignore
const TASK = [
  /\b(?:need|needs|have|has|got) to\b/,
  /\b(?:gotta|remind me|reminder|don't forget|do not forget|remember to|make sure|to-?do|follow[- ]up|deadline|due (?:on|by|date))\b/,
  /\b(?:plan|plans|planning) to\b/,
  /\b(?:would|i'd|we'd|you'd|they'd|he'd|she'd) (?:really )?like to\b/,
  /\b(?:i|we|you|he|she|they) (?:really |also |still |definitely |probably |just |absolutely )?(?:must|should)\b/,
];
const GOING_TO = /\b(?:going to|gonna) (?:really |also |finally )?([a-z']+)/;
const WILL = /\b(?:i|we|you)(?:'ll| will| shall)\b/;
const DEADLINE = new RegExp(
  `\\b(?:tomorrow|tonight|today|by|before|until|till|next|asap|soon|deadline|due|end of|this ${PERIOD}|on ${WEEKDAY}|in \\d+ (?:minutes|hours|days|weeks|months))\\b`,
);
// prettier-ignore
const PREFERENCE = [
  /\b(?:love|loves|loved|loving|adore|adores|adored|enjoy|enjoys|enjoyed|prefer|prefers|preferred|preference|favou?rites?|hate|hates|hated|dislike|dislikes|disliked|can't stand|cannot stand|can not stand|fan of|fond of|(?:would|i'd|we'd|you'd|they'd) rather|rather than)\b/,
  /\b(?:likes|liked)\b/,
  /(?:^|\b(?:i|we|you|they|really|also|still|don't|do|didn't|not|never|always|actually|would|i'd|we'd|you'd|they'd|totally|definitely|kinda|especially|just|genuinely|particularly|both) )like\b/,
];
// prettier-ignore
const EVENT_VERB = /\b(?:moved|relocated|started|began|joined|visited|met|married|got (?:married|engaged|divorced|promoted|hired|fired|back)|(?:was|were) born|born (?:in|on)|graduated|retired|divorced|quit|resigned|arrived|returned|travell?ed|went|flew|bought|sold|signed up|subscribed|unsubscribed|upgraded|downgraded|cancell?ed|ordered|received|booked|enrolled|won|passed away|died|launched|attended|adopted|broke|crashed|charged|billed|refunded|hired|fired|had (?:a|an|my|our) (?:baby|surgery|accident|meeting|call|interview|appointment))\b/;
/** Past-tense verbs that describe a state, not a happening ("I knew", "I used to"). */
// prettier-ignore
const STATIVE = new Set([
  'be', 'have', 'know', 'think', 'feel', 'believe', 'want', 'need', 'like', 'love', 'hate',
  'prefer', 'seem', 'mean', 'own', 'belong', 'understand', 'remember', 'use', 'hope', 'wish',
]);
/** "I started working at Siemens": the start of a state, which is a fact about now. */
const ONGOING_START = /\b(?:started|began) [a-z]+ing\b/;
const TIME_MARKERS = [
  /\b(?:yesterday|tomorrow|tonight|last night|this morning|this afternoon|this evening|ago)\b/,
  new RegExp(`\\b(?:last|next|this|coming|past) ${PERIOD}\\b`),
  new RegExp(`\\bon ${WEEKDAY}\\b`),
  new RegExp(
    `\\b(?:in|on|by|before|after|from|during|until|till|early|mid|late|end of) ${MONTH}\\b`,
  ),
  new RegExp(`\\b${MONTH}\\.? \\d{1,2}(?:st|nd|rd|th)?\\b`),
  new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)? (?:of )?${MONTH}\\b`),
  /\b\d{4}-\d{2}-\d{2}\b/,
  /\b\d{1,2}\/\d{1,2}(?:\/\d{2,4})?\b/,
  /\bin (?:19|20)\d{2}\b/,
];
// prettier-ignore
const IMPERATIVE_VERBS = new Set([
  'call', 'buy', 'email', 'text', 'send', 'book', 'pay', 'renew', 'cancel', 'check', 'ask',
  'remind', 'pick', 'get', 'bring', 'schedule', 'update', 'fix', 'order', 'submit', 'finish',
  'review', 'clean', 'fill', 'contact', 'reply', 'follow', 'confirm', 'escalate', 'refund',
]);
const IMPERATIVE_LEAD = new Set(['please', 'pls', 'kindly', 'just', 'also', 'then']);

function isTask(lower: string): boolean {
  const positive = lower.replace(NEGATED_OBLIGATION, ' ');
  if (TASK.some((pattern) => pattern.test(positive))) return true;
  const going = GOING_TO.exec(lower);
  if (going && VERB_FORMS.get(going[1]!)?.has('base')) return true;
  return WILL.test(lower) && DEADLINE.test(lower);
}

/** "Call the bank", "Please send the receipt": a bare verb first, no subject. */
function isImperative(tokens: Token[]): boolean {
  let i = 0;
  while (i < tokens.length && IMPERATIVE_LEAD.has(tokens[i]!.lower)) i += 1;
  const verb = tokens[i];
  const next = tokens[i + 1];
  if (!verb || !hasForm(verb, 'base') || !isWord(next)) return false;
  const nextKind = kindOf(next);
  if (nextKind === 'be' || nextKind === 'have' || nextKind === 'modal' || next.lower === 'of') {
    return false;
  }
  const third = kindOf(tokens[i + 2]);
  if (third === 'be' || third === 'have' || third === 'modal') return false;
  return plausibleAfterVerb(next) || IMPERATIVE_VERBS.has(verb.lower);
}

/** A clause whose own verb is an unambiguous simple past of an action: "I paid the bill". */
function happenedOnce(tokens: Token[]): boolean {
  const head = parseHead(tokens, 0, true);
  if (!head || head.tenses.size !== 1 || !head.tenses.has('past')) return false;
  const verb = tokens[head.lexical];
  if (kindOf(verb) !== 'verb' || STATIVE.has(baseOf(verb))) return false;
  const forms = VERB_FORMS.get(verb!.lower);
  return forms !== undefined && !forms.has('base') && !hasForm(tokens[head.lexical + 1], 'ing');
}

function classify(text: string): MemoryType {
  const lower = text.toLowerCase().replace(/’/g, "'");
  if (ALLERGY.test(lower)) return 'fact';
  if (isTask(lower)) return 'task';
  if (PREFERENCE.some((pattern) => pattern.test(lower))) return 'preference';
  const tokens = tokenize(text);
  if (isImperative(tokens)) return 'task';
  if (TIME_MARKERS.some((pattern) => pattern.test(lower))) return 'event';
  if (EVENT_VERB.test(lower.replace(ONGOING_START, ' '))) return 'event';
  return happenedOnce(tokens) ? 'event' : 'fact';
}

// ---------------------------------------------------------------------------------------------
// Extractor
// ---------------------------------------------------------------------------------------------

function sameWords(a: string, b: string): boolean {
  return words(a).join(' ') === words(b).join(' ');
}

/**
 * Splits text into sentences and safe clauses, types each with keyword rules, and drops
 * greetings, thanks, questions and filler. Deterministic; needs no network.
 *
 * @example
 * await new LocalExtractor().extract('I love hiking and hate running. I need to renew my passport.', { maxItems: 10 })
 * // [{ text: 'I love hiking.', memoryType: 'preference' }, { text: 'I hate running.', ... },
 * //  { text: 'I need to renew my passport.', memoryType: 'task' }]
 */
export class LocalExtractor implements Extractor {
  readonly name = 'local';

  extract(text: string, options: { maxItems: number }): Promise<ExtractedMemory[]> {
    return Promise.resolve(this.extractSync(text, options.maxItems));
  }

  /** The same, synchronously (the interface is async for the HTTP extractors). */
  extractSync(text: string, maxItems: number): ExtractedMemory[] {
    if (!(maxItems >= 1)) return [];
    // At least two, so a lone child can still be told from "nothing to split".
    const wanted = Math.max(maxItems, 2);
    const found: ExtractedMemory[] = [];
    const seen = new Set<string>();
    outer: for (const sentence of splitSentences(text)) {
      if (sentence.length > MAX_SENTENCE_CHARS || isQuestion(sentence)) continue;
      const statement = stripLeadIn(sentence);
      if (statement === '') continue;
      for (const clause of splitSentence(statement)) {
        const child = tidy(clause);
        if (child === '' || child.length > MAX_CHILD_CHARS || !informative(child)) continue;
        const key = words(child).join(' ');
        if (seen.has(key)) continue;
        seen.add(key);
        found.push({ text: child, memoryType: classify(child) });
        if (found.length >= wanted) break outer;
      }
    }
    if (found.length === 1 && sameWords(found[0]!.text, text)) return [];
    return found.slice(0, Math.floor(maxItems));
  }
}
