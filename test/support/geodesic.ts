/** WGS84: semi-major axis (m) and flattening. */
const A = 6378137;
const F = 1 / 298.257223563;
const B = A * (1 - F);

/**
 * The WGS84 geodesic distance in km by Vincenty's inverse formula (accurate to well under a metre): an independent
 * reference for geo-distance's spherical answer. NaN when the iteration does not converge (nearly antipodal points).
 */
export function vincentyKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const L = (lng2 - lng1) * rad;
  const U1 = Math.atan((1 - F) * Math.tan(lat1 * rad));
  const U2 = Math.atan((1 - F) * Math.tan(lat2 * rad));
  const [sU1, cU1, sU2, cU2] = [Math.sin(U1), Math.cos(U1), Math.sin(U2), Math.cos(U2)];
  let lambda = L;
  for (let i = 0; i < 200; i++) {
    const [sl, cl] = [Math.sin(lambda), Math.cos(lambda)];
    const sinS = Math.hypot(cU2 * sl, cU1 * sU2 - sU1 * cU2 * cl);
    if (sinS === 0) return 0;
    const cosS = sU1 * sU2 + cU1 * cU2 * cl;
    const sigma = Math.atan2(sinS, cosS);
    const sinA = (cU1 * cU2 * sl) / sinS;
    const cos2A = 1 - sinA * sinA;
    const c2m = cos2A !== 0 ? cosS - (2 * sU1 * sU2) / cos2A : 0;
    const C = (F / 16) * cos2A * (4 + F * (4 - 3 * cos2A));
    const next = L + (1 - C) * F * sinA * (sigma + C * sinS * (c2m + C * cosS * (-1 + 2 * c2m * c2m)));
    const converged = Math.abs(next - lambda) < 1e-12;
    lambda = next;
    if (!converged) continue;
    const u2 = (cos2A * (A * A - B * B)) / (B * B);
    const a = 1 + (u2 / 16384) * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)));
    const b = (u2 / 1024) * (256 + u2 * (-128 + u2 * (74 - 47 * u2)));
    const dSigma =
      b *
      sinS *
      (c2m + (b / 4) * (cosS * (-1 + 2 * c2m * c2m) - (b / 6) * c2m * (-3 + 4 * sinS * sinS) * (-3 + 4 * c2m * c2m)));
    return (B * a * (sigma - dSigma)) / 1000;
  }
  return NaN;
}
