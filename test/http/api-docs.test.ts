import { expect } from 'chai';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createApp } from '../../src/http/app.js';
import { defineRoute } from '../../src/http/route.js';

// /docs is the API reference a person browses: it must render /openapi.json with files the service
// serves itself (it works offline), and run under a policy that allows no inline script.

describe('GET /docs (the browsable API reference)', () => {
  let server: Server;
  let base: string;

  before(async () => {
    const ping = defineRoute({
      method: 'get',
      path: '/ping',
      summary: 'a route for the description',
      tag: 'test',
      auth: { kind: 'public' },
      responses: { 200: { description: 'pong' } },
      async handler() {
        return { status: 200, body: { pong: true } };
      },
    });
    const app = createApp({ routes: [ping], authenticate: async () => undefined, logger: pino({ level: 'silent' }), baseUrl: 'http://localhost' });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const references = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);

  it('answers an HTML page whose every script, style and link is on this origin, with no inline script', async () => {
    const res = await fetch(`${base}/docs`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("script-src 'self'");
    expect(csp).not.to.match(/script-src[^;]*unsafe-inline/);
    const html = await res.text();
    const refs = references(html);
    expect(refs).to.include.members(['/docs/assets/swagger-ui-bundle.js', '/docs/init.js', '/docs/assets/swagger-ui.css']);
    for (const ref of refs) expect(ref, ref).to.match(/^\/(?!\/)/);
    // every <script> has a src and no body
    for (const [script] of html.matchAll(/<script\b[^>]*>[\s\S]*?<\/script>/g)) expect(script).to.match(/^<script src="[^"]+"><\/script>$/);
  });

  it('serves every file the page references, and the initializer renders /openapi.json', async () => {
    const html = await (await fetch(`${base}/docs`)).text();
    for (const ref of references(html).filter((r) => r.startsWith('/docs/'))) {
      const res = await fetch(base + ref);
      expect(res.status, ref).to.equal(200);
      expect((await res.arrayBuffer()).byteLength, ref).to.be.greaterThan(0);
    }
    const bundle = await fetch(`${base}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).to.match(/javascript/);
    expect(await bundle.text()).to.include('SwaggerUIBundle');
    const init = await (await fetch(`${base}/docs/init.js`)).text();
    expect(init).to.include("url: '/openapi.json'");
    const spec = await fetch(`${base}/openapi.json`);
    expect(spec.status).to.equal(200);
    expect((await spec.json()).paths).to.have.property('/ping');
  });

  it('serves no other file of node_modules', async () => {
    for (const path of ['/docs/assets/package.json', '/docs/assets/..%2F..%2Fpackage.json', '/docs/assets/index.html', '/docs/assets/swagger-initializer.js']) {
      const res = await fetch(base + path);
      expect(res.status, path).to.equal(404);
      expect(await res.json()).to.deep.equal({ message: 'Not Found', error: 'Not Found', statusCode: 404 });
    }
  });
});
