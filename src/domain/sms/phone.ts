import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * A phone number in E.164, or null. `+…` numbers of any country are accepted when valid; a number
 * without `+` is read as a US number (so a 10-digit US number such as `(415) 555-0100` becomes `+1…`).
 */
export function parsePhoneNumber(input: string): string | null {
  const trimmed = input.trim();
  if (!trimmed || /[a-z]/i.test(trimmed) || trimmed.length > 32) return null;
  const parsed = trimmed.startsWith('+') ? parsePhoneNumberFromString(trimmed) : parsePhoneNumberFromString(trimmed, 'US');
  return parsed && parsed.isValid() ? parsed.number : null;
}

/** Why `input` is refused where parsePhoneNumber found no number in it, in the words every such refusal uses. */
export const notAPhoneNumber = (input: string): string => `${input} is not a valid phone number (E.164, or a 10-digit US number)`;
