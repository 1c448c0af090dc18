import type { ClaimHolder } from '../../db/queries/lifecycle.js';
import type { NearestMemory } from '../../db/queries/memory-writes.js';
import { shingleSimilarity, wordShingles } from '../../text/canonical.js';
import type { TextLanguage } from '../../text/language.js';
import { words } from '../../text/tokens.js';
import { claimKey, isReportedSpeech, type Claim } from './analysis.js';
import type { MemoryAssessment } from './intelligence.js';

/** A hedged statement (confidence below this) never supersedes a fact. */
export const MIN_CONFIDENCE_TO_SUPERSEDE = 0.6;
/** A `correction` without a matching claim corrects its nearest memory if at least this alike. */
const CORRECTION_MIN_SIMILARITY = 0.3;

export interface Supersession {
  memoryId: string;
  rule: 'replaces_memory_id' | 'conflict' | 'correction';
  details: Record<string, unknown>;
}

export type LifecycleDecision =
  | { kind: 'dedupe'; memoryId: string; dedupeKind: 'near' | 'semantic'; rule: string }
  | { kind: 'merge'; memoryId: string; previousText: string }
  | {
      kind: 'insert';
      supersede: Supersession[];
      /** The new memory states an older value of a fact a newer memory holds: keep it as history. */
      historyOf?: { memoryId: string; details: Record<string, unknown> };
    };

export interface DecisionInput {
  text: string;
  memoryType: string;
  chunkCount: number;
  assessment: MemoryAssessment;
  /** When the new fact became true: effective_at, or now. */
  effectiveAt: Date;
  /** Set when effective_at was given: only then can a write be older than what is stored. */
  explicitEffectiveAt: boolean;
  replacesId?: string;
  nearest: NearestMemory[];
  claimHolders: ClaimHolder[];
  thresholds: { nearThreshold: number; semanticThreshold: number };
  /** What the rules read of the texts, kept across decisions (a batch's); default: this one's. */
  readings?: TextReadings;
}

/**
 * What the rules read of texts (word shingles, values, content stems, reported speech), each
 * worked out once per text: a batch compares each of its texts with several later writes, and a
 * decision compares its own text with each candidate.
 */
export class TextReadings {
  private readonly shingles = new Map<string, Set<string>>();
  private readonly values = new Map<string, Set<string>>();
  private readonly stems = new Map<string, Set<string>>();
  private readonly reported = new Map<string, boolean>();

  /** Jaccard similarity of the two texts' words and word pairs, as `lexicalSimilarity`. */
  lexicalSimilarity(a: string, b: string): number {
    return shingleSimilarity(this.shinglesOf(a), this.shinglesOf(b));
  }

  /** The tokens with a digit: numbers, codes, dates, versions, amounts. */
  valuesOf(text: string): Set<string> {
    let found = this.values.get(text);
    if (!found) {
      found = new Set(words(text).filter((word) => /\p{N}/u.test(word)));
      this.values.set(text, found);
    }
    return found;
  }

  contentStemsOf(text: string, language: TextLanguage): Set<string> {
    const key = `${language.code}:${text}`;
    let found = this.stems.get(key);
    if (!found) {
      found = new Set(language.contentStems(text));
      this.stems.set(key, found);
    }
    return found;
  }

  isReportedSpeech(text: string, language: TextLanguage): boolean {
    const key = `${language.code}:${text}`;
    let found = this.reported.get(key);
    if (found === undefined) {
      found = isReportedSpeech(text, language);
      this.reported.set(key, found);
    }
    return found;
  }

  private shinglesOf(text: string): Set<string> {
    let found = this.shingles.get(text);
    if (!found) {
      found = wordShingles(text);
      this.shingles.set(text, found);
    }
    return found;
  }
}

function coverage(of: Set<string>, by: Set<string>): number {
  if (of.size === 0) return 0;
  let found = 0;
  for (const stem of of) if (by.has(stem)) found += 1;
  return found / of.size;
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const value of a) if (!b.has(value)) return false;
  return true;
}

interface Conflict {
  holder: ClaimHolder;
  mine: Claim;
  theirs: Claim;
}

function conflicts(
  claims: Claim[],
  holders: ClaimHolder[],
): { differing: Conflict[]; restating: Set<string> } {
  const differing: Conflict[] = [];
  const restating = new Set<string>();
  for (const holder of holders) {
    for (const mine of claims) {
      const theirs = holder.claims.find((claim) => claimKey(claim) === claimKey(mine));
      if (!theirs) continue;
      if (theirs.value === mine.value) restating.add(holder.id);
      else differing.push({ holder, mine, theirs });
    }
  }
  return { differing, restating };
}

/**
 * The lifecycle rules of a write, in order: an explicit replacement wins; then duplicates
 * (never one that states a different value); then contradicting facts (same subject and
 * attribute, another value) supersede the older statement, ordered by effective time, unless the
 * new one is hedged; a `correction` supersedes what it corrects; then refinement: a new memory
 * that says everything a live one says and more merges into it, and one that says less is
 * already covered.
 */
export function decideLifecycle(input: DecisionInput): LifecycleDecision {
  if (input.replacesId) {
    return {
      kind: 'insert',
      supersede: [{ memoryId: input.replacesId, rule: 'replaces_memory_id', details: {} }],
    };
  }
  const { differing, restating } = conflicts(input.assessment.claims, input.claimHolders);
  const contradicted = new Set(differing.map((conflict) => conflict.holder.id));
  const { nearThreshold, semanticThreshold } = input.thresholds;
  const readings = input.readings ?? new TextReadings();

  for (const candidate of input.nearest) {
    if (contradicted.has(candidate.memoryId)) continue;
    if (readings.lexicalSimilarity(input.text, candidate.text) >= nearThreshold) {
      return {
        kind: 'dedupe',
        memoryId: candidate.memoryId,
        dedupeKind: 'near',
        rule: 'near_duplicate',
      };
    }
  }
  // A semantic duplicate says the same with other words, so it states the same values.
  // Embeddings barely tell "code 4821" from "code 9930" (a neural model's sentence vectors
  // hardly move with a number; the local word vectors do not know such tokens at all), so the
  // cosine alone would merge two facts that differ only in their value.
  const myValues = readings.valuesOf(input.text);
  const best = input.nearest.find(
    (candidate) =>
      candidate.chunkCount === 1 &&
      !contradicted.has(candidate.memoryId) &&
      sameSet(readings.valuesOf(candidate.text), myValues),
  );
  if (
    input.chunkCount === 1 &&
    best &&
    best.similarity >= semanticThreshold &&
    input.memoryType !== 'correction'
  ) {
    return {
      kind: 'dedupe',
      memoryId: best.memoryId,
      dedupeKind: 'semantic',
      rule: 'semantic_duplicate',
    };
  }

  const mayOverride =
    input.assessment.confidence >= MIN_CONFIDENCE_TO_SUPERSEDE || input.memoryType === 'correction';
  const supersede: Supersession[] = [];
  let historyOf: { memoryId: string; details: Record<string, unknown> } | undefined;
  for (const { holder, mine, theirs } of differing) {
    const details = {
      subject: mine.subject,
      attribute: mine.attribute,
      old_value: theirs.value,
      new_value: mine.value,
    };
    const holderAt = holder.effectiveAt ?? holder.createdAt;
    if (input.explicitEffectiveAt && input.effectiveAt < holderAt) {
      historyOf ??= { memoryId: holder.id, details };
      continue;
    }
    if (!mayOverride || supersede.some((s) => s.memoryId === holder.id)) continue;
    supersede.push({
      memoryId: holder.id,
      rule: input.memoryType === 'correction' ? 'correction' : 'conflict',
      details,
    });
  }
  if (historyOf && supersede.length === 0) return { kind: 'insert', supersede, historyOf };

  if (input.memoryType === 'correction' && supersede.length === 0) {
    const target = input.nearest.find(
      (candidate) =>
        !restating.has(candidate.memoryId) &&
        (candidate.similarity >= CORRECTION_MIN_SIMILARITY ||
          readings.lexicalSimilarity(input.text, candidate.text) >= CORRECTION_MIN_SIMILARITY),
    );
    if (target)
      supersede.push({
        memoryId: target.memoryId,
        rule: 'correction',
        details: { similarity: round(target.similarity) },
      });
  }
  if (supersede.length > 0) return { kind: 'insert', supersede };

  // Refinement: same fact, more detail. Not between records of what someone said: two
  // utterances are two events, however much the second repeats of the first (and every turn of
  // one speaker shares the speaker's name).
  // Both texts are read by the new text's language: the one whose words decide what it says.
  const { language } = input.assessment;
  if (readings.isReportedSpeech(input.text, language)) return { kind: 'insert', supersede: [] };
  const mine = readings.contentStemsOf(input.text, language);
  for (const candidate of input.nearest) {
    if (candidate.chunkCount !== 1 || readings.isReportedSpeech(candidate.text, language)) continue;
    const theirs = readings.contentStemsOf(candidate.text, language);
    if (theirs.size >= 2 && coverage(theirs, mine) >= 0.8 && mine.size >= theirs.size + 2) {
      return { kind: 'merge', memoryId: candidate.memoryId, previousText: candidate.text };
    }
    if (mine.size >= 2 && coverage(mine, theirs) === 1 && theirs.size > mine.size) {
      return {
        kind: 'dedupe',
        memoryId: candidate.memoryId,
        dedupeKind: 'near',
        rule: 'covered_by_existing',
      };
    }
  }
  return { kind: 'insert', supersede: [] };
}

const round = (value: number) => Math.round(value * 1000) / 1000;
