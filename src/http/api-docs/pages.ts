/**
 * The HTML of /docs, /redoc and /dashboard. Every URL in them is relative
 * (`docs/assets/...`, `openapi.json`, `stats`), so the pages also work when the
 * gateway sits under a path prefix behind a proxy. No inline script: the
 * pages are served with {@link PAGE_CSP}.
 */

/**
 * Content-Security-Policy of the pages: only this origin may serve scripts
 * and be fetched, so a page cannot reach a CDN even by accident. ReDoc and
 * Swagger UI style elements inline and ReDoc runs its search in a blob
 * worker.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

export function swaggerPage(title: string): string {
  return page(
    `${title} · Swagger UI`,
    `<link rel="stylesheet" href="docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">`,
    `<div id="swagger-ui"></div>
<script src="docs/assets/key-prompt.js"></script>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/swagger-init.js"></script>`,
  );
}

export function redocPage(title: string): string {
  return page(
    `${title} · ReDoc`,
    // An inline empty icon: otherwise the browser asks for /favicon.ico, a 404.
    '<link rel="icon" href="data:,">\n<style>body { margin: 0; padding: 0; }</style>',
    `<div id="redoc"></div>
<script src="redoc/assets/key-prompt.js"></script>
<script src="redoc/assets/redoc.standalone.js"></script>
<script src="redoc/assets/redoc-init.js"></script>`,
  );
}

export function dashboardPage(title: string): string {
  const chart = (id: string) => `<div class="chart"><canvas id="${id}"></canvas></div>`;
  return page(
    `${title} · Dashboard`,
    '<link rel="icon" href="data:,">\n<link rel="stylesheet" href="dashboard/assets/dashboard.css">',
    `<header><h1>${title}</h1><a href="docs">API docs</a><a href="redoc">Reference</a><span id="status">Loading…</span></header>
<main>
<section class="tiles">
<div class="tile"><span>Total requests (/v1)</span><strong id="total-requests">–</strong></div>
<div class="tile"><span>Requests throttled</span><strong id="requests-throttled">–</strong></div>
<div class="tile"><span>Exact cache hit rate</span><strong id="exact-hit-rate">–</strong></div>
<div class="tile"><span>Semantic cache hit rate</span><strong id="semantic-hit-rate">–</strong></div>
<div class="tile"><span>Spend today (issued keys)</span><strong id="spend-today">–</strong></div>
</section>
<section class="charts">
${chart('chart-requests')}
${chart('chart-cache')}
${chart('chart-provider-requests')}
${chart('chart-provider-tokens')}
${chart('chart-provider-latency')}
${chart('chart-queue-depth')}
${chart('chart-cooldowns')}
</section>
<table><thead><tr><th>Top keys (masked)</th><th>Requests</th></tr></thead><tbody id="top-users"></tbody></table>
<table><thead><tr><th>Spend per key (masked)</th><th>Owner</th><th>Team</th><th>Requests</th><th>Tokens</th><th>Today</th><th>Total</th></tr></thead><tbody id="key-spend"></tbody></table>
</main>
<script src="dashboard/assets/key-prompt.js"></script>
<script src="dashboard/assets/chart.umd.min.js"></script>
<script src="dashboard/assets/dashboard.js"></script>`,
  );
}
