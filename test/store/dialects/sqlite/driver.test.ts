import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { availableDrivers, connect } from '../../../../src/store/dialects/sqlite/driver.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
/** Node 22.16 added what the store reads of node:sqlite (a statement's columns, the transaction state). */
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 16);

describe('the SQLite driver', () => {
  it(`prefers Node's own SQLite where this Node has it (here ${process.version}), else libsql`, () => {
    expect(availableDrivers()).toEqual(hasNodeSqlite ? ['node:sqlite', 'libsql'] : ['libsql']);
  });

  it('tells a statement that returns rows from one that does not, on every driver', () => {
    for (const driver of availableDrivers()) {
      const db = connect(join(dir, `${driver.replace(/\W/g, '-')}.db`), 1000, driver);
      try {
        db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
        expect(db.prepare('SELECT k FROM t').reader).toBe(true);
        expect(db.prepare('INSERT INTO t (k) VALUES (?) RETURNING k').reader).toBe(true);
        expect(db.prepare('INSERT INTO t (k) VALUES (?)').reader).toBe(false);
        expect(db.inTransaction).toBe(false);
        db.exec('BEGIN IMMEDIATE');
        expect(db.inTransaction).toBe(true);
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    }
  });
});
