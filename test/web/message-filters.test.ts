import { expect } from 'chai';
import { queryString } from '../../web/src/pages/message-filters.js';

describe('dashboard: the messages query as a URL writes it', () => {
  it('encodes names as well as values, repeats a list, leaves out what is unset', () => {
    const q = queryString({ 'metadata[Zahlungs & Art]': 'Karte + Bar', 'metadata[50%]': '1=1', tag: ['a', 'b'], status: undefined, limit: 25 });
    expect(q).to.equal('metadata%5BZahlungs+%26+Art%5D=Karte+%2B+Bar&metadata%5B50%25%5D=1%3D1&tag=a&tag=b&limit=25');
    expect([...new URLSearchParams(q)]).to.deep.equal([
      ['metadata[Zahlungs & Art]', 'Karte + Bar'],
      ['metadata[50%]', '1=1'],
      ['tag', 'a'],
      ['tag', 'b'],
      ['limit', '25'],
    ]);
  });
});
