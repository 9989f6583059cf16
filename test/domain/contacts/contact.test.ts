import { expect } from 'chai';
import { CONTACT_STATUSES, contactDecider, contactEraser, contactStream, type ContactUpserted, type UpsertContact } from '../../../src/domain/contacts/contact.js';
import { given } from '../../support/given.js';

const upsert = (fields: UpsertContact['fields'] = {}, extra: Partial<UpsertContact> = {}): UpsertContact => ({
  contactId: 'c-new',
  accountId: 'a1',
  email: 'ada@example.org',
  fields,
  now: '2024-05-01T00:00:00.000Z',
  ...extra,
});

const created: ContactUpserted = {
  type: 'ContactUpserted',
  data: {
    contactId: 'c1',
    accountId: 'a1',
    email: 'ada@example.org',
    created: true,
    fields: { firstName: 'Ada', lastName: 'Lovelace', company: 'Engines', tags: ['vip'], status: 'subscribed', listIds: ['l1'] },
    at: '2024-04-01T00:00:00.000Z',
  },
};

describe('contact decisions', () => {
  it('streams are keyed by account and the person\u2019s keyed hash, never the address', () => {
    expect(contactStream('a1', 'hash-of-ada')).to.equal('contact-a1-hash-of-ada');
  });

  it('creates a contact with defaults for the fields not sent (status subscribed, empty lists)', () => {
    expect(given(contactDecider).when(upsert({ firstName: 'Ada' }))).to.deep.equal([
      {
        type: 'ContactUpserted',
        data: {
          contactId: 'c-new',
          accountId: 'a1',
          email: 'ada@example.org',
          created: true,
          fields: { firstName: 'Ada', lastName: null, company: null, tags: [], status: 'subscribed', listIds: [] },
          at: '2024-05-01T00:00:00.000Z',
        },
      },
    ]);
  });

  it('updates only the fields sent, keeps the first contact id, and is not "created"', () => {
    const [event] = given(contactDecider, [created]).when(upsert({ company: 'Analytical', lastName: null }));
    expect(event.data.contactId).to.equal('c1');
    expect(event.data.created).to.equal(false);
    expect(event.data.fields).to.deep.equal({ firstName: 'Ada', lastName: null, company: 'Analytical', tags: ['vip'], status: 'subscribed', listIds: ['l1'] });
  });

  it('tags and listIds sent replace the stored ones (deduplicated); addListIds (the import listId) adds', () => {
    const [replaced] = given(contactDecider, [created]).when(upsert({ tags: ['a', 'b', 'a'], listIds: ['l2'] }));
    expect(replaced.data.fields.tags).to.deep.equal(['a', 'b']);
    expect(replaced.data.fields.listIds).to.deep.equal(['l2']);
    const [added] = given(contactDecider, [created]).when(upsert({}, { addListIds: ['l9', 'l1'] }));
    expect(added.data.fields.listIds).to.deep.equal(['l1', 'l9']);
  });

  it('an upsert that changes nothing appends nothing (what makes a re-import idempotent)', () => {
    expect(given(contactDecider, [created]).when(upsert({}))).to.deep.equal([]);
    expect(given(contactDecider, [created]).when(upsert({ firstName: 'Ada', tags: ['vip'], status: 'subscribed' }, { addListIds: ['l1'] }))).to.deep.equal([]);
    // A later request (other time, other fresh id) with the same data is still a no-op.
    expect(given(contactDecider, [created]).when(upsert({ company: 'Engines' }, { now: '2030-01-01T00:00:00.000Z', contactId: 'c-other' }))).to.deep.equal([]);
  });

  it('a no-op is recognised whatever key order the stored event came back in (jsonb reorders keys)', () => {
    const f = created.data.fields;
    const reordered: ContactUpserted = {
      ...created,
      data: { ...created.data, fields: { tags: f.tags, status: f.status, company: f.company, listIds: f.listIds, lastName: f.lastName, firstName: f.firstName } },
    };
    expect(given(contactDecider, [reordered]).when(upsert({ firstName: 'Ada', lastName: 'Lovelace', company: 'Engines', tags: ['vip'], listIds: ['l1'] }))).to.deep.equal([]);
  });

  it('accepts every status value and records it as the caller\'s status', () => {
    expect(CONTACT_STATUSES).to.deep.equal(['subscribed', 'unsubscribed', 'bounced', 'complained', 'suppressed']);
    for (const status of CONTACT_STATUSES) {
      const events = given(contactDecider, [created]).when(upsert({ status }));
      if (status === 'subscribed') expect(events).to.deep.equal([]);
      else expect(events[0].data.fields.status).to.equal(status);
    }
  });

  it('an upsert never lifts a suppression: it only ever records ContactUpserted on the contact stream', () => {
    // Suppressions live in their own `suppression-…` stream; the contact decider has no event that
    // touches them, so `status: subscribed` on a suppressed contact is recorded as the caller's
    // status only and the contacts read model keeps showing the suppression (test/projections/contacts.test.ts).
    const unsubscribed: ContactUpserted = { ...created, data: { ...created.data, fields: { ...created.data.fields, status: 'unsubscribed' } } };
    const events = given(contactDecider, [created, unsubscribed]).when(upsert({ status: 'subscribed' }));
    expect(events.map((e) => e.type)).to.deep.equal(['ContactUpserted']);
    expect(events[0].data.fields.status).to.equal('subscribed');
  });
});

describe('erasing a contact', () => {
  const erase = { accountId: 'a1', person: 'hash-1', now: '2030-01-01T00:00:00.000Z' };
  const upserted = {
    type: 'ContactUpserted',
    data: { contactId: 'c1', accountId: 'a1', email: 'ada@example.org', created: true, fields: { firstName: 'Ada', lastName: null, company: null, tags: [], status: 'subscribed', listIds: [] }, at: '' },
  };

  it('records the erasure with the contact id, naming the person by hash only; again, nothing', () => {
    const [erased] = given(contactEraser, [upserted]).when(erase);
    expect(erased).to.deep.equal({ type: 'ContactErased', data: { accountId: 'a1', person: 'hash-1', contactId: 'c1', erasedAt: erase.now } });
    expect(given(contactEraser, [upserted, erased]).when(erase)).to.deep.equal([]);
  });

  it('erased, and something sealed for the person since (keys left), the erasure is recorded again', () => {
    const [erased] = given(contactEraser, [upserted]).when(erase);
    const [again] = given(contactEraser, [upserted, erased]).when({ ...erase, keysLeft: true });
    expect(again).to.deep.equal({ type: 'ContactErased', data: { accountId: 'a1', person: 'hash-1', contactId: null, erasedAt: erase.now } });
    expect(given(contactEraser, [upserted, erased]).when({ ...erase, keysLeft: false })).to.deep.equal([]);
  });

  it('a person who never was a contact (only a recipient) is erased too, without a contact id', () => {
    expect(given(contactEraser).when(erase)[0].data.contactId).to.equal(null);
  });

  it('after an erasure an upsert creates the contact anew, and a later erasure is recorded again', () => {
    const [erased] = given(contactEraser, [upserted]).when(erase);
    const [again] = given(contactDecider, [upserted, erased]).when({ contactId: 'c2', accountId: 'a1', email: 'ada@example.org', fields: { firstName: 'Ada' }, now: '' });
    expect(again.data).to.include({ created: true, contactId: 'c2' });
    expect(given(contactEraser, [upserted, erased, again]).when(erase)).to.have.length(1);
  });

  it('an upsert whose fields can no longer be read (sealed under a destroyed key) leaves nothing to build on', () => {
    const unreadable = { ...upserted, data: { ...upserted.data, email: null, fields: null } };
    const [next] = given(contactDecider, [unreadable]).when({ contactId: 'c9', accountId: 'a1', email: 'ada@example.org', fields: {}, now: '' });
    expect(next.data.fields).to.include({ firstName: null, status: 'subscribed' });
  });
});
