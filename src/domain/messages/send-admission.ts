import { AppError, badRequest, notFound, tooManyRequests } from '../errors.js';
import { notAPhoneNumber, parsePhoneNumber } from '../sms/phone.js';
import { countSmsSegments, type SmsEncoding } from '../sms/segments.js';

/**
 * Whether a send is admitted: the send rules of the API, in the order it promises, decided over facts
 * the send command reads in one statement (after the key that sends it was accepted). A send that
 * passes every rule but the daily caps is told to `reserve` its slots; the caps' answer (which only an
 * atomic reservation can give) is then one more fact, and the same rules decide again. A send refused
 * before the caps therefore never asks for a slot.
 */
export type SendAdmission = { kind: 'refused'; error: SendRefused } | { kind: 'reserve' } | { kind: 'admitted' };

/** Which rule refused a send: a short code for counting refusals (the error says it to the caller). */
export type RefusalReason =
  | 'account_not_found'
  | 'not_subscribed'
  | 'suppressed'
  | 'unverified_sender'
  | 'key_daily_limit'
  | 'account_daily_limit'
  | 'sms_disabled'
  | 'no_origination_number'
  | 'not_sandbox_destination'
  | 'opted_out';

/**
 * What the daily-cap reservation answered for one send: its slots taken (`ok`), or the cap that was
 * already reached, the key's checked before the account's (a send refused by either takes no slot).
 */
export type CapOutcome = 'ok' | 'key' | 'account';

export interface EmailSendFacts {
  /** the recipient and sender as the request wrote them, for the refusals' messages */
  to: string;
  fromEmail: string;
  accountFound: boolean;
  /**
   * A campaign's message only: its contact is still on record and subscribed when the message is
   * queued (erased, or unsubscribed since the fan-out read it: refused). Absent for any other send.
   */
  contactSubscribed?: boolean;
  /** the recipient is on the account's suppression list */
  suppressed: boolean;
  /** the sender's domain is verified in full, or the address is a verified single sender */
  verifiedSender: boolean;
  /** absent until the send has asked for its slots */
  cap?: CapOutcome;
}

export const MAX_SMS_SEGMENTS = 10;

export interface SmsSendFacts {
  /** the destination in E.164 */
  to: string;
  accountFound: boolean;
  smsEnabled: boolean;
  /** '' or null when none is provisioned */
  originationNumber: string | null;
  sandbox: boolean;
  /** `to` is one of the account's verified sandbox destinations */
  sandboxDestination: boolean;
  /** why `to` is on the suppression list (`sms_optout` for an opt-out), or null when it is not */
  suppressionReason: string | null;
  /** absent until the send has asked for its slots */
  cap?: CapOutcome;
}

/**
 * A refused send as the caller is told it, with the rule that refused it: a campaign's fan-out tells
 * a recipient to skip from a reason to stop by the rule, never by the words of the message.
 */
export class SendRefused extends AppError {
  constructor(
    readonly reason: RefusalReason,
    error: AppError,
  ) {
    super(error.status, error.message, error.details, error.headers);
  }
}

const refused = (reason: RefusalReason, error: AppError): SendAdmission => ({ kind: 'refused', error: new SendRefused(reason, error) });

/** The daily caps, last of every send's rules: a per-key cap is a 400, the account's a 429. */
function capRule(cap: CapOutcome | undefined): SendAdmission {
  switch (cap) {
    case undefined:
      return { kind: 'reserve' };
    case 'key':
      return refused('key_daily_limit', badRequest('daily send limit reached for this API key'));
    case 'account':
      return refused('account_daily_limit', tooManyRequests('Daily send limit reached'));
    case 'ok':
      return { kind: 'admitted' };
  }
}

/** A refused cap as its error, or null when the send took its slots. */
export function capRefusal(cap: CapOutcome): AppError | null {
  const decision = capRule(cap);
  return decision.kind === 'refused' ? decision.error : null;
}

/** A transactional email: suppressed recipient, unverified sender, per-key cap, account cap (a campaign's: its contact first). */
export function admitEmailSend(facts: EmailSendFacts): SendAdmission {
  if (!facts.accountFound) return refused('account_not_found', notFound('account not found'));
  if (facts.contactSubscribed === false) return refused('not_subscribed', badRequest(`${facts.to} is no longer a subscribed contact`));
  if (facts.suppressed) return refused('suppressed', badRequest(`${facts.to} is suppressed`));
  if (!facts.verifiedSender) return refused('unverified_sender', badRequest(`${facts.fromEmail} is not verified for sending`));
  return capRule(facts.cap);
}

/**
 * An SMS, after its input passed (`checkSmsInput`): SMS enabled, an origination number, the sandbox's
 * destinations, opt-out, suppression, then the caps.
 */
export function admitSmsSend(facts: SmsSendFacts): SendAdmission {
  if (!facts.accountFound) return refused('account_not_found', notFound('account not found'));
  if (!facts.smsEnabled) return refused('sms_disabled', badRequest('SMS is not enabled for this account'));
  if (!facts.originationNumber) return refused('no_origination_number', badRequest('no origination number is provisioned for this account'));
  if (facts.sandbox && !facts.sandboxDestination) {
    return refused('not_sandbox_destination', badRequest(`${facts.to} is not a verified sandbox destination (the account's SMS is in sandbox mode)`));
  }
  if (facts.suppressionReason === 'sms_optout') return refused('opted_out', badRequest(`${facts.to} has opted out of SMS`));
  if (facts.suppressionReason !== null) return refused('suppressed', badRequest(`${facts.to} is suppressed`));
  return capRule(facts.cap);
}

export type SmsInputCheck =
  | { ok: true; to: string; segments: number; encoding: SmsEncoding }
  | { ok: false; error: AppError };

/** The SMS rules that need nothing but the request: a valid phone number, then at most 10 segments. */
export function checkSmsInput(input: { to: string; body: string }): SmsInputCheck {
  const to = parsePhoneNumber(input.to);
  if (!to) return { ok: false, error: badRequest(notAPhoneNumber(input.to)) };
  const { segments, encoding } = countSmsSegments(input.body);
  if (segments > MAX_SMS_SEGMENTS) {
    return { ok: false, error: badRequest(`body is too long: ${segments} segments (${encoding}), at most ${MAX_SMS_SEGMENTS} allowed`) };
  }
  return { ok: true, to, segments, encoding };
}
