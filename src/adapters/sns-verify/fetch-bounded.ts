import http from 'node:http';
import https from 'node:https';

export interface BoundedResponse {
  status: number;
  body: Buffer;
}

/**
 * A GET that cannot hang or flood us: one timer covers connect, headers and body, the body is refused
 * past `maxBytes`, redirects are returned as they are (never followed), and no pooled socket outlives it.
 */
export function fetchBounded(url: URL, options: { timeoutMs: number; maxBytes: number }): Promise<BoundedResponse> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new Error(`refusing to fetch a ${url.protocol} URL`));
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<BoundedResponse>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, result?: BoundedResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if (error) reject(error);
      else resolve(result!);
    };
    const request = client.get(url, { agent: false, headers: { accept: '*/*' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) finish(new Error(`response larger than ${options.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => finish(null, { status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', (err) => finish(err));
      res.on('close', () => finish(new Error('connection closed before the response ended')));
    });
    const timer = setTimeout(() => finish(new Error(`no complete response within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('error', (err) => finish(err));
  });
}
