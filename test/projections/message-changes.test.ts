import { expect } from 'chai';
import { changeKind, messageChangesProjection } from '../../src/projections/message-changes.js';
import { TIMELINE_KIND } from '../../src/projections/messages.js';
import { projectionSpec } from '../support/projection-spec.js';
import { accepted, attemptFailed, bounced, clicked, delivered, emailQueued, failed, opened, smsQueued } from '../support/messages-projection.js';

describe('message_changes projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(messageChangesProjection, { streamId: (id) => `message-${id}`, recordedAt: () => new Date('2024-05-01T12:00:00.000Z') });
  });
  afterEach(async () => spec?.drop());

  const rows = async () =>
    (await spec.rows('message_changes').orderBy([{ column: 'commit_pos' }, { column: 'prepare_pos' }])).map((r) => ({
      position: [Number(r.commit_pos), Number(r.prepare_pos)],
      account: r.account_id,
      key: r.api_key_id,
      message: r.message_id,
      type: r.type,
    }));

  it('one row per feed event at its log position, owned by the account and key that queued the message', async () => {
    await spec.given(['m1', [emailQueued('m1'), attemptFailed(), accepted()]], ['m2', [smsQueued('m2'), failed()]]);
    await spec.given(['m1', [delivered(), opened(), clicked(), bounced()]]);
    expect(await rows()).to.deep.equal([
      { position: [1, 1], account: 'acc1', key: 'key1', message: 'm1', type: 'queued' },
      // 2: ProviderAttemptFailed is no feed kind (the message is still on its way)
      { position: [3, 3], account: 'acc1', key: 'key1', message: 'm1', type: 'sent' },
      { position: [4, 4], account: 'acc1', key: null, message: 'm2', type: 'queued' },
      { position: [5, 5], account: 'acc1', key: null, message: 'm2', type: 'failed' },
      { position: [6, 6], account: 'acc1', key: 'key1', message: 'm1', type: 'delivered' },
      { position: [7, 7], account: 'acc1', key: 'key1', message: 'm1', type: 'opened' },
      { position: [8, 8], account: 'acc1', key: 'key1', message: 'm1', type: 'clicked' },
      { position: [9, 9], account: 'acc1', key: 'key1', message: 'm1', type: 'bounced' },
    ]);
  });

  it('a queued row carries who, to whom and what, never the body; other rows the event data', async () => {
    await spec.given(['m1', [emailQueued('m1', { html: '<p>secret</p>', text: 'secret' }), delivered('2024-05-01T11:30:00.000Z')]]);
    const [queued, done] = await spec.rows('message_changes').orderBy('commit_pos');
    expect(queued.data).to.deep.equal({
      channel: 'email',
      from: 'App <app@example.com>',
      to: 'ada@example.org',
      apiKeyId: 'key1',
      subject: 'Welcome',
      campaignId: null,
      templateId: null,
    });
    expect(queued.occurred_at.toISOString()).to.equal('2024-05-01T10:00:00.000Z');
    expect(done.data).to.include({ occurredAt: '2024-05-01T11:30:00.000Z', smtpResponse: '250 OK' });
    expect(done.occurred_at.toISOString()).to.equal('2024-05-01T11:30:00.000Z');
  });

  it('an erasure or retention takes off the address or link an earlier version ended a provider event id with, where it nulls the rest', async () => {
    const withId = (e: { type: string; data: Record<string, unknown> }, providerEventId: string) => ({ ...e, data: { ...e.data, providerEventId } });
    await spec.given(
      ['m1', [{ ...emailQueued('m1'), metadata: { person: 'p-ada' } }, withId(delivered(), 'ses:feedback:fb-1:ada@example.org'), withId(clicked(), 'pm:click:pm-1:2024-05-01T11:00:00Z:https://example.com/a')]],
      ['m2', [{ ...emailQueued('m2', { to: 'bob@example.org', queuedAt: '2024-04-01T10:00:00.000Z' }), metadata: { person: 'p-bob' } }, withId(delivered(), 'pm:delivery:pm-2:bob@example.org')]],
      ['m3', [{ ...emailQueued('m3', { to: 'cy@example.org' }), metadata: { person: 'p-cy' } }, withId(delivered(), 'pm:delivery:pm-3:cy@example.org')]],
    );
    const ids = async (id: string) => (await spec.rows('message_changes').where({ message_id: id }).orderBy('commit_pos')).filter((r) => r.type !== 'queued').map((r) => r.data.providerEventId);
    await spec.given(['contact', [{ type: 'ContactErased', data: { accountId: 'acc1', person: 'p-ada', contactId: null, erasedAt: '2024-05-02T00:00:00.000Z' } }]]);
    expect(await ids('m1')).to.deep.equal(['ses:feedback:fb-1', 'pm:click:pm-1:2024-05-01T11:00:00Z']);
    await spec.given(['account', [{ type: 'MessageContentExpired', data: { accountId: 'acc1', before: '2024-04-15', expiredAt: '2024-05-02T00:00:00.000Z' } }]]);
    expect(await ids('m2')).to.deep.equal(['pm:delivery:pm-2']);
    // neither erased nor expired
    expect(await ids('m3')).to.deep.equal(['pm:delivery:pm-3:cy@example.org']);
  });

  it('an outcome for a message it never saw queued adds nothing; a replayed batch adds nothing twice', async () => {
    await spec.given(['ghost', [delivered()]]);
    expect(await rows()).to.deep.equal([]);
    await spec.given(['m1', [emailQueued('m1')]]);
    const before = await spec.rows('message_changes');
    // the same event at its position again (as after a takeover) leaves one row
    await spec.db.transaction((trx) =>
      messageChangesProjection.handle(
        [{ id: before[0].event_id, streamId: 'message-m1', revision: 0, type: 'EmailQueued', data: emailQueued('m1').data, metadata: {}, schemaVersion: 1, recordedAt: new Date(), position: { commit: BigInt(before[0].commit_pos), prepare: BigInt(before[0].prepare_pos) } }],
        trx,
        spec.t,
      ),
    );
    expect(await spec.rows('message_changes')).to.have.length(1);
  });

  it('names every timeline kind as the message detail does, plus queued, failed and cancelled', () => {
    for (const [type, kind] of Object.entries(TIMELINE_KIND)) expect(changeKind(type)).to.equal(kind);
    expect([changeKind('EmailQueued'), changeKind('SmsQueued'), changeKind('ProviderFailed'), changeKind('MessageCancelled')]).to.deep.equal(['queued', 'queued', 'failed', 'cancelled']);
    expect(changeKind('ProviderAttemptFailed')).to.equal(undefined);
  });
});
