import { z } from 'zod';
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

// RFC 5322 atext, and dot-atoms of it (no leading, trailing or doubled dot).
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
// RFC 1035 LDH label of 1 to 63 characters; the last (the TLD) starts with a letter and has two at least.
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const TLD = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])';

/**
 * An address mail can go to: a dot-atom local part of at most 64 octets (RFC 5321 4.5.3.1.1), `@`, a
 * domain of LDH labels of 1 to 63 characters with a TLD, 254 characters in all (the longest path
 * RFC 5321 allows, less its brackets). Quoted local parts, IP literals and addresses not in ASCII
 * (an IDN domain goes as its xn-- form) are refused: providers refuse most of them anyway. Each
 * limit was a 201 that only the provider refused, later, as a failed message.
 */
export const EMAIL_ADDRESS = new RegExp(`^(?=.{1,254}$)(?=[^@]{1,64}@)${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${TLD}$`);

export const isEmailAddress = (text: string): boolean => EMAIL_ADDRESS.test(text);

/**
 * The schema of every email address the API takes (recipients, senders, reply-to, contacts,
 * suppressions): z.email's `format: email` and its message, `Invalid email address`, with this rule.
 */
export const emailAddress = (params: Omit<Parameters<typeof z.email>[0] & object, 'pattern'> = {}) => z.email({ ...params, pattern: EMAIL_ADDRESS });
