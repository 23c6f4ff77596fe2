import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';

import { ifNoneMatchMatches } from '../http/conditional';

export const OPENAPI_PATH = '/v2/openapi.json';
export const DOCS_PATH = '/docs';

/** Swagger UI's files, served from the installed `swagger-ui-dist` (no CDN: the UI works offline). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * What the page loads is named relative to it (`/docs` itself: `docs/…`, `v2/openapi.json`), never
 * from the root: behind a proxy's prefix (TOKEN_ISSUER with a path, whose `/docs` discovery names as
 * `service_documentation`) the page is at `/accounts/docs`, and root paths left the prefix, so it
 * loaded none of its files and stayed blank. The browser resolves the document's URL against the page.
 */
const RELATIVE_DOCS = DOCS_PATH.slice(1);

const INIT_SCRIPT = `window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({
    url: '${OPENAPI_PATH.slice(1)}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Account & platform service API</title>
<link rel="icon" type="image/png" href="${RELATIVE_DOCS}/favicon-32x32.png">
<link rel="stylesheet" href="${RELATIVE_DOCS}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${RELATIVE_DOCS}/swagger-ui-bundle.js"></script>
<script src="${RELATIVE_DOCS}/swagger-ui-init.js"></script>
</body>
</html>
`;

/** Same-origin only: the page, its scripts and the document it reads. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * `GET /v2/openapi.json` (public, cacheable, with an ETag) and the human docs at `GET /docs` (Swagger
 * UI). Plain Fastify routes: no token, but counted in the `default` rate-limit group like any other
 * path, and other methods on them answer 405 problem+json through the route table.
 */
export function serveApiDocs(app: NestFastifyApplication, document: OpenAPIObject) {
  const fastify = app.getHttpAdapter().getInstance();
  const body = JSON.stringify(document);
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;

  const options = { config: { rateLimitGroup: 'default' as const } };
  fastify.get(OPENAPI_PATH, options, (request, reply) => {
    void reply.header('Cache-Control', 'public, max-age=300').header('ETag', etag);
    if (ifNoneMatchMatches(request.headers['if-none-match'], etag)) return reply.status(304).send();
    return reply.type('application/json; charset=utf-8').send(body);
  });

  fastify.get(DOCS_PATH, options, (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      .header('X-Content-Type-Options', 'nosniff')
      .send(PAGE),
  );
  fastify.get(`${DOCS_PATH}/swagger-ui-init.js`, options, (_request, reply) =>
    reply
      .type('application/javascript; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .send(INIT_SCRIPT),
  );
  const assetsDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  for (const [file, contentType] of Object.entries(ASSETS)) {
    const location = path.join(assetsDir, file);
    fastify.get(`${DOCS_PATH}/${file}`, options, (_request, reply) =>
      reply
        .type(contentType)
        .header('Cache-Control', 'public, max-age=86400')
        .header('X-Content-Type-Options', 'nosniff')
        .send(fs.createReadStream(location)),
    );
  }
}
