import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { Router, type Request, type Response } from 'express';
import { ASSET_REWRITES, assetPath, type AssetTable } from '../api-docs/assets.ts';
import { PAGE_CSP, redocPage, swaggerPage } from '../api-docs/pages.ts';

/** Options of {@link docsRouter}. */
export interface DocsRouterOptions {
  /** The OpenAPI document, built once by the composition root. */
  document: object;
  assets: AssetTable;
  /** Title of the pages. @defaultValue "LLM Gateway" */
  title?: string;
}

/** Assets change only with a deploy; they are public code, yet sit behind the key like everything else. */
const ASSET_CACHE = 'private, max-age=3600';

/**
 * `GET /openapi.json`, `GET /docs` (Swagger UI) and `GET /redoc` (ReDoc),
 * with their assets under `/docs/assets/*` and `/redoc/assets/*`, all served
 * from this process (no CDN).
 */
export function docsRouter(options: DocsRouterOptions): Router {
  const router = Router();
  const title = options.title ?? 'LLM Gateway';
  const documentJson = JSON.stringify(options.document);
  const pages = { docs: swaggerPage(title), redoc: redocPage(title) };

  router.get('/openapi.json', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json').send(documentJson);
  });
  for (const name of ['docs', 'redoc'] as const) {
    router.get(`/${name}`, (req, res) => sendPage(req, res, name, pages[name]));
    mountAssets(router, name, options.assets[name]);
  }
  return router;
}

/** Sends one of the HTML pages with the CSP; `/docs/` redirects to `/docs` so relative URLs resolve. */
export function sendPage(req: Request, res: Response, name: string, html: string): void {
  if (req.path.endsWith('/')) {
    res.redirect(301, `../${name}`);
    return;
  }
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-cache');
  res.type('text/html').send(html);
}

/**
 * One exact route per asset: nothing else on disk is reachable. Files with
 * {@link ASSET_REWRITES} are rewritten once, here, and served from memory.
 */
export function mountAssets(router: Router, page: keyof AssetTable, files: Record<string, string>): void {
  const headers = { 'Cache-Control': ASSET_CACHE, 'X-Content-Type-Options': 'nosniff' };
  for (const [file, path] of Object.entries(files)) {
    const rewrites = ASSET_REWRITES[file];
    if (rewrites) {
      let text = readFileSync(path, 'utf8');
      for (const [from, to] of rewrites) text = text.replaceAll(from, to);
      const body = Buffer.from(text);
      router.get(assetPath(page, file), (_req, res) => {
        res.set(headers).type(extname(file)).send(body);
      });
      continue;
    }
    router.get(assetPath(page, file), (_req, res, next) => {
      res.sendFile(path, { headers }, (err) => {
        if (err && !res.headersSent) next(err);
      });
    });
  }
}
