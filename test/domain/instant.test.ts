import { expect } from 'chai';
import { givenInstant, INSTANT_MESSAGE, isAcceptedInstant, isPrintedTimestamp } from '../../src/domain/instant.js';

describe('domain/instant: instants JavaScript and PostgreSQL both read alike', () => {
  it('takes ISO 8601 instants with a real offset and a year from 0001 to 9999', () => {
    for (const ok of ['2026-11-27T10:00:00Z', '2026-11-27T10:00:00.123456789Z', '2026-11-27T10:00:00+14:00', '2026-11-27T10:00:00-14:00', '2026-11-27T10:00:00+05:45', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '9999-12-31T14:00:00-09:59']) {
      expect(isAcceptedInstant(ok), ok).to.equal(true);
      expect(givenInstant.safeParse(ok).success, ok).to.equal(true);
    }
  });

  it('refuses offsets past ±14:00, year 0000, and what lands outside 0001..9999 once the offset is applied', () => {
    for (const bad of ['2026-11-27T10:00:00-20:00', '2026-11-27T10:00:00+16:00', '2026-11-27T10:00:00-16:00', '2026-11-27T10:00:00+14:01', '2026-11-27T10:00:00+15:59', '0000-01-01T00:00:00Z', '0000-12-31T23:00:00-02:00', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-10:00']) {
      expect(isAcceptedInstant(bad), bad).to.equal(false);
      const parsed = givenInstant.safeParse(bad);
      expect(parsed.success, bad).to.equal(false);
      expect(parsed.error?.issues.map((i) => i.message), bad).to.deep.equal([INSTANT_MESSAGE]);
    }
  });

  it('words a malformed instant the same way', () => {
    for (const bad of ['yesterday', '2024-01-01', '2024-02-30T00:00:00Z', '2026-11-27T10:00:00+2000']) {
      expect(givenInstant.safeParse(bad).error?.issues[0].message, bad).to.equal(INSTANT_MESSAGE);
    }
  });

  it('knows a timestamp as PostgreSQL prints it, and nothing it would refuse', () => {
    for (const ok of ['2026-11-27 10:00:00+00', '2026-11-27 10:00:00.123456+00', '2026-11-27 10:00:00.5-05', '2026-11-27 10:00:00+05:30', '2024-02-29 23:59:59+14']) {
      expect(isPrintedTimestamp(ok), ok).to.equal(true);
    }
    for (const bad of ['2026-11-27 10:00:00-20', '2026-11-27 10:00:00+16', '2026-11-27 10:00:00+14:30', '0000-01-01 00:00:00+00', '2026-02-30 10:00:00+00', '2023-02-29 10:00:00+00', '2026-11-27 24:00:00+00', '2026-11-27 10:00:60+00', '2026-11-27T10:00:00.000Z', '2026-11-27 10:00:00', 'infinity', '2026-11-27 10:00:00 BC', '12026-11-27 10:00:00+00', '2026-11-27 10:00:00.1234567+00']) {
      expect(isPrintedTimestamp(bad), bad).to.equal(false);
    }
  });
});
