/** What an erased person's address reads as where a text that quoted it is kept (an Idempotency-Key's answer). */
export const ERASED_ADDRESS = 'an erased address';

// Next to a character a local part or a domain goes on with, the address is the end or the start of
// another one (`b` + `ann@x.org`, `ann@x.org` + `.uk`): that text is someone else's.
const BEFORE = "(?<![A-Za-z0-9!#$%&'*+/=?^_`{|}~.-])";
const AFTER = '(?![A-Za-z0-9-]|\\.[A-Za-z0-9])';

const quoted = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `text` with every mention of `address`, in any case, replaced by ERASED_ADDRESS. */
export function withoutAddress(text: string, address: string): string {
  if (!address.trim()) return text;
  return text.replace(new RegExp(`${BEFORE}${quoted(address.trim())}${AFTER}`, 'gi'), ERASED_ADDRESS);
}

/**
 * JSON text with `address` taken out of its strings (withoutAddress), read as what they say rather
 * than as written (an escape may stand next to it), and the rest left byte for byte: a replay
 * answers the text it was first given.
 */
export function withoutAddressInJson(json: string, address: string): string {
  return json.replace(/"(?:[^"\\]|\\.)*"/g, (literal) => {
    const text = JSON.parse(literal) as string;
    const redacted = withoutAddress(text, address);
    return redacted === text ? literal : JSON.stringify(redacted);
  });
}
