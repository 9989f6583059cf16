import { expect } from 'chai';
import { ERASED_ADDRESS, withoutAddress, withoutAddressInJson } from '../../../src/domain/privacy/erased-address.js';

describe('an erased address taken out of a text that quoted it', () => {
  it('replaces every mention, in any case, and leaves the rest', () => {
    expect(withoutAddress('Ann.Lee@Example.ORG is suppressed; so is ann.lee@example.org.', 'ann.lee@example.org')).to.equal(
      `${ERASED_ADDRESS} is suppressed; so is ${ERASED_ADDRESS}.`,
    );
    expect(withoutAddress('"ann.lee@example.org" (ann.lee@example.org)', 'ann.lee@example.org')).to.equal(`"${ERASED_ADDRESS}" (${ERASED_ADDRESS})`);
  });

  it("leaves another person's address that holds it (a longer local part, a longer domain)", () => {
    const text = 'joann.lee@example.org is suppressed; ann.lee@example.org.uk is suppressed; x.ann.lee@example.org too';
    expect(withoutAddress(text, 'ann.lee@example.org')).to.equal(text);
  });

  it('reads the characters of an address as characters, not a pattern', () => {
    expect(withoutAddress('a+b@x.org and a+bb@x.org and axb@x.org', 'a+b@x.org')).to.equal(`${ERASED_ADDRESS} and a+bb@x.org and axb@x.org`);
    expect(withoutAddress('no one here', '')).to.equal('no one here');
  });

  it('in JSON: the strings that quote it change, and the rest of the text stays byte for byte, escapes and key order included', () => {
    const json = '{"items":[{"status":400,"message":"Ann@X.org is suppressed","error":"Bad Request"},{"status":201,"messageLogId":"m1","queued":true}],"note":"line\\nann@x.org\\t\\u00e9"}';
    expect(withoutAddressInJson(json, 'ann@x.org')).to.equal(
      `{"items":[{"status":400,"message":"${ERASED_ADDRESS} is suppressed","error":"Bad Request"},{"status":201,"messageLogId":"m1","queued":true}],"note":"line\\n${ERASED_ADDRESS}\\té"}`,
    );
    const untouched = '{"b":"x \\"quoted\\" \\u00e9","a":[1,2]}';
    expect(withoutAddressInJson(untouched, 'ann@x.org')).to.equal(untouched);
  });
});
