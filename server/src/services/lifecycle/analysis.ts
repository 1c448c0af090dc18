/**
 * What a memory's wording says about it, by rules a reader can check: how sure the speaker is
 * (confidence), how long it will stay true (volatility, expiry), and which facts it states
 * (claims: subject + attribute = value) so that a later contradicting fact can supersede it.
 * The wording rules are the text's language's (text/lang); English unless told otherwise.
 */
import { ENGLISH, type ClaimRules, type TextLanguage } from '../../text/language.js';

/** A question is a hedge in any language that ends one with "?". */
const QUESTION = /\?\s*$/;

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
export function assessConfidence(
  text: string,
  memoryType: string,
  language: TextLanguage = ENGLISH,
): ConfidenceAssessment {
  const hedges =
    language.hedges.filter((pattern) => pattern.test(text)).length + (QUESTION.test(text) ? 1 : 0);
  const correction =
    memoryType === 'correction' || language.corrections.some((pattern) => pattern.test(text));
  if (memoryType === 'pin') return { confidence: 0.95, hedges, correction };
  let confidence = 0.8 - 0.15 * hedges;
  if (correction) confidence += 0.1;
  return { confidence: round(Math.min(1, Math.max(0.3, confidence))), hedges, correction };
}

/** At or above this, a memory gets an `expires_at`. */
export const VOLATILE_THRESHOLD = 0.7;

export interface VolatilityAssessment {
  volatility: number;
  /** When the statement stops being true, for volatile text. */
  expiresAt: Date | null;
}

/**
 * 0.1 for ordinary facts (0.3 for events); time-bound wording raises it to the level of its most
 * short-lived marker (a past event's "today" does not: see `pastEvent` in the language data:
 * what happened today is still what happened tomorrow; only states and plans go stale), and text at or above
 * VOLATILE_THRESHOLD expires after that marker's lifetime, counted from `effective_at` when
 * given, else from now.
 */
export function assessVolatility(
  text: string,
  memoryType: string,
  from: Date,
  language: TextLanguage = ENGLISH,
): VolatilityAssessment {
  let volatility = memoryType === 'event' ? 0.3 : 0.1;
  let lifetimeMs: number | undefined;
  const pastEvent = language.pastEvent?.test(text) ?? false;
  for (const marker of language.volatileMarkers) {
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

function normalise(text: string, rules: ClaimRules): string {
  let value = text.toLowerCase().replace(/\s+/g, ' ').trim();
  for (const [pattern, replacement] of rules.spelling) value = value.replace(pattern, replacement);
  return value.replace(rules.leadingArticle, '');
}

/** Whether `text` reports what someone said (`Jane said, "…"`): a record of an utterance. */
export function isReportedSpeech(text: string, language: TextLanguage = ENGLISH): boolean {
  return language.claims?.reportedSpeech.test(text) ?? false;
}

/**
 * The single-valued facts a text states. Only wording that names one value for one attribute
 * counts ("I live in Paris", "my favourite colour is blue", "Jane works at Acme"); likes,
 * lists and plans are not claims, so they never supersede each other.
 */
export function extractClaims(text: string, language: TextLanguage = ENGLISH): Claim[] {
  const rules = language.claims;
  if (!rules) return [];
  const reported = rules.reportedSpeech.exec(text);
  if (reported?.groups?.speaker && reported.groups.quote !== undefined) {
    const speaker = reported.groups.speaker.toLowerCase();
    return extractClaims(reported.groups.quote, language).map((claim) =>
      claim.subject === 'self' ? { ...claim, subject: speaker } : claim,
    );
  }
  const claims = new Map<string, Claim>();
  const add = (subject: string, attribute: string, value: string) => {
    const cleanValue = normalise(value, rules).replace(rules.valueNoise, '').trim();
    if (!cleanValue || cleanValue.split(' ').length > 8) return;
    const key = `${subject}|${attribute}`;
    if (!claims.has(key)) claims.set(key, { subject, attribute, value: cleanValue });
  };
  const sentences = text.split(/(?<=[.!?;])\s+|\n+/);
  for (const sentence of sentences) {
    if (/\?\s*$/.test(sentence)) continue;
    for (const { attribute, self, other } of rules.relations) {
      const own = self.exec(sentence);
      if (own?.groups?.value) add('self', attribute, own.groups.value);
      const theirs = other?.exec(sentence);
      if (theirs?.groups?.value && theirs.groups.name)
        add(theirs.groups.name.toLowerCase(), attribute, theirs.groups.value);
    }
    for (const { attribute, pattern } of rules.statesSelf) {
      const match = pattern.exec(sentence);
      if (match?.groups?.value) add('self', attribute, match.groups.value);
    }
    for (const { attribute, pattern } of rules.statesOther) {
      const match = pattern.exec(sentence);
      if (match?.groups?.value && match.groups.name)
        add(match.groups.name.toLowerCase(), attribute, match.groups.value);
    }
    const possessive = rules.possessiveSelf.exec(sentence);
    if (possessive?.groups?.attr && possessive.groups.value) {
      const attribute = normalise(possessive.groups.attr, rules);
      if (
        !rules.skipAttributes.has(attribute) &&
        !(rules.multiValued?.test(attribute.split(' ').at(-1) ?? '') ?? false)
      ) {
        add('self', attribute, possessive.groups.value);
      }
    }
    const theirs = rules.possessiveOther.exec(sentence);
    if (theirs?.groups?.attr && theirs.groups.value && theirs.groups.name) {
      const attribute = normalise(theirs.groups.attr, rules);
      if (!rules.skipAttributes.has(attribute))
        add(theirs.groups.name.toLowerCase(), attribute, theirs.groups.value);
    }
  }
  return [...claims.values()];
}

export function claimKey(claim: Pick<Claim, 'subject' | 'attribute'>): string {
  return `${claim.subject}|${claim.attribute}`;
}
