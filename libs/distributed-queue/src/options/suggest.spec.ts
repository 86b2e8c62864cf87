import { closestKey, didYouMean, editDistance } from './suggest';

describe('closestKey', () => {
  it('counts inserts, deletes, replacements and swapped neighbours as one edit each', () => {
    expect(editDistance('prot', 'port')).toBe(1);
    expect(editDistance('sentinel', 'sentinels')).toBe(1);
    expect(editDistance('hots', 'host')).toBe(1);
    expect(editDistance('db', 'db')).toBe(0);
  });

  it('suggests a near key and nothing for a far one', () => {
    expect(closestKey('prot', ['host', 'port', 'db'])).toBe('port');
    expect(closestKey('sentinel', ['sentinels', 'name'])).toBe('sentinels');
    expect(closestKey('PassWord', ['password'])).toBe('password');
    expect(closestKey('elephant', ['host', 'port'])).toBeUndefined();
    expect(didYouMean('hots', ['host', 'port'])).toBe(' (did you mean host?)');
    expect(didYouMean('xyz', ['host', 'port'])).toBe('');
  });
});
