import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoPort, freePort } from './demo-port.js';

let taken: Server;
let takenPort: number;
beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

describe("the demo's port", () => {
  it('is PORT when nothing listens there', async () => {
    const port = await freePort();
    expect(await demoPort({ PORT: String(port) })).toEqual({ port });
  });

  it('refuses a PORT something else listens on, naming a free PORT to use instead', async () => {
    await expect(demoPort({ PORT: String(takenPort) })).rejects.toThrow(
      new RegExp(`port ${takenPort} \\(PORT=${takenPort}\\) is already in use[\\s\\S]*PORT=\\d+ npm run demo`),
    );
  });

  it('is a free port, said so, when PORT is unset and 4021 is taken', async () => {
    const holder = createServer();
    const held = await new Promise<boolean>((resolve) => {
      holder.once('error', () => resolve(false)); // 4021 already taken by something else: the case under test anyway
      holder.listen(4021, '127.0.0.1', () => resolve(true));
    });
    try {
      const { port, note } = await demoPort({});
      expect(port).not.toBe(4021);
      expect(note).toMatch(/port 4021 is already in use[\s\S]*serves on port \d+ instead/);
    } finally {
      if (held) await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('refuses a PORT that is not a number', async () => {
    await expect(demoPort({ PORT: 'http' })).rejects.toThrow(/PORT=http is not a port number/);
  });
});
