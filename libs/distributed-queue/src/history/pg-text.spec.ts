import { pgJsonText, pgText } from './pg-text';

describe('pgText', () => {
  it('leaves text PostgreSQL takes as it is (the same string), paired surrogates included', () => {
    for (const s of ['', 'plain', 'ünïcødé 日本', 'emoji 😀 and 𝄞', '\\u0000 written out']) expect(pgText(s)).toBe(s);
  });

  it('writes NUL characters and unpaired surrogates as U+FFFD', () => {
    expect(pgText('a\u0000b\u0000')).toBe('a\ufffdb\ufffd');
    expect(pgText('high \ud800 alone')).toBe('high \ufffd alone');
    expect(pgText('low \udc00 alone')).toBe('low \ufffd alone');
    expect(pgText('\udc00\ud800')).toBe('\ufffd\ufffd');
    expect(pgText('ends high \ud83d')).toBe('ends high \ufffd');
    expect(pgText('pair 😀 then \u0000')).toBe('pair 😀 then \ufffd');
  });
});

describe('pgJsonText', () => {
  it('returns JSON text without a suspect escape as it is', () => {
    const json = '{"name":"Error","message":"quoted \\" and ü"}';
    expect(pgJsonText(json)).toBe(json);
  });

  it('rewrites strings holding a NUL or an unpaired surrogate (escaped or raw), keeping everything else', () => {
    expect(JSON.parse(pgJsonText(JSON.stringify({ name: 'N\u0000', message: 'm \ud800', n: 1 })))).toEqual({ name: 'N\ufffd', message: 'm \ufffd', n: 1 });
  });

  it('text that is no JSON (a raw NUL in a string) gets its characters replaced alone', () => {
    expect(pgJsonText('{"message":"raw \u0000 nul"}')).toBe('{"message":"raw \ufffd nul"}');
    expect(pgJsonText('not json \\u0000')).toBe('not json \\u0000');
  });

  it('keeps a written-out "\\u0000" (an escaped backslash, then u0000): it is no NUL', () => {
    const json = JSON.stringify({ message: 'see \\u0000 here' });
    expect(JSON.parse(pgJsonText(json))).toEqual({ message: 'see \\u0000 here' });
  });
});
