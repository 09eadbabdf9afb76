import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Files the docs pages and the dashboard load, all served by the gateway
 * itself from node_modules (swagger-ui-dist, redoc's standalone bundle,
 * chart.js's UMD build) and from `src/docs/static/`. No CDN: the pages work
 * offline and under a strict Content-Security-Policy.
 */

/** Page name -> asset file name -> absolute path on disk. */
export type AssetTable = Record<'docs' | 'redoc' | 'dashboard', Record<string, string>>;

/** Resolves every asset; throws naming the missing package when one is not installed. */
export function resolveDocAssets(): AssetTable {
  const require = createRequire(import.meta.url);
  const dirOf = (specifier: string) => {
    try {
      return dirname(require.resolve(specifier));
    } catch {
      throw new Error(`${specifier.split('/')[0]} is not installed (run npm ci): the docs pages need it`);
    }
  };
  const swagger = dirOf('swagger-ui-dist/package.json');
  const redoc = join(dirOf('redoc/package.json'), 'bundles');
  // chart.js exports only its entry points; the UMD build sits beside the CommonJS one.
  const chart = dirOf('chart.js');
  const ownStatic = join(import.meta.dirname, 'static');

  const table: AssetTable = {
    docs: {
      'swagger-ui.css': join(swagger, 'swagger-ui.css'),
      'swagger-ui-bundle.js': join(swagger, 'swagger-ui-bundle.js'),
      'favicon-32x32.png': join(swagger, 'favicon-32x32.png'),
      'swagger-init.js': join(ownStatic, 'swagger-init.js'),
      'key-prompt.js': join(ownStatic, 'key-prompt.js'),
    },
    redoc: {
      'redoc.standalone.js': join(redoc, 'redoc.standalone.js'),
      'redoc-init.js': join(ownStatic, 'redoc-init.js'),
      'key-prompt.js': join(ownStatic, 'key-prompt.js'),
    },
    dashboard: {
      'chart.umd.min.js': join(chart, 'chart.umd.min.js'),
      'dashboard.js': join(ownStatic, 'dashboard.js'),
      'dashboard.css': join(ownStatic, 'dashboard.css'),
      'key-prompt.js': join(ownStatic, 'key-prompt.js'),
    },
  };
  for (const files of Object.values(table)) {
    for (const path of Object.values(files)) {
      if (!existsSync(path)) throw new Error(`docs asset missing: ${path} (run npm ci)`);
    }
  }
  return table;
}

/**
 * Vendor code that would reach out to the internet on its own, with the
 * string to replace: ReDoc's sidebar loads its vendor logo from a CDN (no
 * option turns it off). The image hides itself when it cannot load, so an
 * empty inline SVG keeps the page identical and the browser offline.
 */
export const ASSET_REWRITES: Readonly<Record<string, ReadonlyArray<readonly [string, string]>>> = {
  'redoc.standalone.js': [
    ['https://cdn.redoc.ly/redoc/logo-mini.svg', "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"],
  ],
};

/** URL path of an asset: `/<page>/assets/<file>`. */
export function assetPath(page: keyof AssetTable, file: string): string {
  return `/${page}/assets/${file}`;
}

/**
 * Paths to open without a key when the operator opened a page with
 * PUBLIC_PATHS: its assets (public code, no data) follow the page, so
 * `PUBLIC_PATHS=/docs` is enough for the page itself to load.
 */
export function publicAssetPaths(publicPaths: readonly string[], assets: AssetTable): string[] {
  const out: string[] = [];
  for (const page of Object.keys(assets) as (keyof AssetTable)[]) {
    if (!publicPaths.includes(`/${page}`)) continue;
    for (const file of Object.keys(assets[page])) out.push(assetPath(page, file));
  }
  return out;
}
