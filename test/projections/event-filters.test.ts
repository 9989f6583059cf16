import { expect } from 'chai';
import { ACCOUNT_STREAM_PREFIX, CONTENT_EXPIRED } from '../../src/domain/accounts/account.js';
import { CONTACT_ERASED, CONTACT_STREAM_PREFIX } from '../../src/domain/contacts/contact.js';
import { MESSAGE_EVENT_TYPES, MESSAGE_STREAM_PREFIX } from '../../src/domain/messages/events.js';
import { SUPPRESSION_STREAM_PREFIX } from '../../src/domain/suppression/suppression.js';
import { readsEvent, type RecordedEvent } from '../../src/ports/event-store.js';
import { messageChangesProjection } from '../../src/projections/message-changes.js';
import { messagesProjection } from '../../src/projections/messages.js';
import { suppressionsProjection } from '../../src/projections/suppressions.js';

const event = (streamPrefix: string, type: string) => ({ streamId: `${streamPrefix}x`, type }) as RecordedEvent;

/**
 * Read models that follow contact streams for their erasures only: a contact import (ContactUpserted
 * by the thousand) reaches none of them, while every event their handlers act on does.
 */
describe('what the read models following contact streams for erasures read', () => {
  for (const projection of [messagesProjection, messageChangesProjection]) {
    it(`${projection.name}: every message event, erasures and retention's cutoffs; no contact upserts`, () => {
      const reads = readsEvent(projection);
      for (const type of MESSAGE_EVENT_TYPES) expect(reads(event(MESSAGE_STREAM_PREFIX, type)), type).to.equal(true);
      expect(reads(event(CONTACT_STREAM_PREFIX, CONTACT_ERASED))).to.equal(true);
      expect(reads(event(ACCOUNT_STREAM_PREFIX, CONTENT_EXPIRED))).to.equal(true);
      expect(reads(event(CONTACT_STREAM_PREFIX, 'ContactUpserted'))).to.equal(false);
    });
  }

  it('suppressions: suppressions, their lifting and erasures; no contact upserts', () => {
    const reads = readsEvent(suppressionsProjection);
    for (const type of ['AddressSuppressed', 'SuppressionLifted']) expect(reads(event(SUPPRESSION_STREAM_PREFIX, type)), type).to.equal(true);
    expect(reads(event(CONTACT_STREAM_PREFIX, CONTACT_ERASED))).to.equal(true);
    expect(reads(event(CONTACT_STREAM_PREFIX, 'ContactUpserted'))).to.equal(false);
  });
});
