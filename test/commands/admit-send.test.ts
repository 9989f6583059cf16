import { expect } from 'chai';
import sinon from 'sinon';
import type { SlotRequest } from '../../src/adapters/db/send-counters.js';
import { admitSend } from '../../src/commands/admit-send.js';
import { admitEmailSend, type CapOutcome, type EmailSendFacts } from '../../src/domain/messages/send-admission.js';

describe('admitSend (the rules, then the slots)', () => {
  const facts: EmailSendFacts = { to: 'reader@example.org', fromEmail: 'app@shop.example.com', accountFound: true, suppressed: false, verifiedSender: true };
  const slots: SlotRequest = { day: '2026-03-01', keyScope: 'key:k1', keyCap: 5, accountScope: 'account:a1', accountCap: 10 };
  const counters = (outcome: CapOutcome) => {
    const release = sinon.fake.resolves(undefined);
    return { reserve: sinon.fake.resolves(outcome), taken: sinon.fake.returns({ release }) };
  };

  it('a send refused by a rule before the caps asks for no slot', async () => {
    const c = counters('ok');
    const err = await admitSend(admitEmailSend, { ...facts, suppressed: true }, c, slots).catch((e: Error) => e);
    expect((err as Error).message).to.equal('reader@example.org is suppressed');
    expect(c.reserve.called).to.equal(false);
    expect(c.taken.called).to.equal(false);
  });

  it('a send whose cap is full is refused by the cap rule, holding nothing', async () => {
    const c = counters('account');
    const err = await admitSend(admitEmailSend, facts, c, slots).catch((e: Error) => e);
    expect((err as Error).message).to.equal('Daily send limit reached');
    expect(c.reserve.calledOnceWithExactly(slots)).to.equal(true);
    expect(c.taken.called).to.equal(false);
  });

  it('an admitted send holds the slots it took, to give back', async () => {
    const c = counters('ok');
    const reservation = await admitSend(admitEmailSend, facts, c, slots);
    expect(c.taken.calledOnceWithExactly(slots)).to.equal(true);
    await reservation.release();
  });
});
