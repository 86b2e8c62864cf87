-- The replies of state-changing calls, kept for a repeat of the call (a command re-sent after a lost reply,
-- a retried RPC): a HASH request id -> reply per bucket of request ids (`requestBucket` in request-id.ts),
-- which a script declares. No key per call: a busy slot holds a few dozen buckets, not a key per submit.
-- NOTE: a bucket often exists on both sides of a migrating slot, so a script keeping a reply could run on
-- the importing node after an ASK, where a durable call's WAIT (sent to the node the client maps the slot
-- to) would confirm nothing of it: the mark below makes these scripts declare the slot guard (see
-- slotGuardKey in lua-script.ts), so they wait for the migration's end instead.
--- @slot-guard

-- The reply an earlier call with this request id left, or false.
local function earlierReply(bucket, requestId)
  return redis.call('HGET', bucket, requestId)
end

-- Keeps this call's reply for at least `ttl` ms: the bucket lives while any reply in it may be asked for
-- (never shortened by a call that keeps its reply for less).
local function keepReply(bucket, requestId, reply, ttl)
  redis.call('HSET', bucket, requestId, reply)
  ttl = tonumber(ttl)
  if redis.call('PTTL', bucket) < ttl then redis.call('PEXPIRE', bucket, ttl) end
end
