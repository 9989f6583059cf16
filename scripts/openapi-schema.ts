/**
 * Writes the OpenAPI document of the API's routes to web/openapi.json, from the route declarations
 * themselves (the same list the server serves, src/http/api-routes.ts; no server, no database):
 * `openapi-typescript` turns it into the dashboard's typed client. Route factories close over
 * their dependencies, so stand-ins that are never called are enough to read the declarations, beside
 * the few settings a factory reads while declaring.
 */
import { writeFileSync } from 'node:fs';
import { createApiRoutes, type ApiRouteDeps } from '../src/http/api-routes.js';
import { buildOpenApi } from '../src/http/openapi.js';

const unused = new Proxy(
  {},
  {
    get: () => () => {
      throw new Error('a route declaration called a dependency');
    },
  },
);
// Settings some factories read while declaring; every other group's dependencies are all `unused`.
const settings: Partial<Record<keyof ApiRouteDeps, object>> = {
  metrics: { exposition: unused, token: undefined },
  auth: { accounts: unused, signIns: unused, allowSignup: false },
  providerEvents: { ingest: unused, sns: unused, snsTopicArns: undefined, postmarkCredentials: undefined },
};
const deps = new Proxy({}, { get: (_, group) => settings[group as keyof ApiRouteDeps] ?? unused }) as ApiRouteDeps;

const out = new URL('../web/openapi.json', import.meta.url);
writeFileSync(out, JSON.stringify(buildOpenApi(createApiRoutes(deps), { title: 'Courier Ledger API', version: '0.1.0', baseUrl: '' }), null, 2));
