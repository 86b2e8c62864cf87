import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, AppConfig } from '../app.config';
import { Account, fromCents, LedgerEntry, LedgerEventResult, LedgerEventType, MAX_LAST_EVENTS, MAX_SEEN_EVENT_IDS } from './ledger';

/**
 * Applies one event to an account, atomically and at most once per event id.
 * KEYS[1] account hash (balance in cents, seq, applied, rejected, lastEventId, updatedAt),
 * KEYS[2] event log (list of JSON entries, oldest first, capped), KEYS[3] seen event ids (zset id -> seq, capped).
 * ARGV eventId, type (deposit|withdraw), amount in cents (positive integer), time (ISO), log cap, seen cap,
 * machine id and partition epoch of the runner (JSON strings, for the log only).
 * Returns { 'applied' | 'rejected' | 'duplicate', balance in cents after, seq of the event }.
 * A withdraw larger than the balance is 'rejected': logged, balance unchanged. A seen event id changes
 * nothing ('duplicate': a redelivery, the queue is at-least-once).
 */
const APPLY_LUA = `
local seen = redis.call('ZSCORE', KEYS[3], ARGV[1])
if seen then
  return { 'duplicate', redis.call('HGET', KEYS[1], 'balance') or '0', seen }
end
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
local result = 'applied'
if ARGV[2] == 'deposit' then
  redis.call('HINCRBY', KEYS[1], 'balance', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'applied', 1)
elseif balance >= tonumber(ARGV[3]) then
  redis.call('HINCRBY', KEYS[1], 'balance', '-' .. ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'applied', 1)
else
  result = 'rejected'
  redis.call('HSETNX', KEYS[1], 'balance', '0')
  redis.call('HINCRBY', KEYS[1], 'rejected', 1)
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('HSET', KEYS[1], 'lastEventId', ARGV[1], 'updatedAt', ARGV[4])
local after = redis.call('HGET', KEYS[1], 'balance')
redis.call('RPUSH', KEYS[2], '{"eventId":' .. cjson.encode(ARGV[1]) .. ',"type":"' .. ARGV[2] .. '","amountCents":' .. ARGV[3]
  .. ',"result":"' .. result .. '","balanceCents":' .. after .. ',"seq":' .. seq .. ',"at":"' .. ARGV[4]
  .. '","machine":' .. ARGV[7] .. ',"epoch":' .. ARGV[8] .. '}')
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[5]), -1)
redis.call('ZADD', KEYS[3], seq, ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -tonumber(ARGV[6]) - 1)
return { result, after, seq }
`;

type LedgerRedis = Redis & {
  ledgerApply(hash: string, log: string, seen: string, ...args: string[]): Promise<[string, string, string | number]>;
};

export interface ApplyResult {
  result: LedgerEventResult | 'duplicate';
  /** Balance after the event (for a duplicate: the current balance). */
  balance: number;
  seq: number;
}

interface StoredEntry {
  eventId: string;
  type: LedgerEventType;
  amountCents: number;
  result: LedgerEventResult;
  balanceCents: number;
  seq: number;
  at: string;
  machine: string;
  epoch: number | null;
}

/**
 * Accounts in Redis, on a connection of their own: the hash `<keyPrefix>:account:{<id>}` (one slot per account), its event log
 * `...:events` and its seen event ids `...:seen`. The three keys of an account are used together in one
 * script; the hash tag keeps them in one cluster slot.
 */
@Injectable()
export class LedgerStore implements OnApplicationShutdown {
  private readonly logger = new Logger(LedgerStore.name);
  private readonly redis: LedgerRedis;
  private lastError = '';

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const redis = new Redis(config.redisUrl, { connectionName: 'ledger', maxRetriesPerRequest: 3 });
    redis.defineCommand('ledgerApply', { numberOfKeys: 3, lua: APPLY_LUA });
    redis.on('error', (error: Error) => {
      if (error.message !== this.lastError) this.logger.warn(`Redis: ${error.message}`);
      this.lastError = error.message;
    });
    redis.on('ready', () => (this.lastError = ''));
    this.redis = redis as LedgerRedis;
  }

  key(accountId: string): string {
    return `${this.config.keyPrefix}:account:{${accountId}}`;
  }

  /** Applies an event once (see APPLY_LUA). */
  async apply(
    accountId: string, eventId: string, type: LedgerEventType, amountCents: number, by: { machine: string; epoch?: number },
  ): Promise<ApplyResult> {
    const key = this.key(accountId);
    const [result, balance, seq] = await this.redis.ledgerApply(
      key, `${key}:events`, `${key}:seen`,
      eventId, type, String(amountCents), new Date().toISOString(), String(MAX_LAST_EVENTS), String(MAX_SEEN_EVENT_IDS),
      JSON.stringify(by.machine), JSON.stringify(by.epoch ?? null),
    );
    return { result: result as ApplyResult['result'], balance: fromCents(Number(balance)), seq: Number(seq) };
  }

  /** The account, or null when no event was processed for it yet. */
  async get(accountId: string): Promise<Account | null> {
    const key = this.key(accountId);
    const reply = await this.redis.multi().hgetall(key).lrange(`${key}:events`, 0, -1).exec();
    if (!reply) throw new Error('Reading the account was aborted');
    for (const [error] of reply) if (error) throw error;
    const hash = reply[0][1] as Record<string, string>;
    const log = reply[1][1] as string[];
    if (!hash.seq) return null;
    return {
      id: accountId,
      balance: fromCents(Number(hash.balance ?? 0)),
      applied: Number(hash.applied ?? 0),
      rejected: Number(hash.rejected ?? 0),
      lastEvents: log.map((json): LedgerEntry => {
        const e = JSON.parse(json) as StoredEntry;
        return {
          eventId: e.eventId, type: e.type, amount: fromCents(e.amountCents), result: e.result,
          balance: fromCents(e.balanceCents), seq: e.seq, at: e.at, machine: e.machine, epoch: e.epoch,
        };
      }),
    };
  }

  async onApplicationShutdown(): Promise<void> {
    try {
      await Promise.race([this.redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } catch {
      // already disconnected
    }
    this.redis.disconnect();
  }
}
