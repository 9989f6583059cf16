import { expect } from 'chai';
import {
  admitEmailSend,
  admitSmsSend,
  capRefusal,
  checkSmsInput,
  type EmailSendFacts,
  type SendAdmission,
  type SmsSendFacts,
} from '../../../src/domain/messages/send-admission.js';

/** A refusal as the API answers it, or the decision's kind. */
const answer = (decision: SendAdmission) =>
  decision.kind === 'refused' ? { status: decision.error.status, message: decision.error.message } : decision.kind;

describe('send admission (the send rules, in the order the API promises)', () => {
  describe('a transactional email', () => {
    /** given an account where the recipient is not suppressed and the sender is verified */
    const email = (over: Partial<EmailSendFacts> = {}): EmailSendFacts => ({
      to: 'Reader@example.org',
      fromEmail: 'app@shop.example.com',
      accountFound: true,
      suppressed: false,
      verifiedSender: true,
      ...over,
    });

    it('given every rule passes, when its caps are not yet asked, then it is told to reserve its slots', () => {
      expect(answer(admitEmailSend(email()))).to.equal('reserve');
    });

    it('given every rule passes, when its slots were taken, then it is admitted', () => {
      expect(answer(admitEmailSend(email({ cap: 'ok' })))).to.equal('admitted');
    });

    it('given a suppressed recipient, then 400 <to as written> is suppressed, before any slot is asked', () => {
      expect(answer(admitEmailSend(email({ suppressed: true })))).to.deep.equal({ status: 400, message: 'Reader@example.org is suppressed' });
    });

    it('given an unverified sender, then 400 <fromEmail> is not verified for sending, before any slot is asked', () => {
      expect(answer(admitEmailSend(email({ verifiedSender: false })))).to.deep.equal({ status: 400, message: 'app@shop.example.com is not verified for sending' });
    });

    it('given a suppressed recipient and an unverified sender, then the suppression is the answer', () => {
      expect(answer(admitEmailSend(email({ suppressed: true, verifiedSender: false })))).to.deep.equal({ status: 400, message: 'Reader@example.org is suppressed' });
    });

    it("given the key's daily cap is reached, then 400 daily send limit reached for this API key", () => {
      expect(answer(admitEmailSend(email({ cap: 'key' })))).to.deep.equal({ status: 400, message: 'daily send limit reached for this API key' });
    });

    it("given the account's daily cap is reached, then 429 Daily send limit reached", () => {
      expect(answer(admitEmailSend(email({ cap: 'account' })))).to.deep.equal({ status: 429, message: 'Daily send limit reached' });
    });

    it('given a refusal before the caps, then a cap answer does not replace it (a refused send never holds slots)', () => {
      expect(answer(admitEmailSend(email({ suppressed: true, cap: 'ok' })))).to.deep.equal({ status: 400, message: 'Reader@example.org is suppressed' });
      expect(answer(admitEmailSend(email({ verifiedSender: false, cap: 'account' })))).to.deep.equal({ status: 400, message: 'app@shop.example.com is not verified for sending' });
    });

    it("given a campaign's contact erased or no longer subscribed when its message is queued, then 400 <to> is no longer a subscribed contact, before any other rule of the recipient", () => {
      expect(answer(admitEmailSend(email({ contactSubscribed: false, suppressed: true })))).to.deep.equal({ status: 400, message: 'Reader@example.org is no longer a subscribed contact' });
      expect(answer(admitEmailSend(email({ contactSubscribed: true })))).to.equal('reserve');
    });

    it('given no account row for the sender, then 404 account not found, before every other rule', () => {
      expect(answer(admitEmailSend(email({ accountFound: false, suppressed: true, verifiedSender: false })))).to.deep.equal({ status: 404, message: 'account not found' });
    });
  });

  describe('an SMS', () => {
    /** given an account with SMS enabled, an origination number, out of the sandbox, the number not suppressed */
    const sms = (over: Partial<SmsSendFacts> = {}): SmsSendFacts => ({
      to: '+14155550100',
      accountFound: true,
      smsEnabled: true,
      originationNumber: '+18885550000',
      sandbox: false,
      sandboxDestination: false,
      suppressionReason: null,
      ...over,
    });

    it('given every rule passes, when its caps are not yet asked, then it reserves; when its slots were taken, it is admitted', () => {
      expect(answer(admitSmsSend(sms()))).to.equal('reserve');
      expect(answer(admitSmsSend(sms({ cap: 'ok' })))).to.equal('admitted');
    });

    it('given SMS is not enabled for the account, then 400, before the origination number is looked at', () => {
      expect(answer(admitSmsSend(sms({ smsEnabled: false, originationNumber: null })))).to.deep.equal({ status: 400, message: 'SMS is not enabled for this account' });
    });

    it('given no origination number (none or empty), then 400, before the sandbox', () => {
      const expected = { status: 400, message: 'no origination number is provisioned for this account' };
      expect(answer(admitSmsSend(sms({ originationNumber: null, sandbox: true })))).to.deep.equal(expected);
      expect(answer(admitSmsSend(sms({ originationNumber: '' })))).to.deep.equal(expected);
    });

    it('given the sandbox and a destination not on its list, then 400 sandbox restriction, before the opt-out', () => {
      expect(answer(admitSmsSend(sms({ sandbox: true, suppressionReason: 'sms_optout' })))).to.deep.equal({
        status: 400,
        message: "+14155550100 is not a verified sandbox destination (the account's SMS is in sandbox mode)",
      });
    });

    it('given the sandbox and a listed destination, then it goes on to the caps', () => {
      expect(answer(admitSmsSend(sms({ sandbox: true, sandboxDestination: true })))).to.equal('reserve');
    });

    it('given an opted-out number, then 400 <to> has opted out of SMS', () => {
      expect(answer(admitSmsSend(sms({ suppressionReason: 'sms_optout' })))).to.deep.equal({ status: 400, message: '+14155550100 has opted out of SMS' });
    });

    it('given a number suppressed for another reason, then 400 <to> is suppressed', () => {
      expect(answer(admitSmsSend(sms({ suppressionReason: 'manual' })))).to.deep.equal({ status: 400, message: '+14155550100 is suppressed' });
    });

    it("given the key's cap is reached, then 400; given the account's, then 429 (the account cap email and SMS share)", () => {
      expect(answer(admitSmsSend(sms({ cap: 'key' })))).to.deep.equal({ status: 400, message: 'daily send limit reached for this API key' });
      expect(answer(admitSmsSend(sms({ cap: 'account' })))).to.deep.equal({ status: 429, message: 'Daily send limit reached' });
    });

    it('given a refusal before the caps, then a cap answer does not replace it', () => {
      expect(answer(admitSmsSend(sms({ suppressionReason: 'sms_optout', cap: 'account' })))).to.deep.equal({ status: 400, message: '+14155550100 has opted out of SMS' });
    });

    it('given no account row, then 404 account not found, before every other rule', () => {
      expect(answer(admitSmsSend(sms({ accountFound: false, smsEnabled: false })))).to.deep.equal({ status: 404, message: 'account not found' });
    });
  });

  describe('the rule a refusal names (counted by reason in the metrics)', () => {
    const reason = (decision: SendAdmission) => (decision.kind === 'refused' ? decision.error.reason : null);
    const email: EmailSendFacts = { to: 'a@example.org', fromEmail: 'b@example.com', accountFound: true, suppressed: false, verifiedSender: true };
    const sms: SmsSendFacts = {
      to: '+14155550100',
      accountFound: true,
      smsEnabled: true,
      originationNumber: '+14155550199',
      sandbox: false,
      sandboxDestination: false,
      suppressionReason: null,
    };

    it('given each email rule failing alone, then its own reason', () => {
      expect(reason(admitEmailSend({ ...email, accountFound: false }))).to.equal('account_not_found');
      expect(reason(admitEmailSend({ ...email, contactSubscribed: false }))).to.equal('not_subscribed');
      expect(reason(admitEmailSend({ ...email, suppressed: true }))).to.equal('suppressed');
      expect(reason(admitEmailSend({ ...email, verifiedSender: false }))).to.equal('unverified_sender');
      expect(reason(admitEmailSend({ ...email, cap: 'key' }))).to.equal('key_daily_limit');
      expect(reason(admitEmailSend({ ...email, cap: 'account' }))).to.equal('account_daily_limit');
      expect(reason(admitEmailSend({ ...email, cap: 'ok' }))).to.equal(null);
    });

    it('given each SMS rule failing alone, then its own reason', () => {
      expect(reason(admitSmsSend({ ...sms, smsEnabled: false }))).to.equal('sms_disabled');
      expect(reason(admitSmsSend({ ...sms, originationNumber: null }))).to.equal('no_origination_number');
      expect(reason(admitSmsSend({ ...sms, sandbox: true }))).to.equal('not_sandbox_destination');
      expect(reason(admitSmsSend({ ...sms, suppressionReason: 'sms_optout' }))).to.equal('opted_out');
      expect(reason(admitSmsSend({ ...sms, suppressionReason: 'bounced' }))).to.equal('suppressed');
    });
  });

  describe("an SMS's input", () => {
    it('given an E.164 number or a 10-digit US number and a short body, then its destination in E.164, segments and encoding', () => {
      expect(checkSmsInput({ to: '+14155550100', body: 'hello' })).to.deep.equal({ ok: true, to: '+14155550100', segments: 1, encoding: 'gsm7' });
      expect(checkSmsInput({ to: '(415) 555-0100', body: 'hello' })).to.deep.include({ ok: true, to: '+14155550100' });
    });

    it('given an invalid phone number, then 400 naming it, before the body is measured', () => {
      const check = checkSmsInput({ to: '12', body: 'x'.repeat(5_000) });
      expect(check.ok).to.equal(false);
      expect(!check.ok && { status: check.error.status, message: check.error.message }).to.deep.equal({
        status: 400,
        message: '12 is not a valid phone number (E.164, or a 10-digit US number)',
      });
    });

    it('given a body of 11 segments, then 400 body is too long; 10 segments pass', () => {
      const tooLong = checkSmsInput({ to: '+14155550100', body: 'x'.repeat(153 * 10 + 1) });
      expect(!tooLong.ok && tooLong.error.message).to.equal('body is too long: 11 segments (gsm7), at most 10 allowed');
      expect(checkSmsInput({ to: '+14155550100', body: 'x'.repeat(153 * 10) })).to.deep.include({ ok: true, segments: 10 });
    });
  });

  describe('the caps alone', () => {
    it('given slots taken, then no refusal; given a full cap, then its error', () => {
      expect(capRefusal('ok')).to.equal(null);
      expect(capRefusal('key')?.status).to.equal(400);
      expect(capRefusal('account')?.status).to.equal(429);
    });
  });
});
