/**
 * Leave-conversations-out for the LoCoMo bench: the dev data has a few conversations, and a
 * setting chosen on all of them says little about a conversation nobody tuned on. Each fold holds
 * one conversation out, picks the best candidate setting on the others (mean R@10 over their
 * questions) and reports that choice on the held-out one. That is honest only about the choice
 * among the candidates: the design and the constants every candidate shares were chosen with all
 * dev conversations in view, so the fold mean is not an estimate for an unseen conversation (it
 * has read about 4 points of R@10 high on held-back data).
 */
import { KS, recallAt, type Question } from './locomo-data.js';

/** One setting's recall@k per question (0..1), in the order of the data's questions. */
export interface QuestionRecalls {
  label: string;
  /** recall[k][i]: question i's recall at k. */
  recall: Record<number, number[]>;
}

export function questionRecalls(
  label: string,
  questions: Question[],
  ranked: string[][][],
): QuestionRecalls {
  const recall: Record<number, number[]> = {};
  for (const k of KS)
    recall[k] = questions.map((question, i) => recallAt(question.evidence, ranked[i] ?? [], k));
  return { label, recall };
}

/** Mean recall@k in percent over the questions `keep` accepts (NaN when none). */
export function meanRecall(
  run: QuestionRecalls,
  questions: Question[],
  k: number,
  keep: (question: Question) => boolean,
): number {
  let sum = 0;
  let n = 0;
  questions.forEach((question, i) => {
    if (!keep(question)) return;
    sum += run.recall[k]?.[i] ?? 0;
    n += 1;
  });
  return n === 0 ? Number.NaN : (100 * sum) / n;
}

export interface Fold {
  heldOut: string;
  /** The candidate with the best R@10 on the other conversations. */
  chosen: string;
  tunedR10: number;
  heldOut5: number;
  heldOut10: number;
}

/** One fold per conversation: choose on the others, report on the held-out one. */
export function leaveOneOut(
  candidates: QuestionRecalls[],
  questions: Question[],
  conversations: string[],
): Fold[] {
  return conversations.map((heldOut) => {
    let best = candidates[0]!;
    let bestTuned = -Infinity;
    for (const candidate of candidates) {
      const tuned = meanRecall(candidate, questions, 10, (q) => q.conversation !== heldOut);
      // Ties keep the earlier candidate (the first is the current default).
      if (tuned > bestTuned + 1e-9) {
        best = candidate;
        bestTuned = tuned;
      }
    }
    const held = (q: Question) => q.conversation === heldOut;
    return {
      heldOut,
      chosen: best.label,
      tunedR10: bestTuned,
      heldOut5: meanRecall(best, questions, 5, held),
      heldOut10: meanRecall(best, questions, 10, held),
    };
  });
}

export const mean = (values: number[]) =>
  values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
