import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE, renderOpenApiFile } from '../scripts/openapi.js';

describe('docs/openapi.json', () => {
  it('is the document the contract generates (regenerate with `pnpm docs:openapi`)', async () => {
    const committed = readFileSync(OPENAPI_FILE, 'utf8');
    const generated = await renderOpenApiFile();
    // Compared as data first, for a readable diff; then byte for byte (formatting included).
    expect(JSON.parse(committed), 'docs/openapi.json is stale: run `pnpm docs:openapi`').toEqual(
      JSON.parse(generated),
    );
    expect(committed, 'docs/openapi.json is not formatted: run `pnpm docs:openapi`').toBe(
      generated,
    );
  });
});
