/**
 * Seeded synthetic memories: short, realistic sentences (preferences, facts, events, tasks) about
 * people, places and products. Memory `i` depends only on (seed, owner stream, i), so a data set
 * of 10k is the first 10k of the 100k one and sizes can be loaded cumulatively.
 */

/** mulberry32: small, fast, good enough for picking template slots. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes the stream and index into one 32-bit seed (splitmix-style). */
function seedFor(seed: number, stream: number, index: number): number {
  let h = (seed ^ Math.imul(stream + 1, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

// prettier-ignore
const NAMES = ['Ana', 'Ben', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kofi', 'Lena', 'Mateo', 'Nadia', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sven', 'Tara', 'Uma', 'Victor', 'Wen', 'Yusuf', 'Zoe'];
// prettier-ignore
const CITIES = ['Berlin', 'Lisbon', 'Tokyo', 'Nairobi', 'Toronto', 'Madrid', 'Seoul', 'Oslo', 'Austin', 'Lyon', 'Porto', 'Denver', 'Kyoto', 'Dublin', 'Vienna', 'Cape Town', 'Melbourne', 'Prague'];
// prettier-ignore
const FOODS = ['ramen', 'sushi', 'tacos', 'pho', 'falafel', 'lasagna', 'dumplings', 'paella', 'curry', 'pierogi', 'burritos', 'risotto'];
// prettier-ignore
const DRINKS = ['oat milk latte', 'green tea', 'espresso', 'cold brew', 'chai', 'sparkling water', 'flat white', 'matcha'];
// prettier-ignore
const PRODUCTS = ['Pro plan', 'Team plan', 'mobile app', 'desktop client', 'analytics add-on', 'API tier', 'starter kit', 'premium support'];
// prettier-ignore
const DEVICES = ['iPhone 15', 'Pixel 8', 'ThinkPad X1', 'MacBook Air', 'Galaxy Tab', 'Kindle', 'Steam Deck', 'Apple Watch'];
// prettier-ignore
const HOBBIES = ['hiking', 'piano', 'rock climbing', 'gardening', 'chess', 'photography', 'surfing', 'pottery', 'cycling', 'baking sourdough', 'birdwatching', 'running'];
// prettier-ignore
const JOBS = ['nurse', 'data engineer', 'teacher', 'architect', 'product manager', 'chef', 'accountant', 'designer', 'pilot', 'pharmacist'];
// prettier-ignore
const PETS = ['a cat named Milo', 'a dog named Biscuit', 'two goldfish', 'a parrot called Kiwi', 'a rabbit named Clover', 'a beagle called Rex'];
// prettier-ignore
const ALLERGIES = ['peanuts', 'shellfish', 'gluten', 'pollen', 'penicillin', 'lactose', 'cats'];
// prettier-ignore
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
// prettier-ignore
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
// prettier-ignore
const ISSUES = ['a billing error', 'a login problem', 'a late delivery', 'a broken charger', 'a double charge', 'a sync failure', 'a missing invoice'];

type Pick = <T>(list: readonly T[]) => T;

export type SyntheticType = 'preference' | 'fact' | 'event' | 'task';

const TEMPLATES: Array<[SyntheticType, (p: Pick, n: () => number) => string]> = [
  [
    'preference',
    (p) => `Prefers ${p(DRINKS)} in the morning and never drinks ${p(DRINKS)} after lunch.`,
  ],
  [
    'preference',
    (p) => `Their favourite food is ${p(FOODS)}, especially from a small place in ${p(CITIES)}.`,
  ],
  [
    'preference',
    (p) => `Likes ${p(HOBBIES)} on weekends and wants reminders on ${p(DAYS)} evenings.`,
  ],
  [
    'preference',
    (p) => `Prefers email over phone calls and likes short answers about the ${p(PRODUCTS)}.`,
  ],
  ['preference', (p) => `Would rather sit by the window when flying to ${p(CITIES)}.`],
  ['fact', (p) => `Works as a ${p(JOBS)} and lives in ${p(CITIES)}.`],
  ['fact', (p) => `Has ${p(PETS)} and a partner called ${p(NAMES)}.`],
  ['fact', (p) => `Is allergic to ${p(ALLERGIES)}; always check the menu before booking dinner.`],
  ['fact', (p) => `Uses a ${p(DEVICES)} for work and a ${p(DEVICES)} at home.`],
  [
    'fact',
    (p, n) =>
      `Is on the ${p(PRODUCTS)} since ${p(MONTHS)} ${2019 + Math.floor(n() * 7)} and pays yearly.`,
  ],
  ['fact', (p) => `Their sister ${p(NAMES)} lives in ${p(CITIES)} and works as a ${p(JOBS)}.`],
  [
    'event',
    (p, n) =>
      `Flew to ${p(CITIES)} on ${p(MONTHS)} ${1 + Math.floor(n() * 28)} for a ${p(['conference', 'wedding', 'holiday', 'job interview'])}.`,
  ],
  [
    'event',
    (p) => `Reported ${p(ISSUES)} with the ${p(PRODUCTS)} last ${p(DAYS)}; support refunded it.`,
  ],
  [
    'event',
    (p) => `Celebrated a birthday with ${p(NAMES)} at a ${p(FOODS)} restaurant in ${p(CITIES)}.`,
  ],
  ['event', (p) => `Ran a half marathon in ${p(CITIES)} and finished in under two hours.`],
  [
    'event',
    (p) => `Upgraded from the ${p(PRODUCTS)} to the ${p(PRODUCTS)} after a call with ${p(NAMES)}.`,
  ],
  ['task', (p) => `Remind them to renew the ${p(PRODUCTS)} before the end of ${p(MONTHS)}.`],
  ['task', (p) => `Follow up with ${p(NAMES)} about ${p(ISSUES)} on ${p(DAYS)}.`],
  ['task', (p) => `Book a table for ${p(FOODS)} in ${p(CITIES)} next ${p(DAYS)} for four people.`],
  ['task', (p) => `Send the ${p(DEVICES)} setup guide and the invoice for ${p(MONTHS)}.`],
];

/** Optional context a real note often carries; also keeps one owner's 10k memories mostly distinct. */
const DETAILS: Array<(p: Pick, n: () => number) => string> = [
  (p) => ` Mentioned on a support call in ${p(MONTHS)}.`,
  (p) => ` Their account manager is ${p(NAMES)}.`,
  (p) => ` This came up while planning a trip to ${p(CITIES)}.`,
  (p, n) => ` Noted on ${p(DAYS)} ${1 + Math.floor(n() * 28)} ${p(MONTHS)}.`,
  (p) => ` ${p(NAMES)} confirmed it by email.`,
  (p, n) => ` Ticket #${1000 + Math.floor(n() * 90000)}.`,
  (p) => ` Said so while using the ${p(DEVICES)}.`,
];

const QUESTIONS: Array<(p: Pick) => string> = [
  (p) => `what does the user like to drink, ${p(DRINKS)}?`,
  (p) => `favourite food ${p(FOODS)}`,
  (p) => `where does the user live, ${p(CITIES)}?`,
  (p) => `is the user allergic to ${p(ALLERGIES)}`,
  () => `which device does the user have for work`,
  (p) => `trip to ${p(CITIES)}`,
  (p) => `problem with the ${p(PRODUCTS)}`,
  (p) => `what hobbies does the user enjoy on weekends, ${p(HOBBIES)}?`,
  () => `when should we remind them to renew the subscription`,
  (p) => `who is ${p(NAMES)}`,
  () => `does the user have a pet`,
  () => `what is the user's job`,
];

export interface SyntheticMemory {
  ownerId: string;
  text: string;
  memoryType: SyntheticType;
  /** When what it says happened (long memories: the session's date), as an import would set it. */
  effectiveAt?: Date;
}

export const REGULAR_OWNERS = 1000;
export const HEAVY_OWNER = 'heavy-owner';
export const HEAVY_MEMORIES = 10_000;

export function ownerName(index: number): string {
  return `owner-${String(index).padStart(4, '0')}`;
}

function compose(rand: () => number): { text: string; memoryType: SyntheticType } {
  const pick: Pick = (list) => list[Math.floor(rand() * list.length)]!;
  const [memoryType, template] = pick(TEMPLATES);
  const subject = rand() < 0.5 ? '' : `${pick(NAMES)} `;
  const body = template(pick, rand) + (rand() < 0.6 ? pick(DETAILS)(pick, rand) : '');
  // "Ana prefers ..." or "Prefers ...": both shapes appear in real memory stores.
  const text = subject ? subject + body.charAt(0).toLowerCase() + body.slice(1) : body;
  return { text, memoryType };
}

/** The i-th memory spread over the regular owners (round robin). */
export function regularMemory(seed: number, i: number): SyntheticMemory {
  return { ownerId: ownerName(i % REGULAR_OWNERS), ...compose(prng(seedFor(seed, 1, i))) };
}

/** The i-th memory of the heavy owner. */
export function heavyMemory(seed: number, i: number): SyntheticMemory {
  return { ownerId: HEAVY_OWNER, ...compose(prng(seedFor(seed, 2, i))) };
}

/** Memory i of a write-throughput sample, in owners of its own so searches are not affected. */
export function writerMemory(seed: number, stream: number, i: number): SyntheticMemory {
  return {
    ownerId: `writer-${stream}-${i % 50}`,
    ...compose(prng(seedFor(seed, 100 + stream, i))),
  };
}

/** A deterministic list of search questions. */
export function questions(seed: number, count: number): string[] {
  const rand = prng(seedFor(seed, 3, 0));
  const pick: Pick = (list) => list[Math.floor(rand() * list.length)]!;
  return Array.from({ length: count }, () => pick(QUESTIONS)(pick));
}

/**
 * Long memories: one per chat session, as an app that stores a whole conversation as one memory
 * writes them. A session is a dated transcript of a few thousand characters (user and assistant
 * turns: a topic opened, facts from the templates above said along the way, small talk, a
 * closing), so the server's chunker splits each into several chunks. Deterministic like the rest.
 */
export const LONG_MEMORIES_PER_OWNER = 50;

export function longOwnerName(index: number): string {
  return `long-${String(index).padStart(4, '0')}`;
}

// prettier-ignore
const TOPICS = ['planning a trip', 'a billing question', 'weekend plans', 'a new job', 'moving house', 'a health check-up', 'a birthday party', 'learning a language', 'a product upgrade', 'a training plan', 'a family visit', 'a home renovation'];
// prettier-ignore
const OPENERS = ['Hi again, I wanted to pick up where we left off about', 'Quick one today, it is about', 'Can you help me think through', 'I have been meaning to ask you about', 'Morning! Let us talk about'];
// prettier-ignore
const ASSISTANT_TURNS = [
  'That makes sense. Could you tell me a bit more about what matters most to you here?',
  'Thanks for sharing that, I will keep it in mind for next time.',
  'Good to know. Would it help if I put together a short list of options?',
  'Understood. Let me summarise what we have so far before we go on.',
  'That sounds like a lot to juggle; we can take it one step at a time.',
  'Noted. Is there a date you would like me to remind you about this?',
  'I see. Did anything change since we last spoke about it?',
];
// prettier-ignore
const SMALL_TALK = [
  'Honestly the week has been busy, but I finally had a quiet evening yesterday.',
  'The weather here turned cold again, so I stayed in and read most of Sunday.',
  'I keep forgetting to write these things down, which is why I am telling you.',
  'Work was fine, nothing special, a few long meetings and a lot of email.',
  'I tried a new recipe last night and it turned out better than expected.',
  'My phone battery died twice today, so sorry if I drop off suddenly.',
  'We watched a documentary about the ocean and now I want to learn to dive.',
];
// prettier-ignore
const CLOSINGS = ['Thanks, that helps a lot. Talk soon!', 'Great, let us continue next week.', 'Perfect, I will get back to you when I know more.', 'Alright, that is all for today, bye!'];

/** The first session's day; session i of an owner is held 1 to 7 days after session i - 1. */
const FIRST_SESSION = Date.UTC(2024, 0, 8, 18, 0);
const DAY_MS = 86_400_000;

/**
 * Session `i` of long owner `owner`: between 2,000 and about 6,000 characters, dated (its
 * `effectiveAt`, and the transcript's first line) a few days after the owner's previous one.
 */
export function longMemory(seed: number, owner: number, i: number): SyntheticMemory {
  let at = FIRST_SESSION;
  for (let k = 0; k <= i; k += 1)
    at += DAY_MS * (1 + Math.floor(prng(seedFor(seed, 5000 + owner, k))() * 7));
  const effectiveAt = new Date(at);
  const rand = prng(seedFor(seed, 1000 + owner, i));
  const pick: Pick = (list) => list[Math.floor(rand() * list.length)]!;
  const user = NAMES[seedFor(seed, 9000, owner) % NAMES.length]!; // one person per owner
  const lines = [
    `Session ${i + 1} with ${user}, ${effectiveAt.getUTCDate()} ${MONTHS[effectiveAt.getUTCMonth()]} ${effectiveAt.getUTCFullYear()}.`,
    `${user}: ${pick(OPENERS)} ${pick(TOPICS)}.`,
  ];
  const target = 2000 + Math.floor(rand() * 4000);
  let length = lines.join('\n').length;
  while (length < target) {
    // Turns alternate, the user's first after the opener's answer.
    const turn =
      lines.length % 2 === 1
        ? `${user}: ${compose(rand).text} ${rand() < 0.5 ? pick(SMALL_TALK) : ''}`.trimEnd()
        : `Assistant: ${pick(ASSISTANT_TURNS)}`;
    lines.push(turn);
    length += turn.length + 1;
  }
  lines.push(`${user}: ${pick(CLOSINGS)}`);
  return {
    ownerId: longOwnerName(owner),
    text: lines.join('\n'),
    memoryType: 'event',
    effectiveAt,
  };
}

/** The i-th long memory of a data set of long owners with LONG_MEMORIES_PER_OWNER each. */
export function longMemoryAt(seed: number, i: number): SyntheticMemory {
  return longMemory(seed, Math.floor(i / LONG_MEMORIES_PER_OWNER), i % LONG_MEMORIES_PER_OWNER);
}

/**
 * Request i of a batch-write sample: a conversation of `size` user messages (one memory each,
 * extraction off) in an owner of its own, so the batch meets only its own items.
 */
export function batchConversation(seed: number, stream: number, i: number, size: number) {
  return {
    type: 'conversation',
    user_id: `batch-${stream}-${i}`,
    group_by: 'message',
    extract: false,
    messages: Array.from({ length: size }, (_, k) => ({
      role: 'user',
      content: compose(prng(seedFor(seed, 200 + stream, i * size + k))).text,
    })),
  };
}
