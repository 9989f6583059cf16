import { expect } from 'chai';
import { createLoggedUrl, requestLogLevel } from '../../src/http/request-log.js';

describe('the request log URL', () => {
  const loggedUrl = createLoggedUrl(['/api/contacts', '/api/contacts/import', '/api/contacts/:email', '/api/messages/:id/history', '/r/:messageId', '/api/sandbox/emails/:id/attachments/:position']);

  it("keeps our own identifiers and replaces a person's address by its parameter's name", () => {
    expect(loggedUrl('/api/contacts/ada%40example.org')).to.equal('/api/contacts/:email');
    expect(loggedUrl('/api/messages/m-1/history')).to.equal('/api/messages/m-1/history');
    expect(loggedUrl('/api/sandbox/emails/e-1/attachments/2')).to.equal('/api/sandbox/emails/e-1/attachments/2');
  });

  it('prefers the route matching more segments literally', () => {
    expect(loggedUrl('/api/contacts/import')).to.equal('/api/contacts/import');
  });

  it('names the keys of a query, never its values', () => {
    expect(loggedUrl('/api/contacts?search=ada&limit=5')).to.equal('/api/contacts?search=…&limit=…');
    expect(loggedUrl('/r/m-1?u=https%3A%2F%2Fexample.org%2F&s=sig')).to.equal('/r/m-1?u=…&s=…');
    expect(loggedUrl('/api/contacts?')).to.equal('/api/contacts');
  });

  it('logs a path no route matches as it came, without its query values', () => {
    expect(loggedUrl('/nowhere/at/all?x=1')).to.equal('/nowhere/at/all?x=…');
  });
});

describe('the request log level', () => {
  it('an error for a request the service failed; a warning for a 503 it chose: a probe answering so, or an answer saying when to come back', () => {
    expect(requestLogLevel('/api/messages', 200, undefined)).to.equal('info');
    expect(requestLogLevel('/api/messages', 404, undefined)).to.equal('info');
    expect(requestLogLevel('/api/messages', 503, undefined)).to.equal('error');
    expect(requestLogLevel('/api/messages', 200, new Error('x'))).to.equal('error');
    expect(requestLogLevel('/readyz', 503, undefined)).to.equal('warn');
    expect(requestLogLevel('/healthz', 503, undefined)).to.equal('warn');
    expect(requestLogLevel('/healthz', 500, undefined)).to.equal('error');
    expect(requestLogLevel('/api/campaigns/c1/pause', 503, undefined, true)).to.equal('warn');
    expect(requestLogLevel('/api/messages', 500, undefined, true)).to.equal('error');
  });
});
