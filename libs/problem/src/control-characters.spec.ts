import { escapeControlCharacters, fieldsWithControlCharacters, hasControlCharacter } from './control-characters';

describe('control characters', () => {
  const controls = [0x00, 0x01, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x7f, 0x80, 0x9f].map((code) =>
    String.fromCharCode(code),
  );

  it.each(controls.map((char) => [char.charCodeAt(0).toString(16), char]))(
    'finds U+%s anywhere in a value',
    (_hex, char) => {
      expect(hasControlCharacter(`${char}a`)).toBe(true);
      expect(hasControlCharacter(`a${char}b`)).toBe(true);
      expect(hasControlCharacter(`ab${char}`)).toBe(true);
    },
  );

  it('leaves printable text alone, whatever the script', () => {
    for (const text of ['ada@acme.test', 'Zoë Ωμέγα 漢字 🙂', ' ', '\u00a0', '\u2028']) {
      expect(hasControlCharacter(text)).toBe(false);
      expect(escapeControlCharacters(text)).toBe(text);
    }
  });

  it('writes control characters as escapes, so the value can be stored', () => {
    expect(escapeControlCharacters('ad\u0000a\n\u009f')).toBe('ad\\u0000a\\u000a\\u009f');
  });

  it('doubles a backslash, so a sent escape is never read as an escaped control character', () => {
    const sentAsText = 'ad\\u0000a'; // a backslash, then "u0000"
    expect(escapeControlCharacters(sentAsText)).toBe('ad\\\\u0000a');
    expect(escapeControlCharacters(sentAsText)).not.toBe(escapeControlCharacters('ad\u0000a'));
    expect(escapeControlCharacters('corp\\ada')).toBe('corp\\\\ada');
  });

  it('names every field holding one, nested and in keys', () => {
    expect(
      fieldsWithControlCharacters({
        body: { email: 'a\u0000@b', display_name: 'fine', tags: ['x', 'y\u001b'], ['k\u0007']: 'v' },
        query: { dimension: 'api' },
      }),
    ).toEqual(expect.arrayContaining(['body.email', 'body.tags.1', 'body.k\\u0007']));
    expect(fieldsWithControlCharacters({ body: { n: 1, ok: true, none: null } })).toEqual([]);
    const deep = JSON.parse(`${'['.repeat(100_000)}"\\u0000"${']'.repeat(100_000)}`) as unknown;
    expect(fieldsWithControlCharacters(deep)).toHaveLength(1);
  });
});
