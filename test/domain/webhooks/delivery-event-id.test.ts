import { expect } from 'chai';
import { deliveryEventId } from '../../../src/domain/webhooks/delivery.js';

describe("a delivery's event id", () => {
  it('is the one recorded with the schedule; for a schedule recorded before it was, the body\'s id; none when the body is gone or not ours', () => {
    expect(deliveryEventId({ eventId: 'e-1', body: '{"id":"other"}' })).to.equal('e-1');
    expect(deliveryEventId({ body: '{"id":"e-2","event":"contact.bounced"}' })).to.equal('e-2');
    // an erased person's body no longer opens
    expect(deliveryEventId({ body: null })).to.equal(null);
    expect(deliveryEventId({ body: 'not json' })).to.equal(null);
    expect(deliveryEventId({ body: '{"id":42}' })).to.equal(null);
  });
});
