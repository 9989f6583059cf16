/**
 * SMS encoding and segment count by PROVIDERS.md §4: GSM 03.38 (basic set 1 septet, extension table
 * 2 septets), else UCS-2 in UTF-16 code units; 160/153 and 70/67 per segment; a segment never splits an
 * escape pair or a surrogate pair. An empty body is 0 segments.
 */
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

const basic = new Set(GSM_BASIC);
const extension = new Set(GSM_EXTENSION);

export type SmsEncoding = 'gsm7' | 'ucs2';

export interface SegmentCount {
  encoding: SmsEncoding;
  segments: number;
  /** septets (GSM-7) or UTF-16 code units (UCS-2) */
  units: number;
}

/** Packs units of the given widths into segments of `size`, never splitting one unit across two. */
function pack(widths: number[], single: number, size: number): number {
  const total = widths.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  if (total <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const w of widths) {
    if (used + w > size) {
      segments++;
      used = 0;
    }
    used += w;
  }
  return segments;
}

export function countSmsSegments(body: string): SegmentCount {
  const chars = Array.from(body);
  if (chars.every((c) => basic.has(c) || extension.has(c))) {
    const widths = chars.map((c) => (extension.has(c) ? 2 : 1));
    return { encoding: 'gsm7', segments: pack(widths, 160, 153), units: widths.reduce((a, b) => a + b, 0) };
  }
  // Array.from splits by code point: an astral character is one surrogate pair, 2 units, never split.
  const widths = chars.map((c) => c.length);
  return { encoding: 'ucs2', segments: pack(widths, 70, 67), units: body.length };
}
