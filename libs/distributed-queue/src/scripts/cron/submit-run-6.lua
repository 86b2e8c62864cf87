--[[
  Distributed cron: submits the run of one tick of a schedule, once. The ticks whose run was submitted are
  remembered next to the run's type (same Cluster slot), in the same step as the submit: a tick handled
  again (its tick task retried after a crash between this submit and its ack) finds its tick there and
  submits nothing, even when the first run already finished (a finished id no longer blocks a submit).
  The set keeps the last ARGV[6] ticks of the schedule (older ones, out of reach of any retry, are refused
  as submitted) and expires ARGV[7] ms after the last submit: O(log n) per call, at most one entry removed.
  KEYS[1] run type waiting  KEYS[2] its jobs  KEYS[3] its sequence  KEYS[4] its event stream  KEYS[5] its
  recorded flag  KEYS[6] ticks submitted (ZSET tick ms -> tick ms) of this schedule
  ARGV[1] run type's events channel  ARGV[2] event stream length (0: none)  ARGV[3] run task id
  ARGV[4] tick (ms; the run is due then)  ARGV[5] payload json  ARGV[6] ticks kept  ARGV[7] their TTL (ms)
  Returns: 1 submitted, 0 submitted before (or too old), 2 its id exists (waiting or running; not added)
]]
--- @include "includes/now-ms"
--- @include "includes/head-score"
--- @include "includes/wake-if-earlier"
--- @include "includes/seq-tag"
--- @include "includes/add-task"
--- @include "includes/event-log"

local submitted, tick, keep = KEYS[6], tonumber(ARGV[4]), tonumber(ARGV[6])
if redis.call('ZSCORE', submitted, ARGV[4]) then return 0 end
if redis.call('ZCARD', submitted) >= keep then
  local oldest = redis.call('ZRANGE', submitted, 0, 0, 'WITHSCORES')
  if tick < tonumber(oldest[2]) then return 0 end
  -- NOTE: ZRANGE + ZREM of one member rather than ZREMRANGEBYRANK: the commands of the documented ACL rule.
  redis.call('ZREM', submitted, oldest[1])
end
redis.call('ZADD', submitted, tick, ARGV[4])
redis.call('PEXPIRE', submitted, tonumber(ARGV[7]))
local now = nowMs()
if addTask(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[3], tick, ARGV[5], now) == 0 then return 2 end
if tonumber(ARGV[2]) > 0 and redis.call('EXISTS', KEYS[5]) == 1 then
  logEvent(KEYS[4], tonumber(ARGV[2]), 'submitted',
    { 'ids', cjson.encode({ ARGV[3] }), 'due', cjson.encode({ tick }), 'd', cjson.encode({ math.max(0, tick - now) }), 'b', cjson.encode({ ARGV[5] }) })
end
return 1
