/** A period a query names, inclusive bounds, in UTC. */
export interface TimeWindow {
  from: Date;
  to: Date;
}

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
const MONTH = `(${MONTHS.join('|')}|sept|${MONTHS.map((m) => m.slice(0, 3)).join('|')})\\.?`;
const YEAR = '((?:19|20)\\d{2})';
const DAY_MS = 86_400_000;
const UNIT_DAYS: Record<string, number> = { day: 1, week: 7, month: 30, year: 365 };
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  few: 3,
  couple: 2,
};

const monthIndex = (name: string) => MONTHS.findIndex((m) => m.startsWith(name.slice(0, 3)));
const utc = (year: number, month: number, day = 1) => new Date(Date.UTC(year, month, day));
const endOfDay = (date: Date) => new Date(date.getTime() + DAY_MS - 1);

function monthWindow(year: number, month: number): TimeWindow {
  return { from: utc(year, month), to: new Date(utc(year, month + 1).getTime() - 1) };
}

/** The latest such month that began at or before `reference` (a question is about the past). */
function latestMonth(month: number, reference: Date): number {
  const year = reference.getUTCFullYear();
  return utc(year, month) <= reference ? year : year - 1;
}

/**
 * The period an English query names explicitly, if any: "last week of August 2023", "July 2022",
 * "in October" (the latest October up to `reference`), "in 2021", "two weeks ago", "last month".
 * `reference` is the time the query is relative to: the request's time, or the owner's latest
 * memory for a record of the past. Relative periods get a margin of half their unit on each side,
 * since people round ("two weeks ago" may be ten days). General English only: no rule is shaped
 * after any data set.
 */
export function timeWindowOf(query: string, reference: Date): TimeWindow | undefined {
  const text = query.toLowerCase();

  const partOfMonth = new RegExp(
    `\\b(first|last)\\s+(week|days)\\s+of\\s+${MONTH}(?:,?\\s+${YEAR})?\\b`,
  ).exec(text);
  if (partOfMonth) {
    const month = monthIndex(partOfMonth[3]!);
    const year = partOfMonth[4] ? Number(partOfMonth[4]) : latestMonth(month, reference);
    const whole = monthWindow(year, month);
    return partOfMonth[1] === 'first'
      ? { from: whole.from, to: endOfDay(utc(year, month, 7)) }
      : { from: new Date(whole.to.getTime() + 1 - 7 * DAY_MS), to: whole.to };
  }

  const monthYear = new RegExp(`\\b${MONTH}(?:\\s+of)?,?\\s+${YEAR}\\b`).exec(text);
  if (monthYear) return monthWindow(Number(monthYear[2]), monthIndex(monthYear[1]!));

  const monthAlone = new RegExp(
    `\\b(?:in|during|since|last|this|early|late|mid)[- ]${MONTH}\\b`,
  ).exec(text);
  if (monthAlone) {
    const month = monthIndex(monthAlone[1]!);
    return monthWindow(latestMonth(month, reference), month);
  }

  const ago =
    /\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|few|couple)(?:\s+of)?\s+(day|week|month|year)s?\s+ago\b/.exec(
      text,
    );
  if (ago) {
    const count = NUMBER_WORDS[ago[1]!] ?? Number(ago[1]);
    const unit = UNIT_DAYS[ago[2]!]!;
    const centre = reference.getTime() - count * unit * DAY_MS;
    const margin = (unit * DAY_MS) / 2;
    return { from: new Date(centre - margin), to: new Date(centre + margin) };
  }

  const last = /\b(last|past|previous)\s+(week|month|year)\b/.exec(text);
  if (last) {
    const unit = UNIT_DAYS[last[2]!]!;
    return { from: new Date(reference.getTime() - unit * DAY_MS), to: reference };
  }
  if (/\byesterday\b/.test(text)) {
    const day = utc(
      reference.getUTCFullYear(),
      reference.getUTCMonth(),
      reference.getUTCDate() - 1,
    );
    return { from: day, to: endOfDay(day) };
  }

  const year = new RegExp(`\\b(?:in|during|since|of)\\s+${YEAR}\\b`).exec(text);
  if (year) {
    const y = Number(year[1]);
    return { from: utc(y, 0), to: new Date(utc(y + 1, 0).getTime() - 1) };
  }
  return undefined;
}
