import { expect } from 'chai';
import { reasonOf, suppressionColumns, toSuppression } from '../../web/src/csv-suppressions.js';

describe('dashboard: a suppression list read from CSV', () => {
  it("reads other providers' reasons as ours, and knows when it has no word for one", () => {
    const cases: [string, ReturnType<typeof reasonOf>][] = [
      ['HardBounce', 'bounced'],
      ['BOUNCE', 'bounced'],
      ['bounced', 'bounced'],
      ['SpamComplaint', 'complained'],
      ['COMPLAINT', 'complained'],
      ['Unsubscribe', 'unsubscribed'],
      ['unsubscribed', 'unsubscribed'],
      ['ManualSuppression', 'manual'],
      ['', 'manual'],
      ['Blocked', null],
    ];
    for (const [word, reason] of cases) expect(reasonOf(word), word).to.equal(reason);
  });

  it('finds the columns by the names exports give them, and refuses a file with neither addresses nor numbers', () => {
    expect(suppressionColumns(['Email Address', 'SuppressionReason', 'Origin'])).to.deep.equal({ email: 'Email Address', reason: 'SuppressionReason' });
    expect(suppressionColumns(['email', 'phone', 'person', 'reason', 'source', 'detail'])).to.deep.include({ email: 'email', phone: 'phone', person: 'person', detail: 'detail' });
    expect(() => suppressionColumns(['name', 'company'])).to.throw('The CSV has no email or phone column (its header row names: name, company).');
  });

  it("takes a row of our own export back as it was written, and skips an erased person's", () => {
    const columns = suppressionColumns(['email', 'phone', 'person', 'reason', 'source', 'detail']);
    expect(toSuppression({ email: 'a@example.org', phone: '', person: '', reason: 'complained', source: 'complaint', detail: "'=HYPERLINK(1)" }, columns)).to.deep.equal({
      email: 'a@example.org',
      reason: 'complained',
      detail: '=HYPERLINK(1)',
    });
    expect(toSuppression({ email: '', phone: '+14155550100', person: '', reason: 'manual', source: 'manual', detail: '' }, columns)).to.deep.equal({ phone: '+14155550100', reason: 'manual' });
    expect(toSuppression({ email: '', phone: '', person: 'k3y', reason: 'bounced', source: 'bounce', detail: '' }, columns)).to.deep.equal({
      skip: "an erased person's entry: no address is left to import",
    });
    expect(toSuppression({ email: 'b@example.org', reason: 'Blocked' }, suppressionColumns(['email', 'reason']))).to.deep.equal({
      email: 'b@example.org',
      reason: 'manual',
      detail: 'reason at the source: Blocked',
    });
  });
});
