import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express, { type RequestHandler, type Router } from 'express';

/**
 * The built console: `dist/` of the `@mnemo/web` package the server depends on, so the
 * workspace link and a `pnpm deploy` folder both find it (`pnpm --filter @mnemo/web build`).
 */
export const DEFAULT_CONSOLE_DIR = join(
  dirname(createRequire(import.meta.url).resolve('@mnemo/web/package.json')),
  'dist',
);

export const CONSOLE_PATH = '/console';

/**
 * Serves the web console at /console from the same origin as the API (no CORS). The HTML is
 * never cached (it names the hashed assets); assets are immutable. A missing build answers a
 * short page saying how to build it.
 */
export function consoleRoutes({ dir = DEFAULT_CONSOLE_DIR }: { dir?: string } = {}): Router {
  // Strict: `/console` redirects to `/console/` and must not match it (a loop otherwise).
  const router = express.Router({ strict: true });
  const securityHeaders: RequestHandler = (_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    next();
  };
  router.get(CONSOLE_PATH, (_req, res) => res.redirect(301, `${CONSOLE_PATH}/`));
  // The server's root points somewhere useful: a browser goes to the console, a program reads
  // where the console, the API description and health are.
  router.get('/', (req, res) => {
    if (req.accepts(['json', 'html']) === 'html') return res.redirect(302, `${CONSOLE_PATH}/`);
    res.json({
      name: 'Mnemo',
      console: `${CONSOLE_PATH}/`,
      openapi: '/v1/openapi.json',
      health: '/healthz',
    });
  });
  router.use(
    CONSOLE_PATH,
    securityHeaders,
    express.static(dir, {
      index: 'index.html',
      fallthrough: true,
      setHeaders: (res, path) => {
        res.setHeader(
          'Cache-Control',
          path.endsWith('.html') ? 'no-cache' : 'public, max-age=31536000, immutable',
        );
      },
    }),
    (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      if (existsSync(`${dir}/index.html`)) return next();
      res
        .status(503)
        .type('text/plain')
        .send(
          'The console is not built. Run: pnpm --filter @mnemo/web build (pnpm start does it).',
        );
    },
  );
  return router;
}
