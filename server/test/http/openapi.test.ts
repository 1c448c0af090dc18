import SwaggerParser from '@apidevtools/swagger-parser';
import { contract, listRoutes } from '@mnemo/contract';
import request from 'supertest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { describeDb } from '../support/db.js';

describeDb('GET /v1/openapi.json', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('serves a valid OpenAPI document that lists every contract route', async () => {
    const res = await request(t.app).get('/v1/openapi.json');
    expect(res.status).toBe(200);
    const document = res.body;
    // validate() throws on any schema violation; it dereferences a copy.
    await SwaggerParser.validate(structuredClone(document));
    expect(document.info.version).toBe('1.0.0');

    const routes = listRoutes(contract);
    expect(routes.length).toBeGreaterThanOrEqual(10);
    for (const route of routes) {
      const openApiPath = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
      expect(
        document.paths[openApiPath]?.[route.method.toLowerCase()],
        `${route.method} ${route.path}`,
      ).toBeDefined();
    }
    const operations = Object.values(document.paths as Record<string, object>).flatMap((p) =>
      Object.keys(p),
    );
    expect(operations).toHaveLength(routes.length);
    expect(document.paths['/v1/memories'].post.security).toEqual([
      { bearerAuth: [] },
      { apiKeyHeader: [] },
      { dashboardSession: [] },
    ]);
    expect(document.paths['/healthz'].get.security).toEqual([]);
  });
});
