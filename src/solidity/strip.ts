/** Source with comments and string literals blanked out, plus what was learned while doing so. */
export interface StrippedSource {
  /**
   * The source with every comment and string literal replaced by spaces; newlines and offsets are
   * kept.
   */
  code: string;
  /** False when a string literal or block comment is left unterminated. */
  complete: boolean;
  /** True when some comment contains an `SPDX-License-Identifier:` tag. */
  hasSpdx: boolean;
}

const SPDX = /SPDX-License-Identifier\s*:/;

function blank(text: string): string {
  return text.includes('\n') ? text.replace(/[^\n]/g, ' ') : ' '.repeat(text.length);
}

/**
 * End offset (exclusive) of the string literal opened at `start`, and whether it was closed on its
 * line.
 */
function stringEnd(source: string, start: number): { end: number; closed: boolean } {
  const quote = source.charCodeAt(start);
  let j = start + 1;
  while (j < source.length) {
    const c = source.charCodeAt(j);
    if (c === 92 /* \ */) {
      j += 2;
    } else if (c === quote) {
      return { end: j + 1, closed: true };
    } else if (c === 10 /* \n */ || c === 13 /* \r */) {
      return { end: j, closed: false };
    } else {
      j++;
    }
  }
  return { end: source.length, closed: false };
}

/**
 * Blanks comments and string literals in one linear pass, keeping every offset and line number
 * intact.
 */
export function stripCommentsAndStrings(source: string): StrippedSource {
  const parts: string[] = [];
  let complete = true;
  let hasSpdx = false;
  let copied = 0;
  const interesting = /\/[/*]|["']/g;
  for (let m = interesting.exec(source); m !== null; m = interesting.exec(source)) {
    const start = m.index;
    let end: number;
    if (m[0] === '//') {
      const nl = source.indexOf('\n', start);
      end = nl === -1 ? source.length : nl;
    } else if (m[0] === '/*') {
      const close = source.indexOf('*/', start + 2);
      if (close === -1) complete = false;
      end = close === -1 ? source.length : close + 2;
    } else {
      const str = stringEnd(source, start);
      if (!str.closed) complete = false;
      end = str.end;
    }
    const text = source.slice(start, end);
    if (!hasSpdx && m[0] !== '"' && m[0] !== "'" && SPDX.test(text)) hasSpdx = true;
    parts.push(source.slice(copied, start), blank(text));
    copied = end;
    interesting.lastIndex = end;
  }
  parts.push(source.slice(copied));
  return { code: parts.join(''), complete, hasSpdx };
}
