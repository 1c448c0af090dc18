/**
 * The README's request/response examples, run against the real app (a fresh database, the
 * default configuration) in document order, one tenant whose key is `$MNEMO_API_KEY`. Each
 * `<!-- example: name -->` block's curl command is sent and the response shown under it must
 * equal the real one, ids, timestamps, hashes and keys elided as `…` and search scores within
 * SCORE_TOLERANCE (see ./readme.ts for why they vary).
 * The format is described in ./readme.ts.
 *
 * After a deliberate change of behaviour, rewrite the README's response blocks from the real
 * responses (and review the diff):
 *
 *     MNEMO_UPDATE_README=1 npx vitest run --project pglite server/test/docs/readme-examples.test.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
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
  type ShownResponse,
} from './readme.js';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));
const UPDATE = process.env.MNEMO_UPDATE_README === '1';
/** Headers a new `curl -i` example shows until the README picks others. */
const DEFAULT_SHOWN_HEADERS = ['x-request-id'];

const readme = readFileSync(README, 'utf8');
const examples = parseExamples(readme);

// Regeneration writes the README once, from one backend.
const suite = UPDATE && testBackend() !== 'pglite' ? describe.skip : describeDb;

suite('README examples', () => {
  let t: TestApp;
  const variables = new Map<string, string>();
  const rewrites: Array<{ start: number; end: number; text: string }> = [];

  beforeAll(async () => {
    t = await createTestApp();
    variables.set('MNEMO_API_KEY', t.tenant.apiKey);
  });

  afterAll(async () => {
    await t?.close();
    if (UPDATE) await rewriteReadme(rewrites);
  });

  it('has examples with unique names', () => {
    expect(examples.length).toBeGreaterThanOrEqual(8);
    const names = examples.map((example) => example.name);
    expect(new Set(names).size, names.join(', ')).toBe(names.length);
  });

  for (const example of examples) {
    it(`${example.name}: the README shows the real response`, async () => {
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
        // Scores within the tolerance keep the README's value: no churn from run to run.
        const block = renderBlock(alignScores(real, shown) as ShownResponse);
        rewrites.push(
          example.response
            ? { start: example.response.start, end: example.response.end, text: block }
            : { start: example.request.end, end: example.request.end, text: `\n\n${block}` },
        );
        return;
      }
      expect(shown, 'no response block: run with MNEMO_UPDATE_README=1').toBeDefined();
      expect(
        alignScores(real, shown),
        `README example "${example.name}" drifted from the server; if the change is intended, ` +
          'regenerate with MNEMO_UPDATE_README=1 (see this file) and review the diff',
      ).toEqual(shown);
    });
  }
});

async function rewriteReadme(
  rewrites: Array<{ start: number; end: number; text: string }>,
): Promise<void> {
  let text = readme;
  for (const { start, end, text: block } of [...rewrites].sort((a, b) => b.start - a.start)) {
    text = text.slice(0, start) + block + text.slice(end);
  }
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(README)) ?? {};
  text = await prettier.format(text, { ...options, filepath: README });
  if (text !== readme) writeFileSync(README, text);
}
