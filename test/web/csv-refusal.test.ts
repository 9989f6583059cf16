import { expect } from 'chai';
import { refusalText } from '../../web/src/csv-refusal.js';

describe("dashboard: an import's refused entry, in the file's terms", () => {
  const lines = [502, 503, 510, 652];

  it('names the line and what the entry named', () => {
    expect(refusalText({ index: 1, email: 'not-an-email', message: 'email: Invalid email address' }, lines)).to.equal('Line 503 (not-an-email): email: Invalid email address');
    expect(refusalText({ index: 0, value: '+1555', message: 'phone: not a number' }, lines)).to.equal('Line 502 (+1555): phone: not a number');
    expect(refusalText({ index: 2, message: 'no email or phone' }, lines)).to.equal('Line 510: no email or phone');
  });

  it("says the other entry of a duplicate by its line, not by its index in the batch", () => {
    expect(refusalText({ index: 3, email: 'x@y.example', message: 'duplicate of contacts[2] in this request' }, lines)).to.equal('Line 652 (x@y.example): duplicate of line 510');
    // an index the batch does not have is left as the service said it
    expect(refusalText({ index: 3, email: 'x@y.example', message: 'duplicate of contacts[9] in this request' }, lines)).to.equal('Line 652 (x@y.example): duplicate of contacts[9] in this request');
  });
});
