/**
 * The runnable examples of the README and docs/ pages: parsing them, turning their curl line into
 * a request, and showing a real response the way the page does. Used by readme-examples.test.ts.
 *
 * An example is an HTML comment followed by two fenced blocks:
 *
 *     <!-- example: write-memory; MEMORY_ID=memory_id -->
 *     ```sh
 *     curl -s http://127.0.0.1:8787/v1/memories -H "Authorization: Bearer $MNEMO_API_KEY" ...
 *     ```
 *     ```json
 *     { "memory_id": "…", ... }
 *     ```
 *
 * After the name, `VAR=path` entries (separated by `;`) capture a value of the real response body
 * (a dotted path, `results.0.memory_id`) as `$VAR` for the examples below. With `curl -i` the
 * response block is `http`: the status line, the headers the README chooses to show, a blank line
 * and the body.
 */
import { STATUS_CODES } from 'node:http';

/** What the README shows in place of a value that changes from run to run. */
export const ELIDED = '…';

export interface FencedBlock {
  /** Offsets of the whole block, fences included, in the README text. */
  start: number;
  end: number;
  lang: string;
  content: string;
}

export interface ReadmeExample {
  name: string;
  captures: Array<{ variable: string; path: string }>;
  request: FencedBlock;
  /** Missing for a new example until the README is regenerated. */
  response?: FencedBlock;
}

// A marker is a line of its own (a mention in prose or inline code is not one).
const MARKER = /^<!-- example: ([a-z0-9-]+)((?:;\s*[A-Z_][A-Z0-9_]*=[\w.]+)*)\s*-->$/gm;
const FENCE = /^```([\w-]*)\n([\s\S]*?)\n?```/;

function blockAt(text: string, from: number): FencedBlock | undefined {
  const skipped = /^[ \t]*\n?(?:[ \t]*\n)*/.exec(text.slice(from))?.[0].length ?? 0;
  const start = from + skipped;
  const match = FENCE.exec(text.slice(start));
  if (!match) return undefined;
  return { start, end: start + match[0].length, lang: match[1] ?? '', content: match[2] ?? '' };
}

/** Every `<!-- example: … -->` of the README, in document order. */
export function parseExamples(readme: string): ReadmeExample[] {
  const examples: ReadmeExample[] = [];
  for (const marker of readme.matchAll(MARKER)) {
    const name = marker[1] ?? '';
    const captures = (marker[2] ?? '')
      .split(';')
      .map((entry) => entry.trim())
      .filter(Boolean)
      .map((entry) => {
        const [variable = '', path = ''] = entry.split('=');
        return { variable, path };
      });
    const request = blockAt(readme, marker.index + marker[0].length);
    if (!request) throw new Error(`example ${name}: no fenced request block after its marker`);
    // The response block follows the request with nothing but blank lines between them.
    const response = blockAt(readme, request.end);
    examples.push({ name, captures, request, ...(response ? { response } : {}) });
  }
  return examples;
}

// ---------------------------------------------------------------------------------------------
// curl

export interface ExampleRequest {
  method: string;
  /** Path and query, without the origin. */
  path: string;
  headers: Array<[string, string]>;
  body?: string;
  /** `curl -i`: the README shows the status line and headers too. */
  include: boolean;
}

function expand(word: string, variables: ReadonlyMap<string, string>): string {
  return word.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => {
    const value = variables.get(name);
    if (value === undefined) throw new Error(`unknown variable $${name}`);
    return value;
  });
}

/**
 * Splits the small shell subset the examples use into words: single quotes (literal), double
 * quotes and bare words (with `$VAR` expansion), adjacent parts joined, `\` line continuations,
 * `#` comment lines. Anything else (pipes, `;`, redirections) is refused rather than misread.
 */
export function shellWords(script: string, variables: ReadonlyMap<string, string>): string[] {
  const text = script
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const words: string[] = [];
  let current: string | undefined;
  let i = 0;
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (/\s/.test(ch)) {
      if (current !== undefined) words.push(current);
      current = undefined;
      i += 1;
      continue;
    }
    current ??= '';
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated single quote');
      current += text.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      let j = i + 1;
      let quoted = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\' && '"\\`'.includes(text[j + 1] ?? '')) j += 1;
        quoted += text[j];
        j += 1;
      }
      if (j >= text.length) throw new Error('unterminated double quote');
      current += expand(quoted, variables);
      i = j + 1;
    } else if ('|;&<>`()'.includes(ch)) {
      throw new Error(`unsupported shell syntax ${JSON.stringify(ch)} in an example`);
    } else {
      let j = i;
      while (j < text.length && !/[\s'"|;&<>`()]/.test(text[j] ?? '')) j += 1;
      current += expand(text.slice(i, j), variables);
      i = j;
    }
  }
  if (current !== undefined) words.push(current);
  return words;
}

/** The request of one `curl` command (flags: -s -S -i -X -H -d and their long forms). */
export function parseCurl(script: string, variables: ReadonlyMap<string, string>): ExampleRequest {
  const words = shellWords(script, variables);
  if (words[0] !== 'curl') throw new Error(`an example request must be one curl command`);
  let method: string | undefined;
  let url: string | undefined;
  let body: string | undefined;
  let include = false;
  const headers: Array<[string, string]> = [];
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] ?? '';
    const value = () => {
      const next = words[i + 1];
      if (next === undefined) throw new Error(`${word} needs a value`);
      i += 1;
      return next;
    };
    if (word === '-X' || word === '--request') method = value();
    else if (word === '-H' || word === '--header') {
      const header = value();
      const colon = header.indexOf(':');
      if (colon < 1) throw new Error(`malformed header ${header}`);
      headers.push([header.slice(0, colon).trim(), header.slice(colon + 1).trim()]);
    } else if (word === '-d' || word === '--data' || word === '--data-raw') body = value();
    else if (word === '--include') include = true;
    else if (word === '--silent' || word === '--show-error') continue;
    else if (/^-[sSi]+$/.test(word)) include ||= word.includes('i');
    else if (/^https?:\/\//.test(word) && url === undefined) url = word;
    else throw new Error(`unsupported curl argument ${word}`);
  }
  if (url === undefined) throw new Error('no URL in the curl command');
  const parsed = new URL(url);
  return {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    path: parsed.pathname + parsed.search,
    headers,
    ...(body === undefined ? {} : { body }),
    include,
  };
}

// ---------------------------------------------------------------------------------------------
// responses

const VOLATILE: RegExp[] = [
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, // ids, generated request ids
  /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})/g, // timestamps
  /\b[0-9a-f]{64}\b/g, // hashes
  /mnemo_[A-Za-z0-9_-]{32}/g, // API keys
];

/** A string with every id, timestamp, hash and key in it replaced by {@link ELIDED}. */
export function elideString(value: string): string {
  return VOLATILE.reduce((text, pattern) => text.replace(pattern, ELIDED), value);
}

/** A JSON value with its volatile strings elided (see {@link elideString}). */
export function elide(value: unknown): unknown {
  if (typeof value === 'string') return elideString(value);
  if (Array.isArray(value)) return value.map(elide);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, elide(entry)]));
  }
  return value;
}

/**
 * How far a search score may be from the README's. Scores vary between runs of the same example:
 * a write and its extracted children share one `created_at`, so which of them is another's
 * episode neighbour (and shares its relevance) follows their random ids. Observed spread on the
 * README's search: 0.08. A score that drifted for real (0.97 shown, 0.48 given) still fails.
 */
export const SCORE_TOLERANCE = 0.1;

/** `actual` with each numeric `score` within `tolerance` of the README's replaced by the README's. */
export function alignScores(actual: unknown, shown: unknown, tolerance = SCORE_TOLERANCE): unknown {
  if (Array.isArray(actual)) {
    return actual.map((entry, index) =>
      alignScores(entry, Array.isArray(shown) ? shown[index] : undefined, tolerance),
    );
  }
  if (actual && typeof actual === 'object') {
    const other = (shown && typeof shown === 'object' ? shown : {}) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(actual).map(([key, entry]) => {
        const expected = other[key];
        if (
          key === 'score' &&
          typeof entry === 'number' &&
          typeof expected === 'number' &&
          Math.abs(entry - expected) <= tolerance
        ) {
          return [key, expected];
        }
        return [key, alignScores(entry, expected, tolerance)];
      }),
    );
  }
  return actual;
}

/**
 * JSON as the README prints it (as prettier would): a value goes on one line when it fits in
 * `width` at its indentation, otherwise one entry per line.
 */
export function compactJson(value: unknown, width = 100, indent = 0): string {
  const flat = oneLine(value);
  if (indent + flat.length <= width || value === null || typeof value !== 'object') return flat;
  const pad = ' '.repeat(indent + 2);
  const entries = Array.isArray(value)
    ? value.map((entry) => pad + compactJson(entry, width, indent + 2))
    : Object.entries(value).map(([key, entry]) => {
        const prefix = `${JSON.stringify(key)}: `;
        return pad + prefix + compactJson(entry, width - prefix.length, indent + 2);
      });
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  return `${open}\n${entries.join(',\n')}\n${' '.repeat(indent)}${close}`;
}

function oneLine(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(oneLine).join(', ')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`);
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return JSON.stringify(value);
}

/** A response as the README shows it, before elision and rendering. */
export interface ShownResponse {
  /** `HTTP/1.1 401 Unauthorized`, for `curl -i` examples. */
  status?: string;
  headers?: Record<string, string>;
  body: unknown;
}

function parseBody(text: string): unknown {
  if (text.trim() === '') return '';
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What the README's response block says. */
export function readShown(block: FencedBlock): ShownResponse {
  if (block.lang !== 'http') return { body: parseBody(block.content) };
  const [head = '', ...rest] = block.content.split(/\n\n/);
  const [status = '', ...headerLines] = head.split('\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  return { status, headers, body: parseBody(rest.join('\n\n')) };
}

export interface RealResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * The real response in the README's terms, volatile values elided: for `curl -i` the status line
 * and the headers `headerNames` lists (those the README shows), else the body only.
 */
export function showReal(
  response: RealResponse,
  include: boolean,
  headerNames: string[],
): ShownResponse {
  const body = elide(parseBody(response.text));
  if (!include) return { body };
  const headers = Object.fromEntries(
    headerNames.map((name) => {
      const value = response.headers[name];
      return [name, elideString(Array.isArray(value) ? value.join(', ') : (value ?? '(absent)'))];
    }),
  );
  const status = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`.trim();
  return { status, headers, body };
}

/** The fenced response block for a shown response. */
export function renderBlock(shown: ShownResponse): string {
  const body = typeof shown.body === 'string' ? shown.body : compactJson(shown.body);
  if (shown.status === undefined) return '```json\n' + body + '\n```';
  const headers = Object.entries(shown.headers ?? {}).map(([name, value]) => `${name}: ${value}`);
  return '```http\n' + [shown.status, ...headers].join('\n') + '\n\n' + body + '\n```';
}

/** The value at a dotted path (`results.0.memory_id`) of a JSON value. */
export function valueAt(value: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (node, key) =>
        node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined,
      value,
    );
}
