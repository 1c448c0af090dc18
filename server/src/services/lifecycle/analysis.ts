/**
 * What a memory's wording says about it, by rules a reader can check: how sure the speaker is
 * (confidence), how long it will stay true (volatility, expiry), and which facts it states
 * (claims: subject + attribute = value) so that a later contradicting fact can supersede it.
 */

const HEDGES = [
  /\bmaybe\b/i,
  /\bperhaps\b/i,
  /\bprobably\b/i,
  /\bpossibly\b/i,
  /\bmight\b/i,
  /\bcould be\b/i,
  /\bi think\b/i,
  /\bi guess\b/i,
  /\bi believe\b/i,
  /\bi suppose\b/i,
  /\bnot (?:sure|certain)\b/i,
  /\bseems?\b/i,
  /\bsort of\b|\bkind of\b/i,
  /\bif i remember\b/i,
  /\bi'?m considering\b|\bthinking (?:about|of)\b/i,
];

const CORRECTIONS = [
  /^\s*(?:actually|correction|to clarify|to be clear|update)\b[:,]?/i,
  /\bi meant\b/i,
  /\bnot .{1,40}\bbut\b/i,
  /\bno longer\b/i,
  /\bnot anymore\b|\banymore\b/i,
  /\bi (?:now|recently)\b/i,
];

export interface ConfidenceAssessment {
  confidence: number;
  hedges: number;
  correction: boolean;
}

/**
 * 0.8 for a plain statement; each hedge ("maybe", "I think", "probably", a question...) takes
 * 0.15 off (floor 0.3); a correction ("actually", "I meant", "no longer", memory_type
 * `correction`) adds 0.1; a `pin` is 0.95. Capped at 1.
 */
export function assessConfidence(text: string, memoryType: string): ConfidenceAssessment {
  const hedges =
    HEDGES.filter((pattern) => pattern.test(text)).length + (/\?\s*$/.test(text) ? 1 : 0);
  const correction =
    memoryType === 'correction' || CORRECTIONS.some((pattern) => pattern.test(text));
  if (memoryType === 'pin') return { confidence: 0.95, hedges, correction };
  let confidence = 0.8 - 0.15 * hedges;
  if (correction) confidence += 0.1;
  return { confidence: round(Math.min(1, Math.max(0.3, confidence))), hedges, correction };
}

const DAY = 86_400_000;

/**
 * Time-bound wording and how long such a statement stays true. `future` markers speak of what is
 * to come; the others may also date a past event, which stays true (see PAST_EVENT).
 */
const VOLATILE: Array<{ pattern: RegExp; volatility: number; lifetimeMs: number; future?: true }> =
  [
    {
      pattern: /\b(?:today|tonight|this (?:morning|afternoon|evening))\b/i,
      volatility: 0.95,
      lifetimeMs: 1 * DAY,
    },
    { pattern: /\btomorrow\b/i, volatility: 0.9, lifetimeMs: 2 * DAY, future: true },
    { pattern: /\bthis weekend\b/i, volatility: 0.9, lifetimeMs: 4 * DAY },
    { pattern: /\bthis week\b/i, volatility: 0.85, lifetimeMs: 14 * DAY },
    { pattern: /\bnext week\b/i, volatility: 0.85, lifetimeMs: 14 * DAY, future: true },
    {
      pattern:
        /\b(?:right now|at the moment|currently|for now|these days|temporarily|for the time being)\b/i,
      volatility: 0.8,
      lifetimeMs: 30 * DAY,
    },
    { pattern: /\bthis month\b/i, volatility: 0.75, lifetimeMs: 45 * DAY },
    { pattern: /\bnext month\b/i, volatility: 0.75, lifetimeMs: 45 * DAY, future: true },
  ];

/**
 * A report of something that happened ("I went to a support group today", "we finally painted
 * the fence this weekend"): past-tense wording after a subject ("-eed" words such as "need" are
 * present tense). What happened today is still what happened tomorrow; only states ("I'm in
 * Paris this week") and plans go stale.
 */
const PAST_EVENT =
  /\b(?:i|we|he|she|they|you|it)\s+(?:just\s+|finally\s+|already\s+|also\s+|actually\s+)?(?:went|had|did|made|got|took|saw|met|bought|found|gave|ran|won|lost|left|came|began|wrote|read|ate|drove|flew|sang|told|heard|felt|spent|tried|\w{2,}(?<!e)ed)\b/i;

/** At or above this, a memory gets an `expires_at`. */
export const VOLATILE_THRESHOLD = 0.7;

export interface VolatilityAssessment {
  volatility: number;
  /** When the statement stops being true, for volatile text. */
  expiresAt: Date | null;
}

/**
 * 0.1 for ordinary facts (0.3 for events); time-bound wording raises it to the level of its most
 * short-lived marker (a past event's "today" does not: PAST_EVENT), and text at or above
 * VOLATILE_THRESHOLD expires after that marker's lifetime, counted from `effective_at` when
 * given, else from now.
 */
export function assessVolatility(
  text: string,
  memoryType: string,
  from: Date,
): VolatilityAssessment {
  let volatility = memoryType === 'event' ? 0.3 : 0.1;
  let lifetimeMs: number | undefined;
  const pastEvent = PAST_EVENT.test(text);
  for (const marker of VOLATILE) {
    if (!marker.pattern.test(text) || (pastEvent && !marker.future)) continue;
    if (marker.volatility > volatility) volatility = marker.volatility;
    lifetimeMs = Math.min(lifetimeMs ?? Infinity, marker.lifetimeMs);
  }
  if (memoryType === 'pin') return { volatility: 0, expiresAt: null };
  const expiresAt =
    volatility >= VOLATILE_THRESHOLD && lifetimeMs !== undefined
      ? new Date(from.getTime() + lifetimeMs)
      : null;
  return { volatility, expiresAt };
}

const round = (value: number) => Math.round(value * 1000) / 1000;

export interface Claim {
  /** `self` for the owner speaking ("I", "my"), else the lower-cased name. */
  subject: string;
  attribute: string;
  value: string;
}

const SELF = "(?<self>i|i'm|i am|my|we|we're|our)";
// A capitalised name that is not a pronoun or sentence opener.
const NAME =
  '(?<name>(?!(?:I|We|My|Our|He|She|They|It|The|This|That|There|Then|Now|Also|And|But|So)\\b)[A-Z][a-z]+(?: [A-Z][a-z]+)?)';
const VALUE = '(?<value>[^.,;!?]+?)';
const MONTHS =
  'january|february|march|april|may|june|july|august|september|october|november|december';
const END = `(?=\\s*(?:[.,;!?]|\\b(?:and|but|since|because|now|with|as|from|last|next|until|anymore)\\b|\\bin (?:${MONTHS}|\\d)|$))`;

/** Attribute rules: a first-person and a third-person form each. */
const CLAIM_RULES: Array<{ attribute: string; self: RegExp; other?: RegExp }> = [];

function rule(attribute: string, selfVerb: string, otherVerb?: string): void {
  CLAIM_RULES.push({
    attribute,
    self: new RegExp(
      `\\b${SELF}\\s+(?:now\\s+|just\\s+|recently\\s+|have\\s+|'ve\\s+)?${selfVerb}\\s*${VALUE}${END}`,
      'i',
    ),
    ...(otherVerb
      ? {
          other: new RegExp(
            `\\b${NAME}\\s+(?:now\\s+|just\\s+|recently\\s+|has\\s+)?${otherVerb}\\s*${VALUE}${END}`,
          ),
        }
      : {}),
  });
}

rule(
  'residence',
  "(?:live|lives|living|moved|relocated|am based|'m based|am living|'m living) (?:in|to)",
  '(?:lives|moved|relocated|is based|is living) (?:in|to)',
);
rule(
  'employer',
  "(?:work|works|working|am working|'m working|started working|joined|started|work now) (?:at|for)",
  '(?:works|is working|started working|joined) (?:at|for)',
);
rule('employer', '(?:joined)', '(?:joined)');
rule(
  'occupation',
  "(?:work|works|am working|'m working|started working) as (?:an? )?",
  '(?:works|is working) as (?:an? )?',
);
rule('car', "(?:drive|drives|am driving|'m driving)", 'drives');

/** States with a closed set of values: "I'm 34", "I got married", "Jane is vegan". */
const STATE_RULES: Array<{ attribute: string; value: string }> = [
  { attribute: 'age', value: '(?<value>\\d{1,3})(?=\\s*(?:years?(?: old)?|yo)\\b)' },
  {
    attribute: 'relationship_status',
    value: '(?<value>single|married|engaged|divorced|widowed)\\b',
  },
  { attribute: 'diet', value: '(?:an? )?(?<value>vegetarian|vegan|pescatarian|omnivore)\\b' },
];
const STATE_SELF = STATE_RULES.map(({ attribute, value }) => ({
  attribute,
  pattern: new RegExp(
    `\\b(?:i am|i'm|i got|i've been|we are|we're|we got)\\s+(?:now\\s+|just\\s+)?${value}`,
    'i',
  ),
}));
const STATE_OTHER = STATE_RULES.map(({ attribute, value }) => ({
  attribute,
  pattern: new RegExp(`\\b${NAME}\\s+(?:is|got|has been)\\s+(?:now\\s+|just\\s+)?${value}`),
}));

/** "my favourite colour is blue", "Jane's phone number is ...", "my name is ..." */
const POSSESSIVE_SELF = new RegExp(
  `\\b(?:my|our)\\s+(?<attr>(?:[a-z]+\\s){0,3}?[a-z]+)\\s+(?:is|are|has become|became|changed to|is now|are now)\\s+(?:now\\s+)?${VALUE}${END}`,
  'i',
);
const POSSESSIVE_OTHER = new RegExp(
  `\\b${NAME}'s\\s+(?<attr>(?:[a-z]+\\s){0,3}?[a-z]+)\\s+(?:is|are|has become|became|is now)\\s+(?:now\\s+)?${VALUE}${END}`,
);

const SPELLING: Array<[RegExp, string]> = [
  [/\bfavourite\b/g, 'favorite'],
  [/\bcolour\b/g, 'color'],
  [/\bneighbour\b/g, 'neighbor'],
  [/\btelephone\b|\bmobile\b|\bcell\b/g, 'phone'],
  [/\be-mail\b/g, 'email'],
];

function normalise(text: string): string {
  let value = text.toLowerCase().replace(/\s+/g, ' ').trim();
  for (const [pattern, replacement] of SPELLING) value = value.replace(pattern, replacement);
  return value.replace(/^(?:the|a|an)\s+/, '');
}

/** Possessive attributes that name a list rather than one value ("my hobbies are ..."). */
const MULTI_VALUED = /(?:s|ies)$/;
const SKIP_ATTRIBUTES = new Set([
  'plan',
  'plans',
  'question',
  'problem',
  'issue',
  'point',
  'guess',
  'concern',
]);

/**
 * Reported speech, as transcripts and conversation imports write it: `Jane said, "I live in
 * Paris."`. The quote's "I" is the speaker, not the owner.
 */
const REPORTED_SPEECH =
  /^\s*(?<speaker>[A-Z][\p{L}'-]+(?: [A-Z][\p{L}'-]+)?)\s+(?:said|says|asked|asks|replied|replies|wrote|writes)\s*[,:]?\s*["“](?<quote>[^"”]*)["”]/u;

/** Whether `text` reports what someone said (`Jane said, "…"`): a record of an utterance. */
export function isReportedSpeech(text: string): boolean {
  return REPORTED_SPEECH.test(text);
}

/**
 * The single-valued facts a text states. Only wording that names one value for one attribute
 * counts ("I live in Paris", "my favourite colour is blue", "Jane works at Acme"); likes,
 * lists and plans are not claims, so they never supersede each other.
 */
export function extractClaims(text: string): Claim[] {
  const reported = REPORTED_SPEECH.exec(text);
  if (reported?.groups?.speaker && reported.groups.quote !== undefined) {
    const speaker = reported.groups.speaker.toLowerCase();
    return extractClaims(reported.groups.quote).map((claim) =>
      claim.subject === 'self' ? { ...claim, subject: speaker } : claim,
    );
  }
  const claims = new Map<string, Claim>();
  const add = (subject: string, attribute: string, value: string) => {
    const cleanValue = normalise(value)
      .replace(
        /\b(?:now|anymore|any more|these days|last (?:week|month|year)|this (?:week|month|year))\b/g,
        '',
      )
      .trim();
    if (!cleanValue || cleanValue.split(' ').length > 8) return;
    const key = `${subject}|${attribute}`;
    if (!claims.has(key)) claims.set(key, { subject, attribute, value: cleanValue });
  };
  const sentences = text.split(/(?<=[.!?;])\s+|\n+/);
  for (const sentence of sentences) {
    if (/\?\s*$/.test(sentence)) continue;
    for (const { attribute, self, other } of CLAIM_RULES) {
      const own = self.exec(sentence);
      if (own?.groups?.value) add('self', attribute, own.groups.value);
      const theirs = other?.exec(sentence);
      if (theirs?.groups?.value && theirs.groups.name)
        add(theirs.groups.name.toLowerCase(), attribute, theirs.groups.value);
    }
    for (const { attribute, pattern } of STATE_SELF) {
      const match = pattern.exec(sentence);
      if (match?.groups?.value) add('self', attribute, match.groups.value);
    }
    for (const { attribute, pattern } of STATE_OTHER) {
      const match = pattern.exec(sentence);
      if (match?.groups?.value && match.groups.name)
        add(match.groups.name.toLowerCase(), attribute, match.groups.value);
    }
    const possessive = POSSESSIVE_SELF.exec(sentence);
    if (possessive?.groups?.attr && possessive.groups.value) {
      const attribute = normalise(possessive.groups.attr);
      if (
        !SKIP_ATTRIBUTES.has(attribute) &&
        !MULTI_VALUED.test(attribute.split(' ').at(-1) ?? '')
      ) {
        add('self', attribute, possessive.groups.value);
      }
    }
    const theirs = POSSESSIVE_OTHER.exec(sentence);
    if (theirs?.groups?.attr && theirs.groups.value && theirs.groups.name) {
      const attribute = normalise(theirs.groups.attr);
      if (!SKIP_ATTRIBUTES.has(attribute))
        add(theirs.groups.name.toLowerCase(), attribute, theirs.groups.value);
    }
  }
  return [...claims.values()];
}

export function claimKey(claim: Pick<Claim, 'subject' | 'attribute'>): string {
  return `${claim.subject}|${claim.attribute}`;
}
