import { expect } from 'chai';
import { SEND_EFFECT } from '../../src/commands/cancel-message.js';
import { sendMessagesManager, SEND_JOB } from '../../src/process-managers/send-messages.js';
import { scheduledSendSuite } from '../support/scheduled-send-suite.js';

scheduledSendSuite('scheduled sends (sendAt) and POST /api/messages/:id/cancel, on pg-boss', async () => ({}));

describe('the cancel and the send process manager name the same side effect', () => {
  it('send:<messageId>, kind provider.send, due at sendAt', async () => {
    const [effect] = await sendMessagesManager.handle(
      [{ type: 'EmailQueued', data: { messageId: 'm1', sendAt: '2030-01-01T00:00:00.000Z' } } as never],
      undefined as never,
    );
    expect(effect).to.include({ id: SEND_EFFECT.id('m1'), kind: SEND_EFFECT.kind });
    expect(SEND_EFFECT.kind).to.equal(SEND_JOB);
    expect(effect.runAfter.toISOString()).to.equal('2030-01-01T00:00:00.000Z');
  });
});
