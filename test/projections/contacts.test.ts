import { expect } from 'chai';
import type { ContactFields, ContactUpserted } from '../../src/domain/contacts/contact.js';
import type { AddressSuppressed, SuppressionLifted } from '../../src/domain/suppression/suppression.js';
import { contactsProjection } from '../../src/projections/contacts.js';
import { projectionSpec } from '../support/projection-spec.js';

const fields = (over: Partial<ContactFields> = {}): ContactFields => ({
  firstName: 'Ada',
  lastName: 'Lovelace',
  company: 'Engines',
  tags: ['vip'],
  status: 'subscribed',
  listIds: ['l1'],
  ...over,
});
const upserted = (over: Partial<ContactFields> = {}, at = '2024-04-01T00:00:00.000Z', accountId = 'a1', created = true): ContactUpserted => ({
  type: 'ContactUpserted',
  data: { contactId: `c-${accountId}`, accountId, email: 'ada@example.org', created, fields: fields(over), at },
});
const suppressed = (reason: AddressSuppressed['data']['reason'], over: Partial<AddressSuppressed['data']> = {}): AddressSuppressed => ({
  type: 'AddressSuppressed',
  data: { accountId: 'a1', value: 'ada@example.org', kind: 'email', reason, source: 'manual', messageId: null, campaignId: null, detail: null, occurredAt: 't', ...over },
});
const lifted: SuppressionLifted = { type: 'SuppressionLifted', data: { accountId: 'a1', value: 'ada@example.org', kind: 'email', liftedAt: 't', by: 'user:u' } };

const CONTACT = 'contact-a1-ada@example.org';
const SUPPRESSION = 'suppression-a1-ada@example.org';

describe('contacts projection (given events, then rows)', function () {
  this.timeout(30_000);
  let spec: Awaited<ReturnType<typeof projectionSpec>>;
  beforeEach(async () => {
    spec = await projectionSpec(contactsProjection);
  });
  afterEach(async () => spec?.drop());

  const status = async (accountId = 'a1') => (await spec.rows('contacts').where({ account_id: accountId }).first())?.status;

  it('an upsert writes the contact; a later one updates its fields and keeps id and createdAt', async () => {
    await spec.given([CONTACT, [upserted()]]);
    await spec.given([CONTACT, [upserted({ company: null, tags: ['a', 'b'], listIds: [] }, '2024-04-02T00:00:00.000Z', 'a1', false)]]);
    const rows = await spec.rows('contacts');
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({
      id: 'c-a1',
      account_id: 'a1',
      email: 'ada@example.org',
      first_name: 'Ada',
      last_name: 'Lovelace',
      company: null,
      tags: ['a', 'b'],
      status: 'subscribed',
      list_ids: [],
    });
    expect(rows[0].created_at.toISOString()).to.equal('2024-04-01T00:00:00.000Z');
    expect(rows[0].updated_at.toISOString()).to.equal('2024-04-02T00:00:00.000Z');
  });

  it('a batch with several upserts of one contact writes the last one, createdAt from the first, and the stream revision', async () => {
    await spec.given([
      CONTACT,
      [upserted(), upserted({ firstName: 'A2' }, '2024-04-02T00:00:00.000Z', 'a1', false), upserted({ firstName: 'A3' }, '2024-04-03T00:00:00.000Z', 'a1', false)],
    ]);
    const row = await spec.rows('contacts').first();
    expect(row).to.include({ first_name: 'A3', revision: 2 });
    expect(row.created_at.toISOString()).to.equal('2024-04-01T00:00:00.000Z');
    expect(row.updated_at.toISOString()).to.equal('2024-04-03T00:00:00.000Z');
  });

  it('upserts and suppressions in one batch apply in log order', async () => {
    await spec.given([CONTACT, [upserted()]], [SUPPRESSION, [suppressed('bounced'), lifted]], [CONTACT, [upserted({ status: 'unsubscribed' }, '2024-04-02T00:00:00.000Z', 'a1', false)]]);
    expect(await status()).to.equal('unsubscribed');
    await spec.given([CONTACT, [upserted({ firstName: 'B' }, '2024-04-03T00:00:00.000Z', 'a1', false)]], [SUPPRESSION, [suppressed('manual')]]);
    expect(await status()).to.equal('suppressed');
  });

  it('a suppression shows as the status, whatever status an upsert sends afterwards', async () => {
    await spec.given([CONTACT, [upserted()]], [SUPPRESSION, [suppressed('complained')]]);
    expect(await status()).to.equal('complained');
    await spec.given([CONTACT, [upserted({ status: 'subscribed', firstName: 'Augusta' }, '2024-04-03T00:00:00.000Z', 'a1', false)]]);
    const row = await spec.rows('contacts').first();
    expect(row).to.include({ status: 'complained', first_name: 'Augusta', upserted_status: 'subscribed' });
  });

  it('a suppression recorded before the contact existed applies when it is created', async () => {
    await spec.given([SUPPRESSION, [suppressed('bounced')]], [CONTACT, [upserted({ status: 'subscribed' })]]);
    expect(await status()).to.equal('bounced');
  });

  it('maps each suppression reason to a contact status', async () => {
    const cases = [
      ['bounced', 'bounced'],
      ['complained', 'complained'],
      ['unsubscribed', 'unsubscribed'],
      ['manual', 'suppressed'],
    ] as const;
    await spec.given([CONTACT, [upserted()]]);
    for (const [reason, expected] of cases) {
      await spec.given([SUPPRESSION, [suppressed(reason)]]);
      expect(await status(), reason).to.equal(expected);
      await spec.given([SUPPRESSION, [lifted]]);
    }
  });

  it('lifting the suppression brings back the status the caller upserted', async () => {
    await spec.given([CONTACT, [upserted({ status: 'unsubscribed' })]], [SUPPRESSION, [suppressed('bounced'), lifted]]);
    expect(await status()).to.equal('unsubscribed');
    expect(await spec.rows('contact_suppressions')).to.deep.equal([]);
  });

  it('a status a suppression or its lift changes moves updatedAt to when it was recorded; one it leaves as it was does not', async () => {
    await spec.drop();
    // each batch recorded a minute after the one before
    spec = await projectionSpec(contactsProjection, { recordedAt: (position) => new Date(Date.UTC(2024, 4, 1) + Number(position) * 60_000) });
    const updatedAt = async () => (await spec.rows('contacts').where({ account_id: 'a1' }).first()).updated_at.toISOString();
    await spec.given([CONTACT, [upserted({ status: 'unsubscribed' }, '2024-04-01T00:00:00.000Z')]]);
    await spec.given([SUPPRESSION, [suppressed('bounced')]]);
    const bounced = await updatedAt();
    expect(bounced > '2024-05-01').to.equal(true);
    await spec.given([SUPPRESSION, [suppressed('complained')]]);
    const complained = await updatedAt();
    expect(complained > bounced).to.equal(true);
    await spec.given([SUPPRESSION, [suppressed('complained')]]);
    expect(await updatedAt(), 'the same status again').to.equal(complained);
    await spec.given([SUPPRESSION, [lifted]]);
    const liftedAt = await updatedAt();
    expect([await status(), liftedAt > complained]).to.deep.equal(['unsubscribed', true]);
    await spec.given([SUPPRESSION, [suppressed('unsubscribed')]]);
    expect([await status(), await updatedAt()], 'unsubscribed, as upserted').to.deep.equal(['unsubscribed', liftedAt]);
  });

  it('suppressions of other accounts and of phone numbers leave the contact alone', async () => {
    await spec.given(
      [CONTACT, [upserted()]],
      ['contact-a2-ada@example.org', [upserted({}, '2024-04-01T00:00:00.000Z', 'a2')]],
      ['suppression-a2-ada@example.org', [suppressed('bounced', { accountId: 'a2' })]],
      ['suppression-a1-+15550100', [suppressed('sms_optout', { kind: 'phone', value: '+15550100' })]],
    );
    expect(await status('a1')).to.equal('subscribed');
    expect(await status('a2')).to.equal('bounced');
  });

  it('a batch that adds a tenth or more new contacts leaves the planner counting its rows (a campaign walks a list just imported)', async () => {
    const reltuples = async () => Number((await spec.db.raw("SELECT reltuples FROM pg_class WHERE oid = 'contacts_spec'::regclass")).rows[0].reltuples);
    const contact = (n: number, created: boolean): [string, ContactUpserted[]] => {
      const e = upserted({}, undefined, 'a1', created);
      return [`contact-a1-r${n}@example.org`, [{ ...e, data: { ...e.data, contactId: `c${n}`, email: `r${n}@example.org` } }]];
    };
    const batch = (from: number, n: number, created = true) => Array.from({ length: n }, (_, i) => contact(from + i, created));
    await spec.given(...batch(0, 99));
    expect(await reltuples()).to.equal(-1); // never analyzed: a batch this small changes no plan
    await spec.given(...batch(99, 1_000));
    expect(await reltuples()).to.equal(1_099);
    await spec.given(...batch(0, 1_000, false)); // changed, not added
    expect(await reltuples()).to.equal(1_099);
    await spec.given(...batch(1_099, 200));
    expect(await reltuples()).to.equal(1_299);
  });
});
