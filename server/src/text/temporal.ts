/**
 * Whether a query asks when something happened ("When did we paint the fence?", "What year was
 * she in Lisbon?", "How long ago was the trip?"): a time question in the past tense. Such a
 * question is about history, so a memory whose time-bound wording has expired (see
 * assessVolatility) still answers it. A time question in the present or future tense ("When does
 * Kim go to the gym?") asks for current truth.
 */
const TIME_QUESTION =
  /\b(?:when|since when|how long ago|what (?:date|day|time|year|month|week(?:end)?)|which (?:date|day|year|month|week(?:end)?))\b/i;
/** Past-tense wording: auxiliaries, "ago", "last", "used to", or a regular past form ("-eed" words such as "need" are not). */
const PAST_TENSE = /\b(?:did|was|were|had|ago|last|previous(?:ly)?|used to|\w{2,}(?<!e)ed)\b/i;

export function asksAboutThePast(query: string): boolean {
  return TIME_QUESTION.test(query) && PAST_TENSE.test(query);
}
