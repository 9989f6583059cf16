import { expect } from 'chai';
import { metadataKeyProblem } from '../../../src/domain/messages/labels.js';

describe('metadata keys', () => {
  it('any text of 1 to 256 characters is a key: spaces, punctuation, letters of any script', () => {
    for (const key of ['orderId', 'order id', 'a=b', 'Größe', '注文番号', '50% off', 'x[y]', 'constructor', 'k'.repeat(256)]) {
      expect(metadataKeyProblem(key), key).to.equal(null);
    }
  });

  it('an empty key or one over 256 characters is refused', () => {
    expect(metadataKeyProblem('')).to.equal('a metadata key is 1 to 256 characters');
    expect(metadataKeyProblem('k'.repeat(257))).to.equal('a metadata key is 1 to 256 characters');
  });

  it("msg_id is the service's own; __proto__ is refused with why, since an object cannot keep it as an entry", () => {
    expect(metadataKeyProblem('msg_id')).to.equal('metadata key msg_id is reserved');
    expect(metadataKeyProblem('__proto__')).to.equal(
      "metadata key __proto__ cannot be kept: it is not a plain object key in JavaScript (it names the object's prototype)",
    );
  });
});
