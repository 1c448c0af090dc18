/**
 * Session granularity for the LoCoMo bench: one memory per chat session (every turn of the session,
 * one line each, as one long memory dated by the session), a question's evidence mapped to the
 * sessions that hold its evidence turns. Long memories are a shape of their own: a ranking tuned on
 * one-turn memories can lose to its own recalls there, so the bench measures both.
 *
 * Metrics at k (questions with evidence only): recall_all (every evidence session in the top k),
 * recall_any (at least one), ndcg (binary relevance, ideal = every evidence session first).
 */
import type { Question, Turn } from './locomo-data.js';

export interface Session {
  conversation: string;
  session: number;
  /** `<conversation>/session-<n>`. */
  id: string;
  /** The session's turns as the paper writes them, one line each. */
  text: string;
  effectiveAt: string | undefined;
}

export function sessionsOf(turns: Turn[]): Session[] {
  const byId = new Map<string, Session>();
  for (const turn of turns) {
    const id = `${turn.conversation}/session-${turn.session}`;
    const known = byId.get(id);
    if (known) known.text += `\n${turn.text}`;
    else
      byId.set(id, {
        conversation: turn.conversation,
        session: turn.session,
        id,
        text: turn.text,
        effectiveAt: turn.effectiveAt,
      });
  }
  return [...byId.values()];
}

/** A question's evidence as the sessions that hold its evidence turns. */
export function evidenceSessions(question: Question): string[] {
  const sessions = question.evidence
    .map((dia) => /^D(\d+):/.exec(dia)?.[1])
    .filter((n): n is string => n !== undefined)
    .map((n) => `${question.conversation}/session-${Number(n)}`);
  return [...new Set(sessions)];
}

export interface SessionScores {
  recallAll: number;
  recallAny: number;
  ndcg: number;
}

/** One question's scores at k; `ranked` holds session ids best first (repeats are skipped). */
export function sessionScores(evidence: string[], ranked: string[], k: number): SessionScores {
  const top = [...new Set(ranked)].slice(0, k);
  const wanted = new Set(evidence);
  const found = top.filter((id) => wanted.has(id)).length;
  let dcg = 0;
  top.forEach((id, i) => {
    if (wanted.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, wanted.size); i += 1) ideal += 1 / Math.log2(i + 2);
  return {
    recallAll: found === wanted.size ? 1 : 0,
    recallAny: found > 0 ? 1 : 0,
    ndcg: ideal > 0 ? dcg / ideal : 0,
  };
}

export interface SessionRun {
  label: string;
  /** Per question (aligned with the questions), undefined for a question without evidence. */
  scores: Array<SessionScores | undefined>;
}

export function sessionRun(
  label: string,
  questions: Question[],
  ranked: string[][],
  k: number,
): SessionRun {
  return {
    label,
    scores: questions.map((question, i) => {
      const evidence = evidenceSessions(question);
      return evidence.length === 0 ? undefined : sessionScores(evidence, ranked[i] ?? [], k);
    }),
  };
}

/** Mean of one metric in percent over the questions `keep` accepts that have evidence. */
export function meanSessionScore(
  run: SessionRun,
  questions: Question[],
  metric: keyof SessionScores,
  keep: (question: Question) => boolean = () => true,
): number {
  let sum = 0;
  let n = 0;
  questions.forEach((question, i) => {
    const scores = run.scores[i];
    if (!scores || !keep(question)) return;
    sum += scores[metric];
    n += 1;
  });
  return n === 0 ? Number.NaN : (100 * sum) / n;
}
