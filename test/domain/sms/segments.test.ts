import { expect } from 'chai';
import { SegmentedMessage } from 'sms-segments-calculator';
import { countSmsSegments, segmentSms } from '../../../src/domain/sms/segments.js';
import { seededRandom } from '../../support/seeded-random.js';

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '\f^{}\\[~]|€';

/** Reference vectors of SNS's segment counting, verbatim. */
const PROVIDER_VECTORS: Array<[string, string, number, 'gsm7' | 'ucs2']> = [
  ['{ + 158×a', '{' + 'a'.repeat(158), 1, 'gsm7'],
  ['{ + 159×a', '{' + 'a'.repeat(159), 2, 'gsm7'],
  ['😜 + 68×a', '😜' + 'a'.repeat(68), 1, 'ucs2'],
  ['😜 + 69×a', '😜' + 'a'.repeat(69), 2, 'ucs2'],
  ['80×€', '€'.repeat(80), 1, 'gsm7'],
  ['81×€', '€'.repeat(81), 2, 'gsm7'],
  ['1530 GSM chars', 'a'.repeat(1530), 10, 'gsm7'],
  ['1531 GSM chars', 'a'.repeat(1531), 11, 'gsm7'],
];

/**
 * Where the reference rules and `sms-segments-calculator` disagree, the rules win. The package never
 * splits a grapheme cluster (ZWJ sequence, skin-tone modifier, flag, letter + combining mark) between
 * segments; the rules only forbid splitting an escape pair or a surrogate pair. So when a
 * multi-code-point grapheme straddles one of our segment boundaries the package pushes it whole into
 * the next segment and may count more. And it counts an empty body as 1 segment (we say 0; the API
 * refuses an empty body anyway).
 */
const DISAGREEMENTS: Array<{ name: string; body: string; ours: number; pkg: number }> = [
  { name: 'skin-tone emoji across the 67-unit boundary', body: 'a'.repeat(65) + '👍🏽' + 'b'.repeat(65), ours: 2, pkg: 3 },
  { name: 'ZWJ family across the boundary', body: 'a'.repeat(64) + '👨‍👩‍👧' + 'b'.repeat(62), ours: 2, pkg: 3 },
  { name: 'e + combining acute across the boundary', body: 'a'.repeat(66) + 'e\u0301' + 'b'.repeat(66), ours: 2, pkg: 3 },
  { name: 'flag (two regional indicators) across the boundary', body: 'a'.repeat(65) + '🇺🇸' + 'b'.repeat(65), ours: 2, pkg: 3 },
  { name: 'empty body', body: '', ours: 0, pkg: 1 },
];

const ACCENTS_NON_GSM = ['ç', 'á', 'í', 'ó', 'ú', 'â', 'ê', 'õ', 'ÿ', 'Ł', 'ő', 'ş', 'ğ', 'Č'];
const ACCENTS_GSM = ['é', 'è', 'ù', 'ì', 'ò', 'Ç', 'Ä', 'ö', 'ñ', 'Ü', 'à', 'Å', 'ß'];
const EMOJI = ['😜', '🎉', '👍', '🚀', '❤', '☺', '✓', '𝄞'];
const ZWJ = ['👨‍👩‍👧‍👦', '🏳️‍🌈', '👩🏽‍💻', '🇺🇸', '🇫🇷', '👍🏿', '1️⃣', 'e\u0301', 'ñ\u0303', '👁️‍🗨️'];
const OTHER_UCS2 = ['`', '“', '”', '’', '\u00a0', '—', '…', 'Ж', '中', '\r\n'];

type Kind = 'gsm' | 'extension' | 'accents' | 'emoji' | 'zwj' | 'mixed';

function generate(next: () => number, kind: Kind): string {
  const pick = <T>(xs: readonly T[] | string) => xs[Math.floor(next() * xs.length)] as T;
  const gsmChar = () => pick<string>(GSM_BASIC);
  const token = (): string => {
    const r = next();
    switch (kind) {
      case 'gsm':
        return gsmChar();
      case 'extension':
        return r < 0.25 ? pick<string>(GSM_EXTENSION) : gsmChar();
      case 'accents':
        return r < 0.03 ? pick(ACCENTS_NON_GSM) : r < 0.3 ? pick(ACCENTS_GSM) : gsmChar();
      case 'emoji':
        return r < 0.1 ? pick(EMOJI) : gsmChar();
      case 'zwj':
        return r < 0.08 ? pick(ZWJ) : gsmChar();
      case 'mixed':
        return r < 0.03 ? pick(ZWJ) : r < 0.06 ? pick(EMOJI) : r < 0.09 ? pick(OTHER_UCS2) : r < 0.15 ? pick<string>(GSM_EXTENSION) : r < 0.2 ? pick(ACCENTS_GSM) : gsmChar();
    }
  };
  // Lengths cluster around the segment boundaries, where counting goes wrong; long ones are rarer
  // because the package takes a few milliseconds per 100 characters.
  const short = [1, 60, 67, 70, 71, 134, 135, 150, 153, 160, 161, 201, 306, 307, 459];
  const long = [670, 671, 1530, 1531];
  const target = Math.max(1, pick(next() < 0.9 ? short : long) + Math.floor(next() * 9) - 4);
  let s = '';
  while (s.length < target) s += token();
  return s;
}

/** True when a grapheme of more than one code point is cut by one of our segment boundaries. */
function graphemeStraddles(parts: string[], graphemes: string[]): boolean {
  const cuts = new Set<number>();
  let offset = 0;
  for (const p of parts.slice(0, -1)) cuts.add((offset += p.length));
  let at = 0;
  for (const g of graphemes) {
    for (let i = at + 1; i < at + g.length; i++) if (cuts.has(i)) return true;
    at += g.length;
  }
  return false;
}

describe('SMS segments (GSM 03.38 / UCS-2, as SNS counts them)', () => {
  for (const [name, body, segments, encoding] of PROVIDER_VECTORS) {
    it(`${name} → ${segments} (${encoding})`, () => {
      expect(countSmsSegments(body)).to.include({ segments, encoding });
    });
  }

  it('every GSM basic character is 1 septet, every extension character 2', () => {
    expect([...GSM_BASIC]).to.have.length(127);
    for (const c of GSM_BASIC) expect(countSmsSegments(c), JSON.stringify(c)).to.deep.equal({ encoding: 'gsm7', segments: 1, units: 1 });
    for (const c of GSM_EXTENSION) expect(countSmsSegments(c), JSON.stringify(c)).to.deep.equal({ encoding: 'gsm7', segments: 1, units: 2 });
  });

  it('backtick, lowercase ç, smart quotes, NBSP and emoji force UCS-2', () => {
    for (const c of ['`', 'ç', '“', '’', '\u00a0', '😜']) expect(countSmsSegments(`hello ${c}`).encoding, JSON.stringify(c)).to.equal('ucs2');
  });

  it('GSM-7: never splits an escape pair, so a segment may end at 152 septets', () => {
    const body = 'a'.repeat(152) + '{' + 'a'.repeat(7);
    const s = segmentSms(body);
    expect(s).to.include({ encoding: 'gsm7', segments: 2, units: 161 });
    expect(s.parts[0]).to.equal('a'.repeat(152));
    expect(s.parts.join('')).to.equal(body);
  });

  it('UCS-2: counts UTF-16 units and never splits a surrogate pair (a segment may end at 66)', () => {
    const body = 'ж'.repeat(66) + '😜' + 'ж'.repeat(5);
    const s = segmentSms(body);
    expect(s).to.include({ encoding: 'ucs2', segments: 2, units: 73 });
    expect(s.parts[0]).to.equal('ж'.repeat(66));
    expect(countSmsSegments('😜'.repeat(35))).to.include({ segments: 1, units: 70 });
    expect(countSmsSegments('ж'.repeat(670))).to.include({ segments: 10 });
    expect(countSmsSegments('ж'.repeat(671))).to.include({ segments: 11 });
  });

  it('an empty body is 0 segments', () => {
    expect(countSmsSegments('')).to.deep.equal({ encoding: 'gsm7', segments: 0, units: 0 });
  });

  describe('against sms-segments-calculator', () => {
    for (const d of DISAGREEMENTS) {
      it(`documented disagreement, the reference rules win: ${d.name}`, () => {
        expect(countSmsSegments(d.body).segments).to.equal(d.ours);
        expect(new SegmentedMessage(d.body).segmentsCount).to.equal(d.pkg);
      });
    }

    it('agrees on the reference vectors', () => {
      for (const [name, body, segments, encoding] of PROVIDER_VECTORS) {
        const pkg = new SegmentedMessage(body);
        expect(pkg.segmentsCount, name).to.equal(segments);
        expect(pkg.encodingName, name).to.equal(encoding === 'gsm7' ? 'GSM-7' : 'UCS-2');
      }
    });

    it('agrees on 3,000 generated strings (seed 20240609) wherever the two rules agree', function () {
      this.timeout(60_000);
      const next = seededRandom(20240609);
      const kinds: Kind[] = ['gsm', 'extension', 'accents', 'emoji', 'zwj', 'mixed'];
      const seen = { compared: 0, straddling: 0, gsm7: 0, ucs2: 0 };
      for (let i = 0; i < 3000; i++) {
        const body = generate(next, kinds[i % kinds.length]);
        const ours = segmentSms(body);
        const pkg = new SegmentedMessage(body);
        const where = `#${i} ${JSON.stringify(body.slice(0, 40))}… (${body.length} units)`;
        // Encoding: the character sets are the same, so always equal.
        expect(pkg.encodingName, where).to.equal(ours.encoding === 'gsm7' ? 'GSM-7' : 'UCS-2');
        seen[ours.encoding]++;
        // Our own invariants: the parts give the body back, each fits its segment, no surrogate pair is cut.
        expect(ours.parts.join(''), where).to.equal(body);
        for (const p of ours.parts) {
          const size = ours.encoding === 'gsm7' ? [...p].reduce((n, c) => n + ('\f^{}\\[~]|€'.includes(c) ? 2 : 1), 0) : p.length;
          expect(size, where).to.be.at.most(ours.segments === 1 ? (ours.encoding === 'gsm7' ? 160 : 70) : ours.encoding === 'gsm7' ? 153 : 67);
          expect(/^[\udc00-\udfff]/.test(p) || /[\ud800-\udbff]$/.test(p), where).to.equal(false);
        }
        if (ours.encoding === 'ucs2' && graphemeStraddles(ours.parts, pkg.graphemes)) {
          // The package keeps the cluster whole in the next segment: never fewer segments than ours.
          seen.straddling++;
          expect(pkg.segmentsCount, where).to.be.at.least(ours.segments);
          continue;
        }
        seen.compared++;
        expect(ours.segments, where).to.equal(pkg.segmentsCount);
      }
      // The generator must have exercised both encodings and both branches.
      expect(seen.gsm7).to.be.above(800);
      expect(seen.ucs2).to.be.above(800);
      expect(seen.straddling).to.be.above(5);
      expect(seen.compared).to.be.above(2500);
    });
  });
});
