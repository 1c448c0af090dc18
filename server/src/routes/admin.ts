import type { IRouter } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { adminAuth } from '../http/admin-auth.js';
import type { RouteTable } from '../http/route-table.js';
import { validationError, zodDetails } from '../http/validation.js';
import { runHygiene } from '../jobs/hygiene.js';

const HygieneQuery = z
  .object({
    dry_run: z
      .enum(['true', 'false', '1', '0'])
      .default('false')
      .transform((v) => v === 'true' || v === '1'),
    limit: z.coerce
      .number({ invalid_type_error: 'must be an integer' })
      .int()
      .min(1)
      .max(10_000)
      .default(1000),
    workspace_id: z.string().uuid().optional(),
  })
  .strict();

/** Operator routes (not in the published contract), guarded by the admin token. */
export function mountAdminRoutes(target: IRouter, table: RouteTable, deps: AppDeps): void {
  const guard = adminAuth({ token: deps.config.adminToken });
  table.add('POST', '/admin/memory-hygiene');
  target.post('/admin/memory-hygiene', guard, async (req, res, next) => {
    try {
      const parsed = HygieneQuery.safeParse(req.query);
      if (!parsed.success) throw validationError(zodDetails(parsed.error, 'query'));
      const report = await runHygiene(deps.database.db, {
        dryRun: parsed.data.dry_run,
        limit: parsed.data.limit,
        ...(parsed.data.workspace_id ? { workspaceId: parsed.data.workspace_id } : {}),
        nearThreshold: deps.config.dedupe.nearThreshold,
      });
      res.json(report);
    } catch (error) {
      next(error);
    }
  });
}
