import { singleLine } from './header-line.js';

/**
 * Email addresses. Normal form: trimmed and lower-cased as a whole. RFC 5321 lets a server treat the
 * local part case-sensitively, but no mainstream mailbox provider does, and suppression must not be
 * dodged by `Bob@x.com` vs `bob@x.com`: so suppression, contacts and sender checks compare lower-cased.
 * The address as the caller wrote it is still what the message is sent to.
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function emailDomain(email: string): string {
  const at = email.lastIndexOf('@');
  return normaliseEmail(email.slice(at + 1));
}

/**
 * A domain and the domains above it, down to two labels (`a.b.example.com` → itself, `b.example.com`,
 * `example.com`): a provider account that has verified a domain lets every name under it send too.
 */
export function domainAndParents(domain: string): string[] {
  const labels = domain.split('.');
  return labels.slice(0, Math.max(1, labels.length - 1)).map((_, i) => labels.slice(i).join('.'));
}

/** `Name <address>` with the display name quoted as RFC 5322 needs, or RFC 2047-encoded when not ASCII. */
export function formatFromHeader(name: string | undefined | null, email: string): string {
  const display = name === undefined || name === null ? undefined : singleLine(name).trim();
  if (!display) return email;
  if (/[^\x20-\x7e]/.test(display)) {
    return `=?UTF-8?B?${Buffer.from(display, 'utf8').toString('base64')}?= <${email}>`;
  }
  if (/^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~ ]+$/.test(display)) return `${display} <${email}>`;
  return `"${display.replace(/(["\\])/g, '\\$1')}" <${email}>`;
}
