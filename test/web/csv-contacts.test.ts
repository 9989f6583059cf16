import { expect } from 'chai';
import { withoutDuplicates } from '../../web/src/csv-contacts.js';

describe('dashboard: a contacts CSV sends each address once', () => {
  it('leaves out a later row of an address already in the file, by its line, however far apart and however written', () => {
    const rows: { line: number; item: { email?: string } }[] = [
      { line: 2, item: { email: 'ada@example.org' } },
      { line: 3, item: { email: undefined } },
      { line: 4, item: { email: undefined } },
      { line: 512, item: { email: 'bob@example.org' } },
      { line: 652, item: { email: ' Bob@Example.ORG ' } },
      { line: 700, item: { email: 'ada@example.org' } },
    ];
    const { items, skipped } = withoutDuplicates(rows);
    // rows without an address are the service's to refuse, in words of its own
    expect(items.map((r) => r.line)).to.deep.equal([2, 3, 4, 512]);
    expect(skipped).to.deep.equal(['Line 652 ( Bob@Example.ORG ): duplicate of line 512', 'Line 700 (ada@example.org): duplicate of line 2']);
  });
});
