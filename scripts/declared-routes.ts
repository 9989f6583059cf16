/**
 * The API's routes as declared (the same list the server serves, src/http/api-routes.ts), with no server
 * and no database: route factories close over their dependencies, so stand-ins that are never called
 * are enough to read the declarations, beside the few settings a factory reads while declaring.
 * scripts/openapi-schema.ts writes the document from them; test/http/api-docs.test.ts checks it.
 */
import { createApiRoutes, type ApiRouteDeps } from '../src/http/api-routes.js';

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
  providerEvents: { ingest: unused, sns: unused, snsTopicArns: undefined, postmarkCredentials: undefined, linkDigest: unused },
};

export function declaredApiRoutes() {
  return createApiRoutes(new Proxy({}, { get: (_, group) => settings[group as keyof ApiRouteDeps] ?? unused }) as ApiRouteDeps);
}
