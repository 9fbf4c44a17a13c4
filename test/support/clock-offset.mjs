/**
 * A preload (`node --import`) for a spawned process whose clock runs TOLLBOOTH_TEST_CLOCK_OFFSET_MS ahead: `Date.now()`
 * and `new Date()` read the shifted time, so a restart can be "ten minutes after the kill" without the test waiting
 * ten minutes (leases and stale rows written by the dead process are judged by the shifted clock).
 */
const offset = Number(process.env.TOLLBOOTH_TEST_CLOCK_OFFSET_MS ?? 0);
const RealDate = Date;
class ShiftedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }
  static now() {
    return RealDate.now() + offset;
  }
}
globalThis.Date = ShiftedDate;
