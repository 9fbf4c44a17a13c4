import { z } from 'zod';
import { defineTool, unknownFields } from '../src/tool/tool.js';

/** IUGG mean Earth radius in kilometres. */
const EARTH_RADIUS_KM = 6371.0088;
/** Kilometres in one international mile. */
const KM_PER_MILE = 1.609344;

const PointSchema = (name: string) =>
  z
    .strictObject(
      {
        lat: z
          .number()
          .min(-90, `${name}.lat must be between -90 and 90 decimal degrees`)
          .max(90, `${name}.lat must be between -90 and 90 decimal degrees`)
          .describe('Latitude in decimal degrees, from -90 (south pole) to 90 (north pole).'),
        lng: z
          .number()
          .min(-180, `${name}.lng must be between -180 and 180 decimal degrees`)
          .max(180, `${name}.lng must be between -180 and 180 decimal degrees`)
          .describe('Longitude in decimal degrees, from -180 to 180 (east positive).'),
      },
      { error: unknownFields },
    )
    .describe(`The ${name === 'from' ? 'start' : 'end'} point, as {lat, lng} in decimal degrees (WGS84).`);

const GeoDistanceInputSchema = () =>
  z.object({
    from: PointSchema('from'),
    to: PointSchema('to'),
  });

const GeoDistanceOutputSchema = () =>
  z.object({
    km: z.number().describe('Great-circle distance in kilometres, rounded to 3 decimals (metres).'),
    miles: z.number().describe('Great-circle distance in international miles, rounded to 3 decimals.'),
  });

const toRadians = (degrees: number): number => (degrees * Math.PI) / 180;
const round3 = (value: number): number => Math.round(value * 1000) / 1000;

/** Great-circle distance between two points on a sphere of radius EARTH_RADIUS_KM, by the haversine formula. */
function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const phi1 = toRadians(lat1);
  const phi2 = toRadians(lat2);
  const sinHalfDLat = Math.sin((phi2 - phi1) / 2);
  const sinHalfDLng = Math.sin(toRadians(lng2 - lng1) / 2);
  const a = sinHalfDLat * sinHalfDLat + Math.cos(phi1) * Math.cos(phi2) * sinHalfDLng * sinHalfDLng;
  // Clamp against rounding so near-antipodal points never yield NaN.
  const h = Math.min(1, Math.max(0, a));
  return 2 * EARTH_RADIUS_KM * Math.atan2(Math.sqrt(h), Math.sqrt(1 - h));
}

/** Great-circle distance between two latitude/longitude points, in kilometres and miles. */
export const geoDistance = defineTool({
  name: 'geo-distance',
  title: 'Great-circle distance between two points',
  description:
    'Returns the great-circle (shortest surface) distance between two points given as {lat, lng} in decimal ' +
    'degrees, in kilometres (`km`) and international miles (`miles`, km / 1.609344). Uses the haversine formula ' +
    'on a sphere with the IUGG mean Earth radius of 6371.0088 km, so results can differ from ellipsoidal ' +
    '(WGS84 geodesic) distances by up to about 0.56% (short north–south routes near the equator) and up to about ' +
    '38 km (long routes). Both values are rounded to 3 decimals (miles are converted ' +
    'from the unrounded km). Latitude must be in [-90, 90] and longitude in [-180, 180]. Deterministic, no ' +
    'external calls.',
  group: 'tools',
  method: 'POST',
  path: '/api/geo-distance',
  input: GeoDistanceInputSchema,
  output: GeoDistanceOutputSchema,
  pricing: { usd: '0.001', accepts: 'every-network' },
  example: { from: { lat: 51.5074, lng: -0.1278 }, to: { lat: 48.8566, lng: 2.3522 } },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ from, to }) => {
    const km = haversineKm(from.lat, from.lng, to.lat, to.lng);
    return { km: round3(km), miles: round3(km / KM_PER_MILE) };
  },
});
