import type { MemoryMetadata } from '../../db/schema/index.js';
import { detectLanguage, type TextLanguage } from '../../text/language.js';
import {
  assessConfidence,
  assessVolatility,
  claimKey,
  extractClaims,
  type Claim,
} from './analysis.js';

/** Trust in where a memory came from, by `metadata.source` (1 = stated by the user). */
const SOURCE_WEIGHTS: Record<string, number> = {
  user: 1,
  chat: 1,
  manual: 1,
  form: 1,
  import: 0.9,
  document: 0.9,
  crm: 0.9,
  extraction: 0.8,
  inferred: 0.7,
  ai: 0.7,
  assistant: 0.7,
};
/** Children found by extraction are one step removed from what the user said. */
export const EXTRACTED_SOURCE_WEIGHT = 0.8;
/** At or above this importance a memory is pinned like a `pin`. */
export const AUTO_PIN_IMPORTANCE = 50;

const TYPE_PRIORITY: Record<string, number> = {
  pin: 1.3,
  correction: 1.2,
  fact: 1.1,
  preference: 1.1,
};

export interface MemoryAssessment {
  confidence: number;
  volatility: number;
  expiresAt: Date | null;
  claims: Claim[];
  claimKeys: string[];
  pinned: boolean;
  sourceWeight: number;
  priorityScore: number;
  priorityTier: 'critical' | 'high' | 'normal' | 'low';
  /** The wording corrects something ("actually", "I meant", memory_type correction). */
  correction: boolean;
  /** The language whose rules read the text (neutral when it has none). */
  language: TextLanguage;
}

export interface AssessInput {
  text: string;
  memoryType: string;
  importance: number;
  metadata: MemoryMetadata;
  effectiveAt: Date | null;
  /** Set for children of extraction. */
  extracted?: boolean;
  /** The parent's language, for its children: a short clause says too little to tell. */
  language?: TextLanguage;
}

function sourceWeight(input: AssessInput): number {
  if (input.extracted) return EXTRACTED_SOURCE_WEIGHT;
  const source =
    typeof input.metadata.source === 'string' ? input.metadata.source.toLowerCase() : undefined;
  const base = (source !== undefined ? SOURCE_WEIGHTS[source] : undefined) ?? 1;
  return input.memoryType === 'correction' ? Math.min(1.1, base + 0.1) : base;
}

/**
 * Everything the write pipeline decides from the text and the payload alone. priority_score is
 * 1 − e^(−x) with x = confidence × source weight × type weight × importance^0.25 (a plain
 * note: 0.55; importance 100: 0.92); tiers: critical (pinned or ≥ 0.85), high (≥ 0.65), normal
 * (≥ 0.4), low.
 */
export function assessMemory(input: AssessInput, now = new Date()): MemoryAssessment {
  const language = input.language ?? detectLanguage(input.text);
  const { confidence, correction } = assessConfidence(input.text, input.memoryType, language);
  const pinned = input.memoryType === 'pin' || input.importance >= AUTO_PIN_IMPORTANCE;
  const volatility = assessVolatility(
    input.text,
    pinned ? 'pin' : input.memoryType,
    input.effectiveAt ?? now,
    language,
  );
  const claims = extractClaims(input.text, language);
  const weight = sourceWeight(input);
  const x =
    confidence * weight * (TYPE_PRIORITY[input.memoryType] ?? 1) * Math.pow(input.importance, 0.25);
  const priorityScore = Math.round((1 - Math.exp(-x)) * 1000) / 1000;
  const priorityTier =
    pinned || priorityScore >= 0.85
      ? 'critical'
      : priorityScore >= 0.65
        ? 'high'
        : priorityScore >= 0.4
          ? 'normal'
          : 'low';
  return {
    confidence,
    volatility: volatility.volatility,
    expiresAt: volatility.expiresAt,
    claims,
    claimKeys: claims.map(claimKey),
    pinned,
    sourceWeight: weight,
    priorityScore,
    priorityTier,
    correction,
    language,
  };
}
