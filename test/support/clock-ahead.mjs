// `node --import ./clock-ahead.mjs`: the process's clock (Date) runs CLOCK_OFFSET_MS ahead of the
// machine's, as on a host whose clock has drifted from the database's. Timers and
// performance.now() are untouched.
const offset = Number(process.env.CLOCK_OFFSET_MS ?? 0);
const RealDate = Date;
class DriftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }
  static now() {
    return RealDate.now() + offset;
  }
}
globalThis.Date = DriftedDate;
