import { describe, expect, it } from 'vitest';
import { compileLinearRegex } from '../src/linear-regex.ts';
import { requiredLiteral } from '../src/required-literal.ts';

describe('requiredLiteral', () => {
  it.each<[string, string | undefined]>([
    ['function\\s+[A-Za-z_$][A-Za-z0-9_$]*\\s*\\(', 'function'],
    ['import (\\w+) from', 'import '],
    ['Licensed under the', 'Licensed under the'],
    ['colou?r', 'colo'],
    ['ab+c', 'ab'],
    ['xa{2}y', 'xa'],
    ['ya{0,2}zz', 'zz'],
    ['\\.then\\(', '.then('],
    ['foo|bar', undefined],
    ['(?i)needle', undefined],
    ['a(?i:b)cd', undefined],
    ['(?P<name>\\w+)=value', '=value'],
    ['[a-z]+_test', '_test'],
    ['\\x41BC\\u{44}EFG', 'EFG'],
    ['\\p{Greek}+ alpha', ' alpha'],
    ['a.b', undefined],
    ['é+ café', ' café'],
  ])('%s → %s', (pattern, expected) => {
    expect(requiredLiteral(pattern)).toBe(expected);
  });

  it('every line a random pattern matches contains the piece it names (5,000 patterns)', () => {
    const tokens = [
      'a',
      'b',
      'c',
      'ab',
      'ba',
      '\\.',
      '.',
      '[ab]',
      '[^a]',
      '(a|b)',
      '(?:ab)',
      'a?',
      'b*',
      'c+',
      'a{2}',
      'b{0,2}',
      'c{1,}',
      '\\d',
      '\\s',
      ' ',
      '(x|yz)+',
      '(ab)?',
      '[.]',
      'x',
      'y',
      'z',
      '1',
      '|',
      '(?i)a',
      '\\b',
      'a*?',
      'b+?',
    ];
    let seed = 12345;
    const rand = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const alphabet = 'abcxyz. 1';
    const lines = Array.from({ length: 300 }, () => Array.from({ length: 1 + rand(14) }, () => alphabet[rand(alphabet.length)]).join(''));
    let checked = 0;
    for (let k = 0; k < 5000; k++) {
      const pattern = Array.from({ length: 1 + rand(6) }, () => tokens[rand(tokens.length)]).join('');
      let re: ReturnType<typeof compileLinearRegex>;
      try {
        re = compileLinearRegex(pattern);
      } catch {
        continue;
      }
      const piece = requiredLiteral(pattern);
      if (piece === undefined) continue;
      for (const line of lines) {
        if (re.test(line) && !line.includes(piece)) throw new Error(`'${pattern}' matches '${line}', which lacks '${piece}'`);
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(1000);
  });
});
