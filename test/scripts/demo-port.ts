/**
 * The port `npm run demo` serves on: PORT when set, else 4021. A port something already listens on is never used
 * (the demo would reach that other server and pay it): with PORT set the demo stops saying so and which PORT to use;
 * without, it takes a free port and says which.
 */
import { createServer } from 'node:net';

/** Whether nothing listens on `port` of `host` (binding it succeeds). */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** A port free right now on `host` (the system picks it). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The demo's port, and a note when it is not the one asked for; throws, naming a free PORT, when PORT is taken. */
export async function demoPort(env: NodeJS.ProcessEnv, host = '127.0.0.1'): Promise<{ port: number; note?: string }> {
  const asked = env.PORT;
  const port = asked === undefined || asked === '' ? 4021 : Number(asked);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT=${asked} is not a port number: set PORT to a number from 1 to 65535, or 0 for a free one`);
  if (port === 0) return { port: await freePort(host) };
  if (await portIsFree(port, host)) return { port };
  const free = await freePort(host);
  if (asked !== undefined && asked !== '')
    throw new Error(
      `port ${port} (PORT=${asked}) is already in use on ${host}: something else listens there, and the demo would call and pay it. Run it on a free port, e.g. PORT=${free} npm run demo (PORT=0 picks one).`,
    );
  return {
    port: free,
    note: `port ${port} is already in use on ${host} (another server?): the demo serves on port ${free} instead (set PORT to choose).`,
  };
}
