import { databaseOf } from './connection-checks';

describe('databaseOf', () => {
  it('names the option that selects a database other than 0', () => {
    expect(databaseOf('redis://h:6379/9')).toEqual({ option: 'connection', db: 9 });
    expect(databaseOf('redis://h:6379?db=3')).toEqual({ option: 'connection', db: 3 });
    expect(databaseOf({ host: 'h', db: 2 })).toEqual({ option: 'connection.db', db: 2 });
    expect(databaseOf({ host: 'h', db: '4' as never })).toEqual({ option: 'connection.db', db: 4 });
  });

  it('is undefined for database 0 and for a cluster', () => {
    expect(databaseOf('redis://h:6379')).toBeUndefined();
    expect(databaseOf('redis://h:6379/0')).toBeUndefined();
    expect(databaseOf({ host: 'h' })).toBeUndefined();
    expect(databaseOf({ cluster: ['h:7000'] })).toBeUndefined();
  });
});
