import { expect } from 'chai';
import express, { type Request } from 'express';
import { requestClientIp } from '../../src/http/client-ip.js';

/** A request as express hands it to a route: its app (with `trust proxy` compiled), socket and headers. */
function request(trustProxy: boolean | number | string, remoteAddress: string, forwardedFor?: string): Request {
  const app = express();
  app.set('trust proxy', trustProxy);
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { app, socket: { remoteAddress }, headers } as unknown as Request;
}

describe('requestClientIp: X-Forwarded-For only from a trusted proxy', () => {
  it('takes the first (leftmost) hop from a trusted peer (loopback, the default)', () => {
    expect(requestClientIp(request('loopback', '127.0.0.1', '203.0.113.7, 10.0.0.1'))).to.equal('203.0.113.7');
    expect(requestClientIp(request('loopback', '::1', '2001:DB8::5'))).to.equal('2001:db8::5');
  });

  it('treats an IPv4-mapped IPv6 socket address like the IPv4 one', () => {
    expect(requestClientIp(request('loopback', '::ffff:127.0.0.1', '203.0.113.7'))).to.equal('203.0.113.7');
    expect(requestClientIp(request('10.0.0.0/8', '::ffff:10.1.2.3', '203.0.113.7'))).to.equal('203.0.113.7');
    expect(requestClientIp(request('10.0.0.0/8', '::ffff:127.0.0.1', '203.0.113.7'))).to.equal('127.0.0.1');
  });

  it('ignores the header from a peer that is not trusted: the socket address counts', () => {
    expect(requestClientIp(request(false, '127.0.0.1', '10.9.8.7'))).to.equal('127.0.0.1');
    expect(requestClientIp(request('loopback', '198.51.100.4', '10.9.8.7'))).to.equal('198.51.100.4');
    expect(requestClientIp(request('10.0.0.0/8, 192.168.0.0/16', '::ffff:127.0.0.1', '10.9.8.7'))).to.equal('127.0.0.1');
    expect(requestClientIp(request(0, '127.0.0.1', '10.9.8.7'))).to.equal('127.0.0.1');
  });

  it('trusts any peer with true and the nearest one with a hop count', () => {
    expect(requestClientIp(request(true, '198.51.100.4', '10.9.8.7, 198.51.100.9'))).to.equal('10.9.8.7');
    expect(requestClientIp(request(1, '198.51.100.4', '10.9.8.7'))).to.equal('10.9.8.7');
  });

  it('without a header, the socket address (normalised)', () => {
    expect(requestClientIp(request('loopback', '::ffff:127.0.0.1'))).to.equal('127.0.0.1');
  });
});
