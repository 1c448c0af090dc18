/**
 * Writes docs/openapi.json, the OpenAPI document generated from the contract (`pnpm docs:openapi`).
 * A test (contract/test/openapi-file.test.ts) fails while the file differs from what this
 * writes, so a contract change comes with its regenerated document.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { buildOpenApiDocument } from '../src/openapi.js';

/** Where the document lives in the repository. */
export const OPENAPI_FILE = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));

/** The file's exact content: the document, formatted as `prettier --check` expects. */
export async function renderOpenApiFile(): Promise<string> {
  const options = (await resolveConfig(OPENAPI_FILE)) ?? {};
  return format(JSON.stringify(buildOpenApiDocument(), null, 2), {
    ...options,
    filepath: OPENAPI_FILE,
  });
}

async function main(): Promise<void> {
  const content = await renderOpenApiFile();
  const current = await readFile(OPENAPI_FILE, 'utf8').catch(() => undefined);
  const name = relative(process.cwd(), OPENAPI_FILE);
  if (current === content) {
    process.stdout.write(`${name} is up to date\n`);
    return;
  }
  await writeFile(OPENAPI_FILE, content);
  process.stdout.write(`wrote ${name}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
    process.exitCode = 1;
  });
}
