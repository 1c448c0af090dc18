/**
 * The generated OpenAPI document under Redocly's `recommended` ruleset (the rules `redocly lint`
 * applies by default): no error, and no warning beyond the ones listed here with their reason.
 * Also checks what code generators need from it: named component schemas that the operations
 * reference, and a `servers` entry.
 */
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/openapi.js';
import { OPENAPI_FILE, renderOpenApiFile } from '../scripts/openapi.js';

/** Warnings the document keeps on purpose: rule id and the pointer it is reported at. */
const ACCEPTED_WARNINGS = [
  // The legacy billing portal is deprecated and answers 410 GONE only (checkout replaced it).
  'operation-2xx-response #/paths/~1v1~1billing~1portal/post/responses',
];

interface Operation {
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
  responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}

function describeProblem(problem: NormalizedProblem): string {
  return `${problem.ruleId} ${problem.location[0]?.pointer ?? ''}`;
}

describe('the OpenAPI document under Redocly recommended', () => {
  it('has no error and only the accepted warnings', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: await renderOpenApiFile(),
      absoluteRef: OPENAPI_FILE,
      config,
    });
    const found = (severity: NormalizedProblem['severity']) =>
      problems
        .filter((problem) => problem.severity === severity && !problem.ignored)
        .map((problem) => `${describeProblem(problem)}: ${problem.message}`);
    expect(found('error')).toEqual([]);
    expect(found('warn').map((line) => line.slice(0, line.indexOf(':')))).toEqual(
      ACCEPTED_WARNINGS,
    );
  }, 60_000);

  it('names its schemas: operations reference components instead of inlining them', () => {
    const document = buildOpenApiDocument();
    expect(document.servers?.[0]?.url).toBe('http://127.0.0.1:8787');
    const schemas = document.components?.schemas ?? {};
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'ErrorEnvelope',
        'MemoryInsertPayload',
        'MemoryInsertResponse',
        'Memory',
        'SearchPayload',
        'SearchResponse',
        'ContextResponse',
        'UsageResponse',
      ]),
    );
    const createMemory = document.paths['/v1/memories']?.post;
    expect(createMemory?.requestBody).toMatchObject({
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/MemoryInsertPayload' } },
      },
    });
    expect(createMemory?.responses['200']).toMatchObject({
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/MemoryInsertResponse' } },
      },
    });
    expect(createMemory?.responses['401']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    });

    // Every request body and response with content is a named type.
    const inline: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations as Record<string, Operation>)) {
        const bodies = [
          ['body', operation.requestBody?.content],
          ...Object.entries(operation.responses ?? {}).map(([status, r]) => [status, r.content]),
        ] as Array<[string, Record<string, { schema?: { $ref?: string } }> | undefined]>;
        for (const [where, content] of bodies) {
          for (const media of Object.values(content ?? {})) {
            if (media.schema?.$ref === undefined) inline.push(`${method} ${path} ${where}`);
          }
        }
      }
    }
    expect(inline).toEqual([]);

    // Every reference resolves, and every component is referenced from somewhere.
    const text = JSON.stringify(document);
    const referenced = new Set(
      [...text.matchAll(/"#\/components\/schemas\/([A-Za-z0-9]+)"/g)].map((match) => match[1]),
    );
    expect([...referenced].filter((name) => !(name! in schemas))).toEqual([]);
    expect(Object.keys(schemas).filter((name) => !referenced.has(name))).toEqual([]);
  });

  it('lets a discriminator select each member of a union by name', () => {
    const schemas = buildOpenApiDocument().components?.schemas ?? {};
    expect(schemas.IngestPayload).toMatchObject({
      discriminator: {
        propertyName: 'type',
        mapping: {
          memory: '#/components/schemas/IngestPayloadMemory',
          conversation: '#/components/schemas/IngestPayloadConversation',
          document: '#/components/schemas/IngestPayloadDocument',
        },
      },
    });
  });
});
