import { readFileSync } from 'node:fs';
import { scanSolidity } from './src/solidity/scan.ts';
const LIMIT = 512 * 1024;
const fill = (unit: string, head = '') => { let s = head; while (Buffer.byteLength(s) + Buffer.byteLength(unit) <= LIMIT) s += unit; return s; };
const fx = (n: string) => readFileSync(`test/fixtures/solidity/${n}.sol`, 'utf8');
const cases: Record<string, string> = {
  fixturesMix: fill(['clean', 'send-and-call', 'reentrancy-value-call', 'weak-randomness', 'comments-and-strings', 'tx-origin'].map(fx).join('\n')),
  hardhatConsole: fill(readFileSync('node_modules/hardhat/console.sol', 'utf8')),
  fallbackBroken: fill(fx('send-and-call'), '{'),
  garbage: fill('#@`\\'),
  tokenDense: fill('x.call{value: 1}(d);'),
  deepNesting: '('.repeat(LIMIT / 2) + ')'.repeat(LIMIT / 2),
};
const which = process.argv[2]!;
const src = cases[which]!;
const times: number[] = [];
let findings = 0;
for (let k = 0; k < 7; k++) { const t = performance.now(); findings = scanSolidity(src).findings.length; times.push(performance.now() - t); }
const warm = times.slice(1).sort((a, b) => a - b);
console.log(which.padEnd(15), Buffer.byteLength(src), 'B | cold', times[0]!.toFixed(0), 'ms | warm median', warm[3]!.toFixed(0), 'ms | findings', findings);
