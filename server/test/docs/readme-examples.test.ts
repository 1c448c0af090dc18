/**
 * The request/response examples of the README and of every page in docs/, run against the real
 * app (a fresh database, the default configuration). Each page that holds examples gets its own
 * server and tenant (whose key is `$MNEMO_API_KEY`), and its examples run in document order.
 * Each `<!-- example: name -->` block's curl command is sent and the response shown under it must
 * equal the real one, ids, timestamps, hashes and keys elided as `…` and search scores within
 * SCORE_TOLERANCE (see ./readme.ts for why they vary). The format is described in ./readme.ts.
 *
 * After a deliberate change of behaviour, rewrite the pages' response blocks from the real
 * responses (and review the diff):
 *
 *     MNEMO_UPDATE_DOCS=1 npx vitest run --project pglite server/test/docs/readme-examples.test.ts
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb, testBackend } from '../support/db.js';
import {
  alignScores,
  parseCurl,
  parseExamples,
  readShown,
  renderBlock,
  showReal,
  valueAt,
  type ReadmeExample,
  type ShownResponse,
} from './readme.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const UPDATE = process.env.MNEMO_UPDATE_DOCS === '1';
/** Headers a new `curl -i` example shows until the page picks others. */
const DEFAULT_SHOWN_HEADERS = ['x-request-id'];

interface DocPage {
  /** Relative to the repository root: `README.md`, `docs/api-guide.md`. */
  name: string;
  path: string;
  text: string;
  examples: ReadmeExample[];
}

/** The README and every Markdown page of docs/ (not docs/spec, the user's spec), by name. */
function docPages(): DocPage[] {
  const docs = join(ROOT, 'docs');
  const paths = [
    join(ROOT, 'README.md'),
    ...readdirSync(docs)
      .filter((file) => file.endsWith('.md'))
      .sort()
      .map((file) => join(docs, file)),
  ];
  return paths.map((path) => {
    const text = readFileSync(path, 'utf8');
    return { name: relative(ROOT, path), path, text, examples: parseExamples(text) };
  });
}

const pages = docPages();
const pagesWithExamples = pages.filter((page) => page.examples.length > 0);

// Regeneration writes the pages once, from one backend.
const suite = UPDATE && testBackend() !== 'pglite' ? describe.skip : describeDb;

describe('documentation examples', () => {
  it('are found in the README and in docs/, with unique names on each page', () => {
    const names = pagesWithExamples.map((page) => page.name);
    expect(names).toContain('README.md');
    expect(names).toContain('docs/api-guide.md');
    expect(pagesWithExamples.flatMap((page) => page.examples).length).toBeGreaterThanOrEqual(12);
    for (const page of pagesWithExamples) {
      const exampleNames = page.examples.map((example) => example.name);
      expect(new Set(exampleNames).size, `${page.name}: ${exampleNames.join(', ')}`).toBe(
        exampleNames.length,
      );
    }
  });
});

for (const page of pagesWithExamples) {
  suite(`${page.name} examples`, () => {
    let t: TestApp;
    const variables = new Map<string, string>();
    const rewrites: Array<{ start: number; end: number; text: string }> = [];

    beforeAll(async () => {
      t = await createTestApp();
      variables.set('MNEMO_API_KEY', t.tenant.apiKey);
    });

    afterAll(async () => {
      await t?.close();
      if (UPDATE) await rewritePage(page, rewrites);
    });

    for (const example of page.examples) {
      it(`${example.name}: the page shows the real response`, async () => {
        const sent = parseCurl(example.request.content, variables);
        let call = request(t.app)[sent.method.toLowerCase() as 'get'](sent.path);
        for (const [name, value] of sent.headers) call = call.set(name, value);
        if (sent.body !== undefined) call = call.send(sent.body);
        const response = await call;

        for (const { variable, path } of example.captures) {
          const value = valueAt(response.body, path);
          expect(value, `${variable}=${path}`).toBeTypeOf('string');
          variables.set(variable, value as string);
        }

        const shown: ShownResponse | undefined = example.response
          ? readShown(example.response)
          : undefined;
        const headerNames = Object.keys(shown?.headers ?? {});
        const real = showReal(
          response,
          sent.include,
          headerNames.length > 0 ? headerNames : DEFAULT_SHOWN_HEADERS,
        );

        if (UPDATE) {
          // Scores within the tolerance keep the page's value: no churn from run to run.
          const block = renderBlock(alignScores(real, shown) as ShownResponse);
          rewrites.push(
            example.response
              ? { start: example.response.start, end: example.response.end, text: block }
              : { start: example.request.end, end: example.request.end, text: `\n\n${block}` },
          );
          return;
        }
        expect(shown, 'no response block: run with MNEMO_UPDATE_DOCS=1').toBeDefined();
        expect(
          alignScores(real, shown),
          `${page.name} example "${example.name}" drifted from the server; if the change is intended, ` +
            'regenerate with MNEMO_UPDATE_DOCS=1 (see this file) and review the diff',
        ).toEqual(shown);
      });
    }
  });
}

async function rewritePage(
  page: DocPage,
  rewrites: Array<{ start: number; end: number; text: string }>,
): Promise<void> {
  let text = page.text;
  for (const { start, end, text: block } of [...rewrites].sort((a, b) => b.start - a.start)) {
    text = text.slice(0, start) + block + text.slice(end);
  }
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(page.path)) ?? {};
  text = await prettier.format(text, { ...options, filepath: page.path });
  if (text !== page.text) writeFileSync(page.path, text);
}
