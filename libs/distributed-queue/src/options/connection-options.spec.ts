import { readFileSync } from 'fs';
import { join } from 'path';
import { InvalidOptionsError } from '../errors';
import { CLUSTER_OPTION_KEYS, checkConnectionOptions, REDIS_OPTION_KEYS } from './connection-options';
import { resolveModuleOptions } from './resolve-options';

/** The option names an interface of the installed ioredis declares (its top-level members). */
function declaredKeys(file: string, start: RegExp): string[] {
  const text = readFileSync(join(require.resolve('ioredis'), '..', file), 'utf8');
  const from = text.search(start);
  const body = text.slice(from, text.indexOf('\n}', from));
  return [...body.matchAll(/^ {4}(\w+)\??:/gm)].map((m) => m[1]);
}

function errorOf(connection: unknown): InvalidOptionsError {
  try {
    checkConnectionOptions(connection);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    return error as InvalidOptionsError;
  }
  throw new Error(`accepted ${JSON.stringify(connection)}`);
}

describe('checkConnectionOptions', () => {
  it('knows exactly the options of the installed ioredis', () => {
    const redis = [
      ...declaredKeys('redis/RedisOptions.d.ts', /export interface CommonRedisOptions/),
      ...declaredKeys('utils/Commander.d.ts', /export interface CommanderOptions/),
      ...declaredKeys('connectors/SentinelConnector/index.d.ts', /export interface SentinelConnectionOptions/),
      ...declaredKeys('connectors/StandaloneConnector.d.ts', /export declare type StandaloneConnectionOptions/),
      'port', 'host', 'family', 'path', // net options picked in StandaloneConnectionOptions
    ];
    expect([...new Set(REDIS_OPTION_KEYS)].sort()).toEqual([...new Set(redis)].sort());
    const cluster = [
      ...declaredKeys('cluster/ClusterOptions.d.ts', /export interface ClusterOptions/),
      ...declaredKeys('utils/Commander.d.ts', /export interface CommanderOptions/),
    ];
    expect([...CLUSTER_OPTION_KEYS].sort()).toEqual([...new Set(cluster)].sort());
  });

  it.each([
    [{ host: '127.0.0.1', prot: 6380 }, 'connection.prot', /did you mean port\?/],
    [{ url: 'redis://127.0.0.1:6380' }, 'connection.url', /give a URL as the connection itself/],
    [{ sentinel: [{ host: 'a', port: 26379 }], name: 'm' }, 'connection.sentinel', /did you mean sentinels\?/],
    [{ sentinels: [{ host: 'a', prot: 26379 }], name: 'm' }, 'connection.sentinels[0].prot', /did you mean port\?/],
    [{ sentinels: [{ host: 'a', port: 26379 }] }, 'connection.name', /required with sentinels/],
    [{ sentinels: [] , name: 'm' }, 'connection.sentinels', /non-empty/],
    [{ cluster: [{ hots: 'a', port: 7000 }] }, 'connection.cluster[0].hots', /did you mean host\?/],
    [{ cluster: [{ host: 'a', port: 70000 }] }, 'connection.cluster[0].port', /1 to 65535, got 70000/],
    [{ cluster: ['a:7000'], clusterOption: {} }, 'connection.clusterOption', /did you mean clusterOptions\?/],
    [{ cluster: ['a:7000'], clusterOptions: { scaleRead: 'slave' } }, 'connection.clusterOptions.scaleRead', /did you mean scaleReads\?/],
    [{ cluster: ['a:7000'], clusterOptions: { redisOptions: { pasword: 'x' } } }, 'connection.clusterOptions.redisOptions.pasword', /did you mean password\?/],
    [{ cluster: ['a:7000'], clusterOptions: { redisOptions: { db: 2 } } }, 'connection.clusterOptions.redisOptions.db', /only database 0/],
    [{ cluster: ['a:7000'], clusterOptions: { redisOptions: { port: 1 } } }, 'connection.clusterOptions.redisOptions.port', /set by the cluster client/],
    [{ port: 0 }, 'connection.port', /1 to 65535, got 0/],
    [{ port: 6379.5 }, 'connection.port', /got 6379.5/],
    [{ port: Number.NaN }, 'connection.port', /got NaN/],
    [{ port: 'abc' }, 'connection.port', /got "abc"/],
    [{ db: -1 }, 'connection.db', /from 0/],
    [{ db: Infinity }, 'connection.db', /got Infinity/],
    [{ host: '' }, 'connection.host', /non-empty/],
    [{ family: 5 }, 'connection.family', /0, 4 or 6/],
    [{ connectTimeout: -1 }, 'connection.connectTimeout', /from 0/],
    [{ commandTimeout: Number.NaN }, 'connection.commandTimeout', /got NaN/],
    [{ retryStrategy: 5 }, 'connection.retryStrategy', /function/],
    [{ maxRetriesPerRequest: -1 }, 'connection.maxRetriesPerRequest', /or null/],
    [{ enableReadyCheck: 'no' }, 'connection.enableReadyCheck', /true or false/],
    [{ db: 3, enableReadyCheck: false }, 'connection.enableReadyCheck', /must stay true with a database other than 0/],
    [{ keyPrefix: 'app:' }, 'connection.keyPrefix', /module's keyPrefix/],
    [{ monitor: true }, 'connection.monitor', /not supported/],
    [{ cluster: ['a:7000'], clusterOptions: { keyPrefix: 'app:' } }, 'connection.clusterOptions.keyPrefix', /module's keyPrefix/],
    ['redis://127.0.0.1:6379/abc', 'connection', /database number.*got "abc"/],
    ['redis://127.0.0.1:6379/1/2', 'connection', /database number/],
    ['redis://127.0.0.1:0', 'connection (the URL\'s port)', /got "0"/],
    ['redis://127.0.0.1:99999', 'connection', /not a valid URL/],
    ['redis://127.0.0.1:6379?prot=1', "connection (the URL's ?prot)", /did you mean port\?/],
    ['redis://127.0.0.1:6379?db=abc', "connection (the URL's ?db)", /got "abc"/],
    [{}, 'connection', /names no server/],
    [{ host: undefined, port: undefined, password: 'pw' }, 'connection', /names no server/],
    ['http://127.0.0.1:6379', 'connection', /redis:\/\/ or rediss:\/\//],
  ])('refuses %j naming %s', (connection, option, message) => {
    const error = errorOf(connection);
    expect(error.option).toBe(option);
    expect(error.message).toMatch(message);
  });

  it('refuses an ioredis client in place of options', () => {
    const { Redis } = require('ioredis') as typeof import('ioredis');
    const client = new Redis({ lazyConnect: true });
    try {
      expect(errorOf(client).message).toMatch(/must be options, not a client/);
    } finally {
      client.disconnect();
    }
  });

  it('never quotes a URL (it may hold a password)', () => {
    expect(errorOf('redis://:s3cret@127.0.0.1:99999').message).not.toContain('s3cret');
    expect(errorOf('redis://:s3cret@127.0.0.1:6379/x').message).not.toContain('s3cret');
  });

  it.each([
    ['redis://127.0.0.1:6379'],
    ['rediss://user:pw@example.com/3'],
    ['redis://127.0.0.1:6379/0?family=4'],
    [{ host: '127.0.0.1', port: 6380, db: 3, password: 'pw', tls: {}, retryStrategy: () => 100 }],
    [{ host: 'h', port: '6380', db: '2' }],
    [{ path: '/tmp/redis.sock' }],
    [{ host: 'h', db: 0, enableReadyCheck: false }],
    [{ port: 6380, tls: { rejectUnauthorized: false, ca: 'x' }, reconnectOnError: null, maxRetriesPerRequest: null }],
    [{ sentinels: [{ host: 'a', port: 26379 }], name: 'mymaster', natMap: { 'a:1': { host: 'b', port: 2 } }, role: 'slave' }],
    [{ cluster: ['127.0.0.1:7000', 7001, { host: 'h', port: 7002 }] }],
    [{ cluster: [{ host: 'h' }], clusterOptions: { scaleReads: () => null, natMap: {}, redisOptions: { password: 'pw', tls: {} } } }],
  ])('accepts %j', (connection) => {
    expect(() => checkConnectionOptions(connection)).not.toThrow();
  });

  it('is what resolveModuleOptions checks', () => {
    expect(() => resolveModuleOptions({ connection: { prot: 6380 } as never })).toThrow(/"connection.prot": unknown option of ioredis \(did you mean port\?\)/);
  });
});
