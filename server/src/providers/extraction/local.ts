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
 *
 * The clause grammar is English; its words and patterns come from the language data
 * (text/lang). A text in a language without a grammar keeps its sentences whole, typed as facts.
 */
import { words } from '../../text/tokens.js';
import { splitSentences } from '../../text/sentences.js';
import {
  detectLanguage,
  ENGLISH,
  type EnglishGrammarData,
  type TextLanguage,
} from '../../text/language.js';
import type { ExtractedMemory, Extractor } from './types.js';

type MemoryType = ExtractedMemory['memoryType'];

// ---------------------------------------------------------------------------------------------
// Tokens and limits (any language)
// ---------------------------------------------------------------------------------------------

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

const LIST_MARKER = /^(?:[-*•·–]|\d{1,3}[.)]|\p{L}\))\s+/u;
const TRAILING_PUNCTUATION = /[\s,;:\-–—]+$/;
const TERMINAL = /[.!…]["'’”)\]]*$/;

function isQuestion(sentence: string): boolean {
  return /\?["'’”)\]]*$/.test(sentence.trim());
}

/** How one language's text becomes typed statements. */
interface Grammar {
  /** The sentence without greetings, connectives and list markers before it. */
  statement(sentence: string): string;
  /** The statement's atomic clauses, each standing on its own. */
  clauses(statement: string): string[];
  /** A clause as stored: trimmed and tidied; '' when nothing is left. */
  tidy(clause: string): string;
  /** Something worth remembering. */
  informative(text: string): boolean;
  classify(text: string): MemoryType;
}

/**
 * The English clause grammar, built once from a language's lexicon (its `extraction` data):
 * verb forms generated from the verb lists, clause heads, safe splits, lead-ins and types.
 */
function englishGrammar(language: TextLanguage, lexicon: EnglishGrammarData): Grammar {
  const compile = language.compile;
  // ---------------------------------------------------------------------------------------------
  // Lexicon
  // ---------------------------------------------------------------------------------------------

  type Form = 'base' | 's' | 'past' | 'pp' | 'ing';
  type Tense = 'base' | 's' | 'past' | 'modal';
  type Kind = 'modal' | 'do' | 'have' | 'be' | 'verb';

  // Common regular verbs; their forms are generated. Nouns among them ("work", "book", "call")
  // are why a borrowed-subject split also wants a plausible word after the verb.
  const REGULAR_VERBS = lexicon.regularVerbs;
  // base past participle; `|` separates variants.
  const IRREGULAR_VERBS = lexicon.irregularVerbs;
  /** Stressed last syllable: the consonant doubles although the verb has two syllables. */
  const DOUBLING = new Set(lexicon.doubling);
  /** British and American spellings both occur. */
  const BOTH_SPELLINGS = new Set(lexicon.bothSpellings);
  /** Irregular past forms that are also common nouns or adjectives ("a saw", "a shot"). */
  const NOUN_LIKE_PASTS = new Set(lexicon.nounLikePasts);

  const VERB_FORMS = new Map<string, Set<Form>>();
  const BASE_OF = new Map<string, string>();
  /**
   * Verbs that are never nouns, so "and <verb> <noun>" is a verb phrase: a few attitude verbs
   * plus the irregular past forms (added below).
   */
  const STRONG_VERBS = new Set(lexicon.strongVerbs);

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
  for (const [word, form, base] of lexicon.extraForms) addForm(word, form, base);

  const MODALS = new Set(lexicon.modals);
  const DO_TENSE: Record<string, Tense> = lexicon.doTense;
  const HAVE_TENSE: Record<string, Tense> = lexicon.haveTense;
  const BE_TENSE: Record<string, Tense> = lexicon.beTense;
  const SUBJECT_PRONOUNS = new Set(lexicon.subjectPronouns);
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
  const DETERMINERS = new Set(lexicon.determiners);
  /** May stand between a subject and its verb, or open the right side, without changing them. */
  const ADVERBS = new Set(lexicon.adverbs);
  /** Verbs taking "to + verb" whose whole chain a borrowed subject carries ("I need to"). */
  const CATENATIVE = new Set(lexicon.catenative);
  /** Right-side verbs that start a new attitude rather than continue a "need to ..." chain. */
  const NEW_HEAD = new Set(lexicon.newHead);
  /** Left-side words after the verb that open an embedded clause: its verb is not the head's. */
  const EMBEDDED = new Set(lexicon.embedded);
  const SUBORDINATORS = new Set(lexicon.subordinators);
  /** Words that plausibly follow a verb (objects, prepositions, adverbs), unlike a bare noun. */
  const FOLLOWERS = new Set(lexicon.followers);
  /** Words that carry no information on their own, beyond the stop words. */
  const FILLER = language.filler;
  const STOPWORDS = language.stopwords;

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

  const INTRO_WORDS = new Set(lexicon.introWords);
  const DATE_WORD = compile(lexicon.dateWord);

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
  function borrowedPrefix(
    clause: string,
    tokens: Token[],
    head: Head,
    conj: number,
  ): string | null {
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
    if (head.perfectEnd >= 0 && kind === 'verb' && hasForm(verb, 'pp'))
      return slice(head.perfectEnd);
    const subjectOnly = head.contracted
      ? subject.text.slice(0, subject.text.search(/['’]/))
      : slice(head.subjectEnd);
    if (kind === 'modal') return subjectOnly;
    for (const tense of tensesOf(verb, kind)) {
      if (tense !== 'modal' && head.tenses.has(tense)) return subjectOnly;
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------
  // Clauses
  // ---------------------------------------------------------------------------------------------

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

  const LEAD_IN = compile(lexicon.leadIn);
  /** "And my ...", "So I ...": a connective without punctuation. */
  const LEAD_CONNECTIVE = compile(lexicon.leadConnective);
  /** Words after a greeting that are not a name but still part of it ("Hi there,"). */
  const GREETING_TAIL = new Set(lexicon.greetingTail);
  /** Thanks and sign-offs: polite, never worth remembering. */
  const CLOSING = compile(lexicon.closing);

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

  const rules = lexicon.classify;
  const ALLERGY = compile(rules.allergy);
  const NEGATED_OBLIGATION = compile(rules.negatedObligation);
  const TASK = rules.task.map(compile);
  const GOING_TO = compile(rules.goingTo);
  const WILL = compile(rules.will);
  const DEADLINE = compile(rules.deadline);
  const PREFERENCE = rules.preference.map(compile);
  const EVENT_VERB = compile(rules.eventVerb);
  /** Past-tense verbs that describe a state, not a happening ("I knew", "I used to"). */
  const STATIVE = new Set(rules.stative);
  /** "I started working at Siemens": the start of a state, which is a fact about now. */
  const ONGOING_START = compile(rules.ongoingStart);
  const TIME_MARKERS = rules.timeMarkers.map(compile);
  const IMPERATIVE_VERBS = new Set(rules.imperativeVerbs);
  const IMPERATIVE_LEAD = new Set(rules.imperativeLead);

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

  return { statement: stripLeadIn, clauses: splitSentence, tidy, informative, classify };
}

/**
 * For a language without a grammar: each sentence is one statement, kept as written (no lead-in
 * or clause rules, no capitalising), typed as a fact; informative when it has two words and one
 * that is not a stop word or filler of its language.
 */
function sentenceGrammar(language: TextLanguage): Grammar {
  return {
    statement: (sentence) => sentence.trim().replace(LIST_MARKER, ''),
    clauses: (statement) => [statement],
    tidy: (clause) =>
      clause.trim().replace(LIST_MARKER, '').replace(TRAILING_PUNCTUATION, '').replace(/\s+/g, ' '),
    informative: (text) => {
      const all = words(text);
      return (
        all.length >= 2 &&
        all.some((word) => !language.stopwords.has(word) && !language.filler.has(word))
      );
    },
    classify: () => 'fact',
  };
}

const grammars = new Map<TextLanguage, Grammar>();

/** The language's grammar, built on first use (English at start-up). */
function grammarFor(language: TextLanguage): Grammar {
  let grammar = grammars.get(language);
  if (!grammar) {
    grammar = language.grammar
      ? englishGrammar(language, language.grammar)
      : sentenceGrammar(language);
    grammars.set(language, grammar);
  }
  return grammar;
}
grammarFor(ENGLISH);

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
    const grammar = grammarFor(detectLanguage(text));
    const found: ExtractedMemory[] = [];
    const seen = new Set<string>();
    outer: for (const sentence of splitSentences(text)) {
      if (sentence.length > MAX_SENTENCE_CHARS || isQuestion(sentence)) continue;
      const statement = grammar.statement(sentence);
      if (statement === '') continue;
      for (const clause of grammar.clauses(statement)) {
        const child = grammar.tidy(clause);
        if (child === '' || child.length > MAX_CHILD_CHARS || !grammar.informative(child)) continue;
        const key = words(child).join(' ');
        if (seen.has(key)) continue;
        seen.add(key);
        found.push({ text: child, memoryType: grammar.classify(child) });
        if (found.length >= wanted) break outer;
      }
    }
    if (found.length === 1 && sameWords(found[0]!.text, text)) return [];
    return found.slice(0, Math.floor(maxItems));
  }
}
