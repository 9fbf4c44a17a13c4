import { describe, expect, it } from 'vitest';
import { geoDistance } from '../../tools/geo-distance.js';
import { testContext } from '../support/context.js';
import { vincentyKm } from '../support/geodesic.js';

const EARTH_RADIUS_KM = 6371.0088;
const london = { lat: 51.5074, lng: -0.1278 };
const paris = { lat: 48.8566, lng: 2.3522 };

async function call(body: unknown) {
  const result = await geoDistance.handler(geoDistance.input.parse(body), testContext());
  return geoDistance.output.parse(result);
}

function rejection(body: unknown): { paths: string[]; messages: string[] } {
  const parsed = geoDistance.input.safeParse(body);
  expect(parsed.success).toBe(false);
  const issues = parsed.error?.issues ?? [];
  return { paths: issues.map((i) => i.path.join('.')), messages: issues.map((i) => i.message) };
}

describe('geo-distance', () => {
  it('measures London to Paris as about 343.6 km', async () => {
    const out = await call({ from: london, to: paris });
    expect(Math.abs(out.km - 343.557)).toBeLessThan(0.5);
    expect(out.miles).toBeCloseTo(out.km / 1.609344, 2);
  });

  it('measures New York to London as about 5570 km', async () => {
    const out = await call({ from: { lat: 40.7128, lng: -74.006 }, to: london });
    expect(Math.abs(out.km - 5570.23)).toBeLessThan(0.5);
  });

  it('returns zero for the same point', async () => {
    expect(await call({ from: london, to: london })).toEqual({ km: 0, miles: 0 });
  });

  it('returns half the circumference (pi times the radius) for antipodal points', async () => {
    const halfCircumference = Math.round(Math.PI * EARTH_RADIUS_KM * 1000) / 1000;
    expect((await call({ from: { lat: 0, lng: 0 }, to: { lat: 0, lng: 180 } })).km).toBe(halfCircumference);
    expect((await call({ from: { lat: 90, lng: 0 }, to: { lat: -90, lng: 0 } })).km).toBe(halfCircumference);
    expect((await call({ from: { lat: 30, lng: 40 }, to: { lat: -30, lng: -140 } })).km).toBe(halfCircumference);
  });

  it('is symmetric in its two points', async () => {
    const there = await call({ from: london, to: paris });
    const back = await call({ from: paris, to: london });
    expect(back).toEqual(there);
  });

  it('takes the short way across the antimeridian', async () => {
    const out = await call({ from: { lat: 0, lng: 179.5 }, to: { lat: 0, lng: -179.5 } });
    expect(out.km).toBeCloseTo((Math.PI / 180) * EARTH_RADIUS_KM, 2);
  });

  it('rounds both values to 3 decimals', async () => {
    const out = await call({ from: london, to: paris });
    expect(Math.round(out.km * 1000) / 1000).toBe(out.km);
    expect(Math.round(out.miles * 1000) / 1000).toBe(out.miles);
  });

  it('rejects a latitude outside [-90, 90] with a message naming the range', () => {
    const { paths, messages } = rejection({ from: { lat: 91, lng: 0 }, to: paris });
    expect(paths).toEqual(['from.lat']);
    expect(messages[0]).toMatch(/-90 and 90/);
    expect(rejection({ from: london, to: { lat: -90.1, lng: 0 } }).paths).toEqual(['to.lat']);
  });

  it('rejects a longitude outside [-180, 180] with a message naming the range', () => {
    const { paths, messages } = rejection({ from: london, to: { lat: 0, lng: 180.5 } });
    expect(paths).toEqual(['to.lng']);
    expect(messages[0]).toMatch(/-180 and 180/);
    expect(rejection({ from: { lat: 0, lng: -181 }, to: paris }).paths).toEqual(['from.lng']);
  });

  it('rejects missing points and non-numeric coordinates', () => {
    expect(rejection({ from: london }).paths).toContain('to');
    expect(rejection({ from: { lat: '51.5', lng: 0 }, to: paris }).paths).toContain('from.lat');
  });

  it('differs from the WGS84 geodesic (Vincenty) by at most what its description says: 0.56% and 38 km', async () => {
    let maxRelative = 0;
    let maxKm = 0;
    for (let lat1 = -90; lat1 <= 90; lat1 += 5) {
      for (let lat2 = -90; lat2 <= 90; lat2 += 5) {
        for (const lng of [0, 1, 5, 20, 45, 90, 135, 160, 175]) {
          const geodesic = vincentyKm(lat1, 0, lat2, lng);
          if (!Number.isFinite(geodesic) || geodesic < 100) continue;
          const { km } = await call({ from: { lat: lat1, lng: 0 }, to: { lat: lat2, lng } });
          maxRelative = Math.max(maxRelative, Math.abs(km - geodesic) / geodesic);
          maxKm = Math.max(maxKm, Math.abs(km - geodesic));
        }
      }
    }
    expect((maxRelative * 100).toFixed(2)).toBe('0.56');
    expect(Math.round(maxKm)).toBe(38);
    expect(geoDistance.description).toContain('up to about 0.56%');
    expect(geoDistance.description).toContain('38 km');
  });
});
