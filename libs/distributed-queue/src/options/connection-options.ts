import { InvalidOptionsError } from '../errors';
import { quote } from '../errors/quote';
import { didYouMean } from './suggest';

// NOTE: the keys ioredis 5 reads, from its type declarations: CommonRedisOptions and CommanderOptions
// (redis/RedisOptions.d.ts), SentinelConnectionOptions and StandaloneConnectionOptions (connectors/). Of
// net/tls options ioredis passes port, host, family and path to net.connect, and `tls` (an object, true or
// a profile name) to tls.connect as it is: its content is not checked here.
/** Options of `new Redis({...})`. */
export const REDIS_OPTION_KEYS: readonly string[] = [
  // CommonRedisOptions
  'Connector', 'retryStrategy', 'commandTimeout', 'blockingTimeout', 'blockingTimeoutGrace', 'socketTimeout', 'keepAlive',
  'noDelay', 'connectionName', 'disableClientInfo', 'clientInfoTag', 'username', 'password', 'db', 'autoResubscribe',
  'autoResendUnfulfilledCommands', 'reconnectOnError', 'readOnly', 'stringNumbers', 'connectTimeout', 'monitor',
  'maxRetriesPerRequest', 'maxLoadingRetryTime', 'enableAutoPipelining', 'autoPipeliningIgnoredCommands', 'offlineQueue',
  'commandQueue', 'enableOfflineQueue', 'enableReadyCheck', 'lazyConnect', 'scripts',
  // CommanderOptions
  'keyPrefix', 'showFriendlyErrorStack',
  // SentinelConnectionOptions
  'name', 'role', 'tls', 'sentinelUsername', 'sentinelPassword', 'sentinels', 'sentinelRetryStrategy',
  'sentinelReconnectStrategy', 'preferredSlaves', 'disconnectTimeout', 'sentinelCommandTimeout', 'enableTLSForSentinelMode',
  'sentinelTLS', 'natMap', 'updateSentinels', 'sentinelMaxConnections', 'failoverDetector',
  // StandaloneConnectionOptions (net options)
  'port', 'host', 'family', 'path',
];

/** What ClusterOptions.redisOptions leaves out (the cluster client sets them per node). */
const CLUSTER_SET_KEYS = ['port', 'host', 'path', 'sentinels', 'retryStrategy', 'enableOfflineQueue', 'readOnly'];

/** Options of `clusterOptions.redisOptions` (ioredis' `Omit<RedisOptions, ...>`). */
export const CLUSTER_REDIS_OPTION_KEYS: readonly string[] = REDIS_OPTION_KEYS.filter((key) => !CLUSTER_SET_KEYS.includes(key));

/** Options of `new Cluster(nodes, {...})` (cluster/ClusterOptions.d.ts with CommanderOptions). */
export const CLUSTER_OPTION_KEYS: readonly string[] = [
  'clusterRetryStrategy', 'enableOfflineQueue', 'enableReadyCheck', 'scaleReads', 'maxRedirections', 'retryDelayOnFailover',
  'retryDelayOnClusterDown', 'retryDelayOnTryAgain', 'retryDelayOnMoved', 'slotsRefreshTimeout', 'slotsRefreshInterval',
  'shardedSubscribers', 'clusterNodeRetryStrategy', 'redisOptions', 'lazyConnect', 'useSRVRecords', 'resolveSrv', 'dnsLookup',
  'natMap', 'enableAutoPipelining', 'autoPipeliningIgnoredCommands', 'scripts', 'keyPrefix', 'showFriendlyErrorStack',
];

/** Keys of the object form `{ cluster, clusterOptions }`. */
const CLUSTER_CONNECTION_KEYS = ['cluster', 'clusterOptions'];
/** Keys of a cluster seed node `{ host, port }`. */
const NODE_KEYS = ['host', 'port'];
/** Keys of a Sentinel address. */
const SENTINEL_KEYS = ['host', 'port', 'family'];

/** Options ioredis has that this library does not support, and why. */
const UNSUPPORTED: Record<string, string> = {
  keyPrefix: "is not supported: set the module's keyPrefix option instead (the library builds some key names itself)",
  monitor: 'is not supported: a connection in monitor mode runs no other commands',
};

/** Durations and counts ioredis takes in milliseconds (or as a count): finite numbers from 0. */
const NON_NEGATIVE = [
  'commandTimeout', 'blockingTimeout', 'blockingTimeoutGrace', 'socketTimeout', 'keepAlive', 'connectTimeout',
  'maxLoadingRetryTime', 'disconnectTimeout', 'sentinelCommandTimeout', 'sentinelMaxConnections',
  'maxRedirections', 'retryDelayOnFailover', 'retryDelayOnClusterDown', 'retryDelayOnTryAgain', 'retryDelayOnMoved',
  'slotsRefreshTimeout', 'slotsRefreshInterval',
];
/** Options that are a function (or null for none). */
const FUNCTIONS = [
  'retryStrategy', 'reconnectOnError', 'sentinelRetryStrategy', 'sentinelReconnectStrategy', 'clusterRetryStrategy',
  'clusterNodeRetryStrategy', 'resolveSrv', 'dnsLookup',
];
const BOOLEANS = [
  'noDelay', 'disableClientInfo', 'autoResubscribe', 'autoResendUnfulfilledCommands', 'readOnly', 'stringNumbers',
  'enableAutoPipelining', 'enableOfflineQueue', 'enableReadyCheck', 'lazyConnect', 'enableTLSForSentinelMode',
  'updateSentinels', 'failoverDetector', 'showFriendlyErrorStack', 'useSRVRecords', 'shardedSubscribers',
];

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** An integer given as a number or as a string of digits (ioredis parses both), else undefined. */
function integerOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^\d{1,10}$/.test(value)) return Number(value);
  return undefined;
}

function checkKnownKeys(value: Record<string, unknown>, known: readonly string[], path: string, what: string): void {
  for (const key of Object.keys(value)) {
    if (UNSUPPORTED[key] && known.includes(key)) throw new InvalidOptionsError(`${path}.${key}`, UNSUPPORTED[key]);
    if (known.includes(key)) continue;
    if (key === 'url') {
      throw new InvalidOptionsError(`${path}.url`, "unknown option: give a URL as the connection itself (connection: 'redis://host:6379/0')");
    }
    throw new InvalidOptionsError(`${path}.${key}`, `unknown option of ${what}${didYouMean(key, known)}`);
  }
}

/** Throws unless `value` is undefined or an integer in [min, max] (digits in a string count). */
function checkInteger(value: unknown, path: string, min: number, max: number): void {
  if (value === undefined) return;
  const n = integerOf(value);
  if (n === undefined || n < min || n > max) {
    throw new InvalidOptionsError(path, `must be an integer from ${min} to ${max}, got ${quote(value)}`);
  }
}

function checkPort(value: unknown, path: string): void {
  checkInteger(value, path, 1, 65535);
}

function checkHost(value: unknown, path: string): void {
  if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
    throw new InvalidOptionsError(path, `must be a non-empty host name or address, got ${quote(value)}`);
  }
}

/** Value checks shared by Redis options and cluster options (each key only where it exists). */
function checkValues(options: Record<string, unknown>, path: string): void {
  for (const key of NON_NEGATIVE) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) {
      throw new InvalidOptionsError(`${path}.${key}`, `must be a finite number from 0, got ${quote(value)}`);
    }
  }
  for (const key of FUNCTIONS) {
    const value = options[key];
    if (value !== undefined && value !== null && typeof value !== 'function') {
      throw new InvalidOptionsError(`${path}.${key}`, `must be a function (or null), got ${quote(value)}`);
    }
  }
  for (const key of BOOLEANS) {
    const value = options[key];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new InvalidOptionsError(`${path}.${key}`, `must be true or false, got ${quote(value)}`);
    }
  }
  const retries = options.maxRetriesPerRequest;
  if (retries !== undefined && retries !== null && (typeof retries !== 'number' || !Number.isInteger(retries) || retries < 0)) {
    throw new InvalidOptionsError(`${path}.maxRetriesPerRequest`, `must be an integer from 0, or null for no limit, got ${quote(retries)}`);
  }
}

/** Checks ioredis options at `path` ('connection' or 'connection.clusterOptions.redisOptions'). */
function checkRedisOptions(options: Record<string, unknown>, path: string, inCluster: boolean): void {
  if (inCluster) {
    for (const key of CLUSTER_SET_KEYS) {
      if (key in options) throw new InvalidOptionsError(`${path}.${key}`, 'is set by the cluster client for each node: not an option here');
    }
  }
  checkKnownKeys(options, inCluster ? CLUSTER_REDIS_OPTION_KEYS : REDIS_OPTION_KEYS, path, 'ioredis');
  checkHost(options.host, `${path}.host`);
  checkPort(options.port, `${path}.port`);
  if (options.path !== undefined && (typeof options.path !== 'string' || options.path.length === 0)) {
    throw new InvalidOptionsError(`${path}.path`, `must be the path of a Unix socket, got ${quote(options.path)}`);
  }
  if (inCluster) {
    if (options.db !== undefined && integerOf(options.db) !== 0) {
      throw new InvalidOptionsError(`${path}.db`, `must be 0 (or unset): Redis Cluster has only database 0, got ${quote(options.db)}`);
    }
  } else {
    checkInteger(options.db, `${path}.db`, 0, 2 ** 31 - 1);
    // NOTE: without the ready check ioredis reads a connection whose SELECT failed as ready (see connection-checks).
    if (options.enableReadyCheck === false && integerOf(options.db)) {
      throw new InvalidOptionsError(`${path}.enableReadyCheck`, `must stay true with a database other than 0 (db ${quote(options.db)}): without it a refused SELECT reads as connected`);
    }
  }
  if (options.family !== undefined && ![0, 4, 6].includes(options.family as number)) {
    throw new InvalidOptionsError(`${path}.family`, `must be 0, 4 or 6, got ${quote(options.family)}`);
  }
  if (options.role !== undefined && options.role !== 'master' && options.role !== 'slave') {
    throw new InvalidOptionsError(`${path}.role`, `must be 'master' or 'slave', got ${quote(options.role)}`);
  }
  checkValues(options, path);
  if (options.sentinels !== undefined && options.sentinels !== null) checkSentinels(options, path);
}

function checkSentinels(options: Record<string, unknown>, path: string): void {
  const sentinels = options.sentinels;
  if (!Array.isArray(sentinels) || sentinels.length === 0) {
    throw new InvalidOptionsError(`${path}.sentinels`, 'must be a non-empty list of { host, port }');
  }
  sentinels.forEach((sentinel: unknown, i) => {
    const at = `${path}.sentinels[${i}]`;
    if (!isObject(sentinel)) throw new InvalidOptionsError(at, `must be { host, port }, got ${quote(sentinel)}`);
    checkKnownKeys(sentinel, SENTINEL_KEYS, at, 'a Sentinel address');
    checkHost(sentinel.host, `${at}.host`);
    checkPort(sentinel.port, `${at}.port`);
  });
  if (typeof options.name !== 'string' || options.name.length === 0) {
    throw new InvalidOptionsError(`${path}.name`, `is required with sentinels: the name of the master group, got ${quote(options.name)}`);
  }
}

function checkClusterNode(node: unknown, path: string): void {
  if (typeof node === 'number') return checkPort(node, path);
  if (typeof node === 'string') {
    if (node.length === 0) throw new InvalidOptionsError(path, 'must not be empty');
    return;
  }
  if (!isObject(node)) throw new InvalidOptionsError(path, `must be { host, port }, "host:port" or a port, got ${quote(node)}`);
  checkKnownKeys(node, NODE_KEYS, path, 'a cluster node');
  if (node.host === undefined && node.port === undefined) throw new InvalidOptionsError(path, 'needs a host or a port');
  checkHost(node.host, `${path}.host`);
  checkPort(node.port, `${path}.port`);
}

function checkCluster(connection: Record<string, unknown>): void {
  checkKnownKeys(connection, CLUSTER_CONNECTION_KEYS, 'connection', '{ cluster, clusterOptions }');
  const nodes = connection.cluster;
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new InvalidOptionsError('connection.cluster', 'must be a non-empty list of nodes');
  }
  nodes.forEach((node: unknown, i) => checkClusterNode(node, `connection.cluster[${i}]`));
  const clusterOptions = connection.clusterOptions;
  if (clusterOptions === undefined) return;
  if (!isObject(clusterOptions)) throw new InvalidOptionsError('connection.clusterOptions', 'must be an object of ioredis ClusterOptions');
  checkKnownKeys(clusterOptions, CLUSTER_OPTION_KEYS, 'connection.clusterOptions', 'ioredis ClusterOptions');
  checkValues(clusterOptions, 'connection.clusterOptions');
  const redisOptions = clusterOptions.redisOptions;
  if (redisOptions === undefined) return;
  if (!isObject(redisOptions)) throw new InvalidOptionsError('connection.clusterOptions.redisOptions', 'must be an object of ioredis options');
  checkRedisOptions(redisOptions, 'connection.clusterOptions.redisOptions', true);
}

/** Checks a `redis://` or `rediss://` URL: host, port, database path and query options. Never quotes it (password). */
function checkUrl(url: string): void {
  if (!/^rediss?:\/\//.test(url)) throw new InvalidOptionsError('connection', 'a URL must start with redis:// or rediss://');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidOptionsError('connection', 'is not a valid URL (redis://[[user]:password@]host[:port][/db])');
  }
  if (!parsed.hostname) throw new InvalidOptionsError('connection', 'the URL names no host');
  if (parsed.port !== '') checkPort(parsed.port, 'connection (the URL\'s port)');
  if (parsed.pathname && parsed.pathname !== '/') {
    const db = parsed.pathname.slice(1);
    if (!/^\d{1,10}$/.test(db) || Number(db) > 2 ** 31 - 1) {
      throw new InvalidOptionsError('connection', `the URL's path must be a database number (/0, /1, ...), got ${quote(decodeURIComponent(db))}`);
    }
  }
  for (const [key, value] of parsed.searchParams.entries()) {
    if (key === 'db' || key === 'port') checkInteger(value, `connection (the URL's ?${key})`, key === 'db' ? 0 : 1, key === 'db' ? 2 ** 31 - 1 : 65535);
    if (UNSUPPORTED[key]) throw new InvalidOptionsError(`connection (the URL's ?${key})`, UNSUPPORTED[key]);
    if (!REDIS_OPTION_KEYS.includes(key)) {
      throw new InvalidOptionsError(`connection (the URL's ?${key})`, `unknown option of ioredis${didYouMean(key, REDIS_OPTION_KEYS)}`);
    }
  }
}

/**
 * Checks `connection` without connecting: a URL, ioredis options (standalone or Sentinel) or
 * `{ cluster, clusterOptions }`. Unknown keys (against the options of the installed ioredis) and obvious
 * value errors throw `InvalidOptionsError` naming the key path, with the closest known key when one is near.
 */
export function checkConnectionOptions(connection: unknown): void {
  if (connection === undefined) return;
  if (typeof connection === 'string') return checkUrl(connection);
  if (!isObject(connection)) {
    throw new InvalidOptionsError('connection', 'must be a URL, ioredis options or { cluster: [...] }');
  }
  if (typeof connection.sendCommand === 'function') {
    throw new InvalidOptionsError('connection', 'must be options, not a client: the library opens its own connections (a URL, ioredis options or { cluster: [...] })');
  }
  if ('cluster' in connection) return checkCluster(connection);
  checkRedisOptions(connection, 'connection', false);
  const where = ['host', 'port', 'path', 'sentinels', 'Connector'].filter((key) => connection[key] !== undefined && connection[key] !== null);
  if (where.length === 0) {
    // NOTE: ioredis would connect to its default 127.0.0.1:6379; an object without them is most often unset variables.
    throw new InvalidOptionsError('connection', 'names no server: give host (and port), path or sentinels, or leave connection out for redis://127.0.0.1:6379');
  }
}
