/**
 * LoCoMo data (Maharana et al., ACL 2024) as the quality benchmark reads it, and the paper's
 * dialog-level recall@k. The data is evaluation-only: it is read from outside the repository and
 * never copied into it.
 */
import { readFileSync } from 'node:fs';

export interface Turn {
  conversation: string;
  diaId: string;
  session: number;
  speaker: string;
  /** As the paper embeds it: `<speaker> said, "<text>"` (+ ` and shared <blip_caption>`). */
  text: string;
  /** What the speaker said, as a chat message holds it: `<text>` (+ ` [shared <blip_caption>]`). */
  message: string;
  /** The session's date, ISO; undefined when the date string does not parse. */
  effectiveAt: string | undefined;
}

export interface Question {
  conversation: string;
  question: string;
  category: number;
  /** Evidence dia_ids that name a turn of the conversation (malformed ones dropped). */
  evidence: string[];
}

export interface LocomoData {
  turns: Turn[];
  questions: Question[];
  conversations: string[];
}

export const CATEGORY_NAMES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** "1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00.000Z (the data has no time zone; UTC is as good as any). */
export function parseLocomoDate(value: string): string | undefined {
  const match =
    /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(value);
  if (!match) return undefined;
  const [, h, m, ampm, day, monthName, year] = match;
  const month = MONTHS.indexOf(monthName!.toLowerCase());
  if (month < 0) return undefined;
  let hour = Number(h) % 12;
  if (ampm!.toLowerCase() === 'pm') hour += 12;
  return new Date(Date.UTC(Number(year), month, Number(day), hour, Number(m))).toISOString();
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: Array<{ question: string; category: number; evidence?: unknown }>;
}

export function turnText(turn: RawTurn): string {
  const caption = turn.blip_caption ? ` and shared ${turn.blip_caption}` : '';
  return `${turn.speaker} said, "${turn.text}"${caption}`;
}

export function loadLocomo(path: string): LocomoData {
  const samples = JSON.parse(readFileSync(path, 'utf8')) as RawSample[];
  const turns: Turn[] = [];
  const questions: Question[] = [];
  for (const sample of samples) {
    const known = new Set<string>();
    // Iterate over the session lists, not the date keys: some dates have no session.
    const sessions = Object.keys(sample.conversation)
      .map((key) => /^session_(\d+)$/.exec(key))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => Number(match[1]))
      .sort((a, b) => a - b);
    for (const session of sessions) {
      const list = sample.conversation[`session_${session}`];
      if (!Array.isArray(list)) continue;
      const date = sample.conversation[`session_${session}_date_time`];
      const effectiveAt = typeof date === 'string' ? parseLocomoDate(date) : undefined;
      for (const turn of list as RawTurn[]) {
        known.add(turn.dia_id);
        turns.push({
          conversation: sample.sample_id,
          diaId: turn.dia_id,
          session,
          speaker: turn.speaker,
          text: turnText(turn),
          message: turn.blip_caption ? `${turn.text} [shared ${turn.blip_caption}]` : turn.text,
          effectiveAt,
        });
      }
    }
    for (const qa of sample.qa) {
      // Malformed evidence: "D8:6; D9:17" holds two ids; "D:11:26" and "D30:05" name no turn.
      const raw = Array.isArray(qa.evidence) ? qa.evidence.map(String) : [];
      const evidence = [
        ...new Set(raw.flatMap((item) => item.split(/[;,]/)).map((id) => id.trim())),
      ].filter((id) => known.has(id));
      questions.push({
        conversation: sample.sample_id,
        question: String(qa.question),
        category: qa.category,
        evidence,
      });
    }
  }
  return { turns, questions, conversations: samples.map((sample) => sample.sample_id) };
}

/** The paper's recall@k for one question: share of its evidence in the top k; no evidence counts as 1. */
export function recallAt(evidence: string[], ranked: string[][], k: number): number {
  if (evidence.length === 0) return 1;
  const found = new Set<string>();
  for (const ids of ranked.slice(0, k)) for (const id of ids) found.add(id);
  return evidence.filter((id) => found.has(id)).length / evidence.length;
}

export const KS = [5, 10, 20, 25, 50] as const;

export interface RecallRow {
  /** Mean recall@k in percent, by k. */
  overall: Record<number, number>;
  byCategory: Record<number, Record<number, number>>;
  count: number;
  countByCategory: Record<number, number>;
}

/** Mean recall@k over the questions, overall and per category; `ranked[i]` answers `questions[i]`. */
export function summarise(questions: Question[], ranked: string[][][]): RecallRow {
  const sums: Record<number, number> = {};
  const categorySums: Record<number, Record<number, number>> = {};
  const countByCategory: Record<number, number> = {};
  questions.forEach((question, i) => {
    const list = ranked[i] ?? [];
    countByCategory[question.category] = (countByCategory[question.category] ?? 0) + 1;
    const bucket = (categorySums[question.category] ??= {});
    for (const k of KS) {
      const r = recallAt(question.evidence, list, k);
      sums[k] = (sums[k] ?? 0) + r;
      bucket[k] = (bucket[k] ?? 0) + r;
    }
  });
  const overall: Record<number, number> = {};
  for (const k of KS) overall[k] = (100 * (sums[k] ?? 0)) / Math.max(1, questions.length);
  const byCategory: Record<number, Record<number, number>> = {};
  for (const [category, bucket] of Object.entries(categorySums)) {
    const n = countByCategory[Number(category)] ?? 1;
    byCategory[Number(category)] = Object.fromEntries(
      KS.map((k) => [k, (100 * (bucket[k] ?? 0)) / n]),
    );
  }
  return { overall, byCategory, count: questions.length, countByCategory };
}
