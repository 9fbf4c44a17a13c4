import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDb } from '../../../../src/store/dialects/sqlite/db.js';
import { availableDrivers, type SqliteDriver } from '../../../../src/store/dialects/sqlite/driver.js';

/** The other driver this Node has, else the same one. */
const otherThan = (driver: SqliteDriver): SqliteDriver => availableDrivers().find((d) => d !== driver) ?? driver;

describe.each(availableDrivers())('the SQLite file on %s', (driver) => {
  let dir: string;
  let db: SqliteDb;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollbooth-port-'));
    db = SqliteDb.open(join(dir, 't.db'), driver);
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (k: string, v: string | null) => () =>
    db.execute({ sql: 'INSERT INTO t (k, v) VALUES (?, ?)', args: [k, v] }).rowsAffected;
  const keys = () => db.execute('SELECT k FROM t ORDER BY k').rows.map((r) => r.k);

  describe('the SQLite file', () => {
    it('commits the writes queued in one turn of the event loop together, and each write resolves with its own result', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => db.write(insert(`k${String(i).padStart(2, '0')}`, 'v'))),
      );
      expect(results).toEqual(Array.from({ length: 50 }, () => 1));
      expect(keys()).toHaveLength(50);
    });

    it('lets the other writes of a group commit when one of them fails, and rejects only that one', async () => {
      const [a, b, c] = await Promise.allSettled([
        db.write(insert('a', 'v')),
        db.write(insert('b', null)),
        db.write(insert('c', 'v')),
      ]);
      expect(a.status).toBe('fulfilled');
      expect(b.status).toBe('rejected');
      expect(c.status).toBe('fulfilled');
      expect(keys()).toEqual(['a', 'c']);
    });

    it('keeps all of a write or none of it: a write that fails halfway leaves nothing behind', async () => {
      const half = () => {
        insert('x', 'v')();
        insert('y', null)();
      };
      await expect(db.write(half)).rejects.toThrow();
      expect(keys()).toEqual([]);
    });

    it('has a write visible to the next read once its promise resolved', async () => {
      await db.write(insert('seen', 'v'));
      expect(keys()).toEqual(['seen']);
    });
  });

  describe('durability off the event loop', () => {
    it('syncs the commits made before the call, and many callers at once share the fsyncs', async () => {
      await db.write(insert('a', 'v'));
      const waits = Array.from({ length: 30 }, () => db.sync());
      await db.write(insert('b', 'v'));
      waits.push(db.sync());
      await Promise.all(waits);
      expect(keys()).toEqual(['a', 'b']);
      await db.sync(); // nothing new: resolves at once
    });

    it('keeps what was committed when the file is closed and opened again', async () => {
      await db.write(insert('kept', 'v'));
      await db.close();
      // Where this Node has two drivers, the other one reads the file: the same format, WAL and all.
      db = SqliteDb.open(join(dir, 't.db'), otherThan(driver));
      expect(keys()).toEqual(['kept']);
    });
  });

  describe('binding arguments', () => {
    it('binds undefined as NULL, booleans as 1 and 0, and named arguments by name, on every driver', () => {
      db.exec('CREATE TABLE b (k TEXT PRIMARY KEY, n INTEGER, f INTEGER)');
      db.execute({ sql: 'INSERT INTO b (k, n, f) VALUES (?, ?, ?)', args: ['u', undefined, true] });
      db.execute({ sql: 'INSERT INTO b (k, n, f) VALUES (:k, :n, :f)', args: { k: 'named', n: 7, f: false } });
      const rows = db.execute('SELECT k, n, f FROM b ORDER BY k').rows.map((r) => ({ ...r }));
      expect(rows).toEqual([
        { k: 'named', n: 7, f: 0 },
        { k: 'u', n: null, f: 1 },
      ]);
      expect(db.execute({ sql: 'UPDATE b SET n = ? WHERE k = ?', args: [1, 'u'] }).rowsAffected).toBe(1);
      expect(db.execute({ sql: 'DELETE FROM b RETURNING k', args: [] }).rows).toHaveLength(2);
    });
  });
});
