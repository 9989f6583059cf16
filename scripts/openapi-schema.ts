/**
 * Writes the OpenAPI document of the API's routes to web/openapi.json, from the route declarations
 * themselves (scripts/declared-routes.ts): `openapi-typescript` turns it into the dashboard's typed client.
 */
import { writeFileSync } from 'node:fs';
import { buildOpenApi } from '../src/http/openapi.js';
import { declaredApiRoutes } from './declared-routes.js';

const out = new URL('../web/openapi.json', import.meta.url);
writeFileSync(out, JSON.stringify(buildOpenApi(declaredApiRoutes(), { title: 'Courier Ledger API', version: '0.1.0', baseUrl: '' }), null, 2));
