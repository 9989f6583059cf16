/**
 * SMS encoding and segments as SNS counts them: GSM 03.38 (basic set 1 septet, extension table
 * 2 septets), else UCS-2 in UTF-16 code units; 160/153 and 70/67 per segment; a segment never splits an
 * escape pair or a surrogate pair. An empty body is 0 segments.
 *
 * Deliberately code-point based, not grapheme based: a ZWJ emoji sequence or a letter with a combining
 * accent may be split between two segments (the handset joins them again), so this can count fewer
 * segments than a grapheme-aware counter such as `sms-segments-calculator`.
 */
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const basic = new Set(GSM_BASIC);
const extension = new Set(GSM_EXTENSION);

export type SmsEncoding = 'gsm7' | 'ucs2';

export const GSM7_SINGLE = 160;
export const GSM7_PART = 153;
export const UCS2_SINGLE = 70;
export const UCS2_PART = 67;

export interface SegmentCount {
  encoding: SmsEncoding;
  segments: number;
  /** septets (GSM-7) or UTF-16 code units (UCS-2) */
  units: number;
}

export interface SegmentedSms extends SegmentCount {
  /** the body cut into its segments (joined, they give the body back) */
  parts: string[];
}

/** Characters that fit GSM-7: 1 septet for the basic set, 2 (escape + char) for the extension table. */
export function gsmWidth(char: string): 1 | 2 | null {
  if (basic.has(char)) return 1;
  if (extension.has(char)) return 2;
  return null;
}

export function encodingOf(body: string): SmsEncoding {
  for (const c of body) if (gsmWidth(c) === null) return 'ucs2';
  return 'gsm7';
}

/** Cuts `chars` (each one indivisible, of the given width) into segments of at most `size` units. */
function pack(chars: string[], widths: number[], single: number, size: number): string[] {
  const total = widths.reduce((a, b) => a + b, 0);
  if (total === 0) return [];
  if (total <= single) return [chars.join('')];
  const parts: string[] = [];
  let current = '';
  let used = 0;
  chars.forEach((c, i) => {
    if (used + widths[i] > size) {
      parts.push(current);
      current = '';
      used = 0;
    }
    current += c;
    used += widths[i];
  });
  parts.push(current);
  return parts;
}

export function segmentSms(body: string): SegmentedSms {
  // Array.from splits by code point: an astral character stays one surrogate pair (2 units), never split.
  const chars = Array.from(body);
  const encoding = encodingOf(body);
  const widths = encoding === 'gsm7' ? chars.map((c) => gsmWidth(c)!) : chars.map((c) => c.length);
  const parts = encoding === 'gsm7' ? pack(chars, widths, GSM7_SINGLE, GSM7_PART) : pack(chars, widths, UCS2_SINGLE, UCS2_PART);
  return { encoding, segments: parts.length, units: widths.reduce((a, b) => a + b, 0), parts };
}

export function countSmsSegments(body: string): SegmentCount {
  const { encoding, segments, units } = segmentSms(body);
  return { encoding, segments, units };
}
