import type { Request } from 'express';
import { clientIp } from '../domain/ip.js';

type TrustProxy = (address: string, hop: number) => boolean;

/**
 * The client's address. X-Forwarded-For is the caller's own claim unless a proxy we trust wrote it, so
 * its first (leftmost) hop counts only on a connection from a trusted proxy (the app's `trust proxy`,
 * set from TRUST_PROXY); any other connection is the client itself and its socket address counts.
 * Leftmost is safe when the outermost trusted proxy sets the header rather than appending to what the
 * client sent.
 */
export function requestClientIp(req: Request): string | null {
  const socket = req.socket.remoteAddress;
  const trusted = req.app.get('trust proxy fn') as TrustProxy;
  const forwarded = socket && trusted(socket, 0) ? req.headers['x-forwarded-for'] : undefined;
  return clientIp(forwarded, socket);
}
